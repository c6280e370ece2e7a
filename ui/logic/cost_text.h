#pragma once
// The sentence under the cost chart: what attention and the sparse indexer cost per (query, key) pair, and
// whether, and from which context length on, sparse attention saves anything for the model shown.
#include <cstdint>
#include <string>
#include <vector>

#include "core/memory.h"

namespace attn::ui {

// C_attn with its formula and the model's own numbers, from attention_flops_per_pair: "C_attn = 4·H·d = 4·64·128 =
// 32,768 FLOPs per (query, key) pair", and for a model with decoupled RoPE the two parts and what each reads:
// "C_attn = 2·H·(d_c + d_R) + 2·H·d_c = 2·128·(512 + 64) + 2·128·512 = 278,528 FLOPs per (query, key) pair: ...".
std::string attention_cost_text(const ModelShape& m);

// "sparse attention still scans all L keys, but at 1/16 of the cost ..., so it pays from L = 2,185 tokens on"
// or, where the indexer costs more per pair than attention (C_idx > C_attn), that it never pays, by how much.
std::string sparse_attention_text(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k);

// The note under the cost chart's lines saying what their flat start is: "Flat start: the new token's Q, K, V and O
// projections, 96.6 GFLOP, the same at every L" (`floor_flops` over all layers).
std::string projection_floor_text(double floor_flops);

// The context lengths a lesson page's text quotes, ascending and each once: the numbers written "L = 32,768" or
// "32,768 tokens" (not "32,768 FLOPs"), within [lo, hi]. The chart gives each a tick of its own.
std::vector<double> quoted_lengths(const std::string& text, double lo, double hi);

// Whether a lesson page's text quotes the count n: exactly ("244,140", not inside "1,244,140" or "244,1400"), or
// after "about " rounded to three or four significant digits ("about 157,500" for 157,510). The memory chart numbers
// the crossings a page quotes.
bool text_quotes_number(const std::string& text, std::uint64_t n);

}  // namespace attn::ui
