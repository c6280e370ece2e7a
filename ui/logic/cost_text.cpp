#include "ui/logic/cost_text.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>

#include "core/flops.h"
#include "core/text_format.h"
#include "ui/logic/chart_axes.h"

namespace attn::ui {
namespace {

// 16, 5.3, and 2 rather than 2.0.
std::string ratio(double r) { return format_number(r, r >= 10 || std::abs(r - std::round(r)) < 0.05 ? 0 : 1); }

std::string exact_count(std::uint64_t n) { return format_exact(static_cast<double>(n), NumberUnit::Plain); }

// "2·128·(512 + 64)": the middle dot between factors.
std::string two_h_times(std::uint64_t a, const std::string& b) { return "2\u00B7" + thousands(a) + "\u00B7" + b; }

}  // namespace

std::string attention_cost_text(const ModelShape& m) {
  const bool mla = m.variant == Variant::Mla;
  const std::string H = thousands(static_cast<std::uint64_t>(m.heads));
  const std::string d = thousands(static_cast<std::uint64_t>(mla ? m.latent_dim : m.head_dim));
  const std::string d_name = mla ? "d_c" : "d";
  const std::string total = " = " + exact_count(attention_flops_per_pair(m)) + " FLOPs per (query, key) pair";
  // Without decoupled RoPE a score and a sum read the same width: one 4·H·d.
  if (m.rope_dim == 0) return "C_attn = 4\u00B7H\u00B7" + d_name + " = 4\u00B7" + H + "\u00B7" + d + total;
  const std::string r = thousands(static_cast<std::uint64_t>(m.rope_dim));
  return "C_attn = 2\u00B7H\u00B7(" + d_name + " + d_R) + 2\u00B7H\u00B7" + d_name + " = " +
         two_h_times(static_cast<std::uint64_t>(m.heads), "(" + d + " + " + r + ")") + " + " +
         two_h_times(static_cast<std::uint64_t>(m.heads), d) + total +
         (mla ? ": the scores read the latent and the " + r + "-dim RoPE key, the sum reads the latent"
              : ": the scores read the " + d + "-dim key and its " + r + "-dim RoPE part, the sum reads the value");
}

std::string sparse_attention_text(std::uint64_t c_attn, std::uint64_t c_idx, std::uint64_t k) {
  const std::string top_k = "the top " + exact_count(k);
  if (const auto from = dsa_break_even(c_attn, c_idx, k))
    return "Sparse attention still scans all L keys, but its indexer costs 1/" +
           ratio(static_cast<double>(c_attn) / static_cast<double>(c_idx)) +
           " of attention per pair, and it attends to " + top_k +
           " only: it costs less than attending to every key from L = " + exact_count(*from) + " tokens on.";
  return "Here sparse attention never pays: its indexer alone costs " +
         ratio(static_cast<double>(c_idx) / static_cast<double>(c_attn)) +
         "\u00D7 as much per pair as this model's attention (" + exact_count(c_idx) + " against " +
         exact_count(c_attn) +
         " FLOPs), so its line stays above the KV cache's. It pays in models "
         "whose attention costs more per pair than the indexer, such as DeepSeek's (C_attn = 278,528).";
}

std::string projection_floor_text(double floor_flops) {
  std::string flops = format_value(floor_flops, NumberUnit::Flops);
  flops.replace(flops.find(' '), 1, "\u00A0");  // the number and its unit on one line when the note wraps
  return "Flat start: the new token's Q, K, V and O projections, " + flops + ", the same at every L";
}

std::vector<double> quoted_lengths(const std::string& text, double lo, double hi) {
  static const std::regex length("L = ([0-9]{1,3}(,[0-9]{3})*|[0-9]+)\\b|\\b([0-9]{1,3}(,[0-9]{3})*|[0-9]+) tokens");
  std::set<double> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), length); it != std::sregex_iterator(); ++it) {
    std::string digits = (*it)[1].matched ? (*it)[1].str() : (*it)[3].str();
    std::erase(digits, ',');
    const double v = std::strtod(digits.c_str(), nullptr);
    if (v >= lo && v <= hi) found.insert(v);
  }
  return {found.begin(), found.end()};
}

bool text_quotes_number(const std::string& text, std::uint64_t n) {
  const auto found = [&](const std::string& number, const std::string& before) {
    for (std::size_t at = text.find(before + number); at != std::string::npos;
         at = text.find(before + number, at + 1)) {
      const std::size_t end = at + before.size() + number.size();
      const auto digit = [&](std::size_t i) { return std::isdigit(static_cast<unsigned char>(text[i])) != 0; };
      const bool open = at == 0 || !(digit(at - 1) || text[at - 1] == ',');
      const bool closed =
          end >= text.size() || !(digit(end) || (text[end] == ',' && end + 1 < text.size() && digit(end + 1)));
      if (open && closed) return true;
    }
    return false;
  };
  const double v = static_cast<double>(n);
  if (found(format_exact(v, NumberUnit::Plain), "")) return true;
  if (n == 0) return false;
  for (const int digits : {3, 4}) {
    const double unit = std::pow(10.0, std::floor(std::log10(v)) + 1 - digits);
    if (found(format_exact(std::round(v / unit) * unit, NumberUnit::Plain), "about ")) return true;
  }
  return false;
}

}  // namespace attn::ui
