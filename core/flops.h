#pragma once
// What attention costs in floating-point operations, to set the KV cache's memory against the compute
// it saves. Counting rule (003, footnote 3): a d-dimensional dot product is d multiplications and d
// additions, 2d FLOPs; so is scaling a d-vector by a weight and adding it to an accumulator.
// Every count is for ONE layer; multiply by the layer count for a whole model. Softmax, masking and
// normalisation are left out: they are O(pairs · H), small next to the dot products.
#include <cstdint>
#include <optional>

#include "core/memory.h"

namespace attn {

// C_attn, FLOPs per (query, key) pair. MHA/GQA/MQA: each of the H query heads does a d_k-dim QK dot
// product (2·d_k, d_k = key_dim: head_dim, + d_rope in the forms of a model with decoupled RoPE) and
// accumulates a d-dim value (2d): 2·H·d_k + 2·H·d, 4·H·d without decoupled RoPE; sharing KV heads (GQA, MQA)
// saves memory, not these FLOPs. MLA with absorbed weights scores the d_c-wide latent and the d_rope-wide RoPE
// key, and accumulates the latent: 2·H·(d_c + d_rope) + 2·H·d_c (DeepSeek V3: 2·128·576 + 2·128·512 =
// 278,528; 003 leaves the RoPE term out and quotes 4·128·512 = 262,144).
std::uint64_t attention_flops_per_pair(const ModelShape& m);

// The projections of one token: each stored weight is used once in a matrix-vector product, one
// multiply and one add, so 2 × the weights of Table 1 (W_Q, W_K, W_V, W_O) or Table 2 (W^L, W^Q', W^O').
// Needs d_model.
std::uint64_t projection_flops_per_token(const ModelShape& m);

// Query-key pairs scored when n tokens attend to each other: n(n+1)/2 with a causal mask, n² without.
std::uint64_t attention_pairs(std::uint64_t n, bool causal);

// Prefill: C_attn · pairs(n) for the attention alone; prefill_flops adds n × the projections.
std::uint64_t prefill_attention_flops(const ModelShape& m, std::uint64_t n, bool causal);
std::uint64_t prefill_flops(const ModelShape& m, std::uint64_t n, bool causal);

// One decode step for the token at position L (it attends to L keys, itself included).
// With a KV cache: only the new token is projected, and it attends to the L cached keys: C_attn·L + proj.
std::uint64_t decode_step_flops_cached(const ModelShape& m, std::uint64_t L);
// Without one: every key and value is recomputed, so the step costs a causal prefill of L tokens.
std::uint64_t decode_step_flops_uncached(const ModelShape& m, std::uint64_t L);

// DeepSeek Sparse Attention (003, "Cost analysis"): a lightning indexer scores all L keys, then full
// attention runs on the top k only.
// C_idx = 2·H_I·d_I: one d_I-dim dot product per indexer head, no value step (2·64·128 = 16,384).
std::uint64_t indexer_flops_per_pair(std::uint64_t indexer_heads, std::uint64_t indexer_dim);
// FLOPs_vanilla(L) = C_attn·L.
std::uint64_t flops_vanilla(std::uint64_t c_attn, std::uint64_t L);
// FLOPs_DSA(L) = C_idx·L + C_attn·min(k, L): with fewer than k keys, all of them are attended.
std::uint64_t flops_dsa(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t L, std::uint64_t k);
// The shortest context at which sparse attention costs less than attending to every key:
// C_idx·L + C_attn·k < C_attn·L, so L > k·C_attn / (C_attn − C_idx). None when the indexer costs as much per
// pair as attention itself (C_idx >= C_attn: a small model), where the sparse line never drops below.
std::optional<std::uint64_t> dsa_break_even(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k);

}  // namespace attn
