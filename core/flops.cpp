#include "core/flops.h"

#include <algorithm>

namespace attn {
namespace {

const char* const kWhat = "the FLOP count";

std::uint64_t u(int x) { return static_cast<std::uint64_t>(x); }

}  // namespace

std::uint64_t attention_flops_per_pair(const ModelShape& m) {
  const bool mla = m.variant == Variant::Mla;
  // What each head's score dot product reads, and what its weighted sum accumulates.
  const std::uint64_t scored = mla ? u(m.latent_dim) + u(m.rope_dim) : key_dim(m);
  const std::uint64_t summed = mla ? u(m.latent_dim) : u(m.head_dim);
  return checked_add(checked_product(kWhat, 2, u(m.heads), scored), checked_product(kWhat, 2, u(m.heads), summed),
                     kWhat);
}

std::uint64_t projection_flops_per_token(const ModelShape& m) {
  return checked_mul(2, stored_floats_per_layer(m, 0).weights, kWhat);
}

std::uint64_t attention_pairs(std::uint64_t n, bool causal) {
  if (!causal) return checked_mul(n, n, kWhat);
  // n(n+1)/2 without overflowing early: halve whichever factor is even.
  return n % 2 == 0 ? checked_mul(n / 2, n + 1, kWhat) : checked_mul(n, n / 2 + 1, kWhat);
}

std::uint64_t prefill_attention_flops(const ModelShape& m, std::uint64_t n, bool causal) {
  return checked_mul(attention_flops_per_pair(m), attention_pairs(n, causal), kWhat);
}

std::uint64_t prefill_flops(const ModelShape& m, std::uint64_t n, bool causal) {
  const std::uint64_t projections = checked_mul(n, projection_flops_per_token(m), kWhat);
  return checked_add(prefill_attention_flops(m, n, causal), projections, kWhat);
}

std::uint64_t decode_step_flops_cached(const ModelShape& m, std::uint64_t L) {
  return checked_add(flops_vanilla(attention_flops_per_pair(m), L), projection_flops_per_token(m), kWhat);
}

std::uint64_t decode_step_flops_uncached(const ModelShape& m, std::uint64_t L) { return prefill_flops(m, L, true); }

std::uint64_t indexer_flops_per_pair(std::uint64_t indexer_heads, std::uint64_t indexer_dim) {
  return checked_product(kWhat, 2, indexer_heads, indexer_dim);
}

std::uint64_t flops_vanilla(std::uint64_t c_attn, std::uint64_t L) { return checked_mul(c_attn, L, kWhat); }

std::uint64_t flops_dsa(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t L, std::uint64_t k) {
  return checked_add(checked_mul(c_idx, L, kWhat), checked_mul(c_attn, std::min(k, L), kWhat), kWhat);
}

std::optional<std::uint64_t> dsa_break_even(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k) {
  if (c_idx >= c_attn) return std::nullopt;
  return checked_mul(k, c_attn, kWhat) / (c_attn - c_idx) + 1;  // the first whole L past the equality
}

}  // namespace attn
