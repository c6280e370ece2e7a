#pragma once
// The sentence under the cost chart: what attention and the sparse indexer cost per (query, key) pair, and
// whether, and from which context length on, sparse attention saves anything for the model shown.
#include <cstdint>
#include <string>

#include "core/memory.h"

namespace attn::ui {

// C_attn with its formula and the model's own numbers, from attention_flops_per_pair: "C_attn = 4·H·d = 4·64·128 =
// 32,768 FLOPs per (query, key) pair", and for a model with decoupled RoPE the two parts and what each reads:
// "C_attn = 2·H·(d_c + d_R) + 2·H·d_c = 2·128·(512 + 64) + 2·128·512 = 278,528 FLOPs per (query, key) pair: ...".
std::string attention_cost_text(const ModelShape& m);

// "sparse attention still scans all L keys, but at 1/16 of the cost ..., so it pays from L = 2,185 tokens on"
// or, where the indexer costs more per pair than attention (C_idx > C_attn), that it never pays, by how much.
std::string sparse_attention_text(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k);

}  // namespace attn::ui
