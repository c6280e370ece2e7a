#include "ui/logic/cost_text.h"

#include <cmath>
#include <cstdio>

#include "core/flops.h"
#include "ui/logic/chart_axes.h"

namespace attn::ui {
namespace {

// 16, 5.3, and 2 rather than 2.0.
std::string ratio(double r) {
  char b[32];
  std::snprintf(b, sizeof b, r >= 10 || std::abs(r - std::round(r)) < 0.05 ? "%.0f" : "%.1f", r);
  return b;
}

std::string plain(std::uint64_t n) { return format_exact(static_cast<double>(n), AxisUnit::Plain); }

}  // namespace

std::string sparse_attention_text(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k) {
  const std::string top_k = "the top " + plain(k);
  if (const auto from = dsa_break_even(c_attn, c_idx, k))
    return "Sparse attention still scans all L keys, but its indexer costs 1/" +
           ratio(static_cast<double>(c_attn) / static_cast<double>(c_idx)) +
           " of attention per pair, and it attends to " + top_k +
           " only: it costs less than attending to every key from L = " + plain(*from) + " tokens on.";
  return "Here sparse attention never pays: its indexer alone costs " +
         ratio(static_cast<double>(c_idx) / static_cast<double>(c_attn)) +
         "\u00D7 as much per pair as this model's attention (" + plain(c_idx) + " against " + plain(c_attn) +
         " FLOPs), so its line stays above the KV cache's. It pays in models "
         "whose attention costs more per pair than the indexer, such as DeepSeek's (C_attn = 262,144).";
}

}  // namespace attn::ui
