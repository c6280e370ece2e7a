#pragma once
// The sentence under the cost chart: what attention and the sparse indexer cost per (query, key) pair, and
// whether, and from which context length on, sparse attention saves anything for the model shown.
#include <cstdint>
#include <string>

namespace attn::ui {

// "sparse attention still scans all L keys, but at 1/16 of the cost ..., so it pays from L = 2,185 tokens on"
// or, where the indexer costs more per pair than attention (C_idx > C_attn), that it never pays, by how much.
std::string sparse_attention_text(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k);

}  // namespace attn::ui
