#include "core/memory.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr std::array<std::pair<Dtype, std::string_view>, 6> kDtypes{{{Dtype::FP32, "fp32"},
                                                                     {Dtype::FP16, "fp16"},
                                                                     {Dtype::BF16, "bf16"},
                                                                     {Dtype::FP8, "fp8"},
                                                                     {Dtype::INT8, "int8"},
                                                                     {Dtype::INT4, "int4"}}};

std::string dashed(std::string_view key) {
  std::string s(key);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::uint64_t to_u64(int x) { return static_cast<std::uint64_t>(x); }

// Bits round up to whole bytes; only int4 with an odd count of numbers leaves a remainder.
std::uint64_t bytes_of(std::uint64_t bits) { return bits / 8 + (bits % 8 != 0 ? 1 : 0); }

void check_variant_heads(const ModelShape& m, const ShapeFieldNames& n) {
  const std::string H = std::to_string(m.heads), G = std::to_string(m.kv_heads);
  const std::string variant(to_string(m.variant));
  switch (m.variant) {
    case Variant::Mha:
    case Variant::Mla:
      if (m.kv_heads != m.heads)
        throw InputError(n.field("kv_heads"), "must equal " + n.ref("heads") + " (" + H + ") for " + variant +
                                                  ", one key/value head per query head, but found " + G);
      break;
    case Variant::Mqa:
      if (m.kv_heads != 1) throw InputError(n.field("kv_heads"), "must be 1 for mqa but found " + G);
      break;
    case Variant::Gqa:
      check_range(m.kv_heads, 1, kv_limits::kMaxHeads, n.field("kv_heads"));
      if (m.heads % m.kv_heads != 0)
        throw InputError(n.field("kv_heads"), "must divide " + n.ref("heads") + " (" + H + ") but found " + G);
      break;
  }
}

void check_latent(const ModelShape& m, const ShapeFieldNames& n) {
  if (m.variant == Variant::Mla) {
    if (m.latent_dim < 1)
      throw InputError(n.field("latent_dim"), "must be >= 1 for mla, the width of the cached latent (found " +
                                                  std::to_string(m.latent_dim) + ")");
    check_range(m.latent_dim, 1, kv_limits::kMaxLatentDim, n.field("latent_dim"));
    check_range(m.rope_dim, 0, kv_limits::kMaxRopeDim, n.field("rope_dim"));
    // The same rule as a scenario's rope_dim: 0 (no RoPE key) or pairs.
    if (m.rope_dim % 2 != 0)
      throw InputError(n.field("rope_dim"),
                       "rope turns pairs of dimensions, so it must be even (found " + std::to_string(m.rope_dim) + ")");
    return;
  }
  const std::string why = "only used by mla (this is " + std::string(to_string(m.variant)) + ")";
  if (m.latent_dim != 0) throw InputError(n.field("latent_dim"), why);
  if (m.rope_dim != 0) throw InputError(n.field("rope_dim"), why);
}

void check_window(const ModelShape& m, const ShapeFieldNames& n) {
  check_range(m.window, 0, kv_limits::kMaxTokens, n.field("window"));
  if (m.window == 0) {
    const std::pair<const char*, int> pattern[] = {{"local_layers", m.local_layers},
                                                   {"global_layers", m.global_layers}};
    for (const auto& [key, value] : pattern)
      if (value != 0) throw InputError(n.field(key), "given, but " + n.ref("window") + " is not set");
    return;
  }
  check_range(m.local_layers, 1, kv_limits::kMaxLayers, n.field("local_layers"));
  check_range(m.global_layers, 0, kv_limits::kMaxLayers, n.field("global_layers"));
}

}  // namespace

std::string_view to_string(Dtype t) {
  for (const auto& [d, name] : kDtypes)
    if (d == t) return name;
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view s) {
  for (const auto& [d, name] : kDtypes)
    if (name == s) return d;
  return std::nullopt;
}

std::string_view dtype_names() { return "fp32 | fp16 | bf16 | fp8 | int8 | int4"; }

int bits_per_element(Dtype t) {
  switch (t) {
    case Dtype::FP32: return 32;
    case Dtype::FP16:
    case Dtype::BF16: return 16;
    case Dtype::FP8:
    case Dtype::INT8: return 8;
    case Dtype::INT4: return 4;
  }
  return 32;
}

std::string ShapeFieldNames::field(std::string_view key) const {
  return options ? "--" + dashed(key) : prefix + std::string(key);
}

std::string ShapeFieldNames::ref(std::string_view key) const { return options ? "--" + dashed(key) : std::string(key); }

void validate_shape(const ModelShape& m, const ShapeFieldNames& n) {
  check_range(m.layers, 1, kv_limits::kMaxLayers, n.field("layers"));
  check_range(m.d_model, 0, kv_limits::kMaxDModel, n.field("d_model"));
  check_range(m.heads, 1, kv_limits::kMaxHeads, n.field("heads"));
  // An mla shape caches its latent: its head_dim may be left out (0), as kv's --latent-dim shape does.
  check_range(m.head_dim, m.variant == Variant::Mla ? 0 : 1, kv_limits::kMaxHeadDim, n.field("head_dim"));
  check_variant_heads(m, n);
  check_latent(m, n);
  check_window(m, n);
}

bool has_sliding_window(const ModelShape& m) { return m.window > 0; }

bool is_global_layer(const ModelShape& m, int i) {
  if (!has_sliding_window(m)) return true;
  if (m.global_layers == 0) return false;
  return i % (m.local_layers + m.global_layers) >= m.local_layers;
}

int global_layer_count(const ModelShape& m) {
  if (!has_sliding_window(m)) return m.layers;
  const int group = m.local_layers + m.global_layers;
  return m.layers / group * m.global_layers + std::max(0, m.layers % group - m.local_layers);
}

std::uint64_t key_dim(const ModelShape& m) { return to_u64(m.head_dim) + to_u64(m.rope_dim); }

std::uint64_t kv_elements_per_token_per_layer(const ModelShape& m) {
  const std::uint64_t key_and_value = key_dim(m) + to_u64(m.head_dim);
  switch (m.variant) {
    case Variant::Mha: return to_u64(m.heads) * key_and_value;            // a key and a value per query head
    case Variant::Gqa: return to_u64(m.kv_heads) * key_and_value;         // only the G shared heads are cached
    case Variant::Mqa: return key_and_value;                              // one shared key and value
    case Variant::Mla: return to_u64(m.latent_dim) + to_u64(m.rope_dim);  // the latent c_KV and the RoPE key
  }
  return 0;
}

KvCacheSize kv_cache_size(const ModelShape& m, std::uint64_t seq, std::uint64_t batch, Dtype dtype) {
  const std::string what = "the KV cache size in bits";
  KvCacheSize s;
  s.elements_per_token_per_layer = kv_elements_per_token_per_layer(m);
  s.global_layer_count = global_layer_count(m);
  s.local_layer_count = m.layers - s.global_layer_count;
  s.local_tokens = has_sliding_window(m) ? std::min<std::uint64_t>(seq, to_u64(m.window)) : 0;
  const std::uint64_t bits = to_u64(bits_per_element(dtype));
  s.bits_per_token = checked_product(what, s.elements_per_token_per_layer, to_u64(m.layers), bits);
  s.total_bits_full_attention = checked_product(what, s.bits_per_token, seq, batch);
  // Token-layer slots actually held: seq in each global layer, min(seq, window) in each local one.
  const std::uint64_t slots = checked_add(checked_mul(to_u64(s.global_layer_count), seq, what),
                                          checked_mul(to_u64(s.local_layer_count), s.local_tokens, what), what);
  s.total_bits = checked_product(what, s.elements_per_token_per_layer, slots, batch, bits);
  s.bytes_per_token = bytes_of(s.bits_per_token);
  s.total_bytes_full_attention = bytes_of(s.total_bits_full_attention);
  s.total_bytes = bytes_of(s.total_bits);
  s.whole_bytes = s.bits_per_token % 8 == 0 && s.total_bits_full_attention % 8 == 0 && s.total_bits % 8 == 0;
  return s;
}

std::optional<std::uint64_t> longest_context(const ModelShape& m, std::uint64_t bytes, std::uint64_t batch, Dtype dtype,
                                             std::uint64_t limit) {
  const auto fits = [&](std::uint64_t seq) {
    try {
      return kv_cache_size(m, seq, batch, dtype).total_bytes <= bytes;
    } catch (const OverflowError&) {
      return false;
    }
  };
  if (fits(limit)) return std::nullopt;
  // The cache never shrinks as the context grows: bisect for the last context that fits (0 tokens always do).
  std::uint64_t lo = 0, hi = limit;  // fits(lo), !fits(hi)
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

StoredFloats table1_stored_floats(const AttentionDims& a) {
  const std::string what = "the Table 1 stored-float count";
  StoredFloats f;
  f.cache = checked_product(what, a.kv_heads, a.tokens, checked_add(a.d_qk, a.d_head, what));  // K and V
  const std::uint64_t terms[] = {
      checked_product(what, a.heads, a.d_in, a.d_qk),       // W_Q: one per query head
      checked_product(what, a.kv_heads, a.d_in, a.d_qk),    // W_K: one per KV head
      checked_product(what, a.kv_heads, a.d_in, a.d_head),  // W_V: one per KV head
      checked_product(what, a.heads, a.d_head, a.d_out),    // W_O
  };
  for (std::uint64_t t : terms) f.weights = checked_add(f.weights, t, what);
  return f;
}

StoredFloats table2_stored_floats(const LatentDims& a) {
  const std::string what = "the Table 2 stored-float count";
  StoredFloats f;
  f.cache = checked_mul(a.tokens, a.d_latent, what);                  // the latent L
  f.weights = checked_add(checked_mul(a.d_in, a.d_latent, what),      // W^L
                          checked_product(what, a.heads, a.d_latent,  // W^Q' and W^O'
                                          checked_add(a.d_in, a.d_out, what)),
                          what);
  return f;
}

StoredFloats stored_floats_per_layer(const ModelShape& m, std::uint64_t tokens) {
  if (m.d_model < 1) throw std::invalid_argument("stored_floats_per_layer: " + m.name + " does not state d_model");
  const std::uint64_t d_model = to_u64(m.d_model);
  if (m.variant == Variant::Mla)
    return table2_stored_floats({to_u64(m.heads), tokens, to_u64(m.latent_dim), d_model, d_model});
  return table1_stored_floats(
      {to_u64(m.heads), to_u64(m.kv_heads), tokens, key_dim(m), to_u64(m.head_dim), d_model, d_model});
}

StoredFloats stored_floats_all_layers(const ModelShape& m, std::uint64_t tokens) {
  const std::string what = "the stored-float count of every layer";
  const std::uint64_t globals = to_u64(global_layer_count(m)), locals = to_u64(m.layers) - globals;
  const StoredFloats global = stored_floats_per_layer(m, tokens);
  const StoredFloats local =
      has_sliding_window(m) ? stored_floats_per_layer(m, std::min<std::uint64_t>(tokens, to_u64(m.window))) : global;
  StoredFloats all;
  all.cache = checked_add(checked_mul(globals, global.cache, what), checked_mul(locals, local.cache, what), what);
  all.weights = checked_mul(to_u64(m.layers), global.weights, what);
  return all;
}

std::string cached_latent_text(const ModelShape& m) {
  return "latent " + thousands(std::uint64_t(m.latent_dim)) +
         (m.rope_dim > 0 ? " + RoPE key " + thousands(std::uint64_t(m.rope_dim)) : std::string());
}

}  // namespace attn
