// What a generated token costs in FLOPs as the context grows: recomputing every key and value without a
// cache (quadratic), reading them from the cache (linear), and DeepSeek's sparse attention, whose cheap
// indexer scans every key but whose full attention reads only the top k.
#include <algorithm>
#include <cmath>

#include "core/flops.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/cost_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "ui/widgets/variant_blocks.h"

namespace attn::ui {
namespace {

constexpr std::uint64_t kIndexerHeads = 64, kIndexerDim = 128;  // DeepSeek V3.2's lightning indexer (003)

// y(L) for L = 1, 2, 4, ... 2^20 over the model's layers; stops where a count would overflow.
template <typename F>
Series flops_series(const ModelShape& m, std::string name, ImU32 colour, std::size_t index, F per_layer) {
  Series s{std::move(name), {}, {}, colour, series_style(index), {}};
  for (int e = 0; e <= kMaxContextExponent; ++e) {
    const std::uint64_t L = std::uint64_t{1} << e;
    try {
      s.x.push_back(static_cast<double>(L));
      s.y.push_back(static_cast<double>(per_layer(L)) * m.layers);
    } catch (const OverflowError&) {
      s.x.pop_back();
      break;
    }
  }
  return s;
}

// The document's own sparse attention (its indexer's H_I and d_I, its top_k) on the preset's attention: what the
// scenario being stepped through would cost at this model's scale.
Series scenario_sparse_series(const ModelShape& m, const SparseConfig& own, std::uint64_t c_attn) {
  const std::uint64_t c_idx = indexer_flops_per_pair(static_cast<std::uint64_t>(own.indexer_heads),
                                                     static_cast<std::uint64_t>(own.indexer_dim));
  const auto k = static_cast<std::uint64_t>(own.top_k);
  Series s = flops_series(m,
                          "this scenario's sparse attention: indexer " + std::to_string(own.indexer_heads) +
                              " \u00D7 " + std::to_string(own.indexer_dim) + ", top-k " + std::to_string(own.top_k),
                          variant_colour(1), 3, [&](std::uint64_t L) {
                            return checked_add(flops_dsa(c_attn, c_idx, L, k), projection_flops_per_token(m), "FLOPs");
                          });
  s.end_label = "scenario's DSA";  // short: the chart keeps its width beside a lesson
  return s;
}

// The y of the lines at each of the lengths xs where they have a point.
std::vector<double> values_at(std::span<const Series* const> lines, std::span<const double> xs) {
  std::vector<double> out;
  for (const Series* line : lines)
    for (const double x : xs)
      for (std::size_t i = 0; i < std::min(line->x.size(), line->y.size()); ++i)
        if (line->x[i] == x) out.push_back(line->y[i]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

void CostPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Cost", pos, size);
  const ModelShape* m = PresetControls(state, false, false);
  if (!m) {
    ImGui::End();
    return;
  }
  ImGui::SetNextItemWidth(160);
  if (ImGui::InputInt("top-k (sparse attention)", &state.models.top_k, 256, 1024))
    state.models.top_k = std::clamp(state.models.top_k, 1, 1 << 20);
  const std::uint64_t c_attn = attention_flops_per_pair(*m);
  const std::uint64_t c_idx = indexer_flops_per_pair(kIndexerHeads, kIndexerDim);
  const std::uint64_t k = static_cast<std::uint64_t>(state.models.top_k);
  const bool has_d_model = m->d_model > 0;
  std::vector<Series> series;
  if (has_d_model) {
    // Named at their ends in short, the legend in full. While the projections dominate, the KV cache, sparse and
    // scenario lines lie on each other: drawn in that order, each earlier one shows as a wider stripe around the
    // later ones (line_chart), and the no-cache line, which leaves them at once, comes last.
    series.push_back(flops_series(*m, "KV cache", variant_colour(3), 1,
                                  [&](std::uint64_t L) { return decode_step_flops_cached(*m, L); }));
    series.back().end_label = "KV cache";
    series.push_back(
        flops_series(*m, "sparse attention (DSA), top-k " + format_unit(static_cast<double>(k), NumberUnit::Tokens),
                     variant_colour(2), 2, [&](std::uint64_t L) {
                       return checked_add(flops_dsa(c_attn, c_idx, L, k), projection_flops_per_token(*m), "FLOPs");
                     }));
    series.back().end_label = "sparse (DSA)";
    if (const std::optional<SparseConfig>& own = state.scenario().attention.sparse)
      series.push_back(scenario_sparse_series(*m, *own, c_attn));
    series.push_back(flops_series(*m, "no cache: recompute every key and value", variant_colour(0), 0,
                                  [&](std::uint64_t L) { return decode_step_flops_uncached(*m, L); }));
    series.back().end_label = "no cache";
  }
  const std::string text =
      "Per generated token, all " + std::to_string(m->layers) + " layers. Attention costs " + attention_cost_text(*m) +
      "; the sparse indexer C_idx = 2\u00B7H_I\u00B7d_I = 2\u00B764\u00B7128 = " +
      format_exact(static_cast<double>(c_idx), NumberUnit::Plain) +
      ". Without a cache every step redoes the whole prefix (quadratic); with one, each step reads L cached keys "
      "(linear). " +
      sparse_attention_text(c_attn, c_idx, k);
  TextDisabledWrapped(text);
  if (!has_d_model) {
    ImGui::TextDisabled("This preset has no d_model, so its projections cannot be counted.");
    ImGui::End();
    return;
  }
  auto [lo, hi] = positive_extent(series);
  // The floor over two decades below the lowest line: a line that is all projections (a tiny indexer's) stays clear
  // of the axis instead of lying on it, and the note on the projections has room for two lines under the lines.
  lo /= 300;
  LineChartOptions o;
  o.title = "Attention FLOPs per token, " + m->name;  // a generated token; its projections and scores, not the FFN
  o.x = {1, std::ldexp(1.0, kMaxContextExponent), AxisScale::Log10, NumberUnit::Tokens, "context length L (tokens)"};
  o.y = nice_axis(lo, hi, AxisScale::Log10, NumberUnit::Flops, "");  // the title says what is counted
  // The lengths the lesson page quotes get ticks of their own ("At L = 32,768 ..." reads against a 32k tick).
  const bool page_here = state.lesson.open() && state.lesson.current_page().view == View::Cost;
  const std::vector<double> pins =
      page_here ? quoted_lengths(state.lesson.current_page().text, o.x.lo, o.x.hi) : std::vector<double>{};
  o.x_pins = pins;
  // And the FLOPs with and without a cache at those lengths, the values the page quotes in words ("about a hundred
  // billion"): read off their own ticks, not between decades three apart.
  const Series* const quoted[] = {&series.front(), &series.back()};  // the KV cache and no-cache lines
  const std::vector<double> y_pins = values_at(quoted, pins);
  o.y_pins = y_pins;
  // A dot where each of those lines meets its pinned length, so the tick reads as that point's value.
  std::vector<ChartMark> dots;
  for (const Series* line : quoted)
    for (const double x : pins)
      for (std::size_t i = 0; i < std::min(line->x.size(), line->y.size()); ++i)
        if (line->x[i] == x) dots.push_back({x, line->y[i], "", line->colour});
  o.marks = dots;
  // Under the flat start of the lines, one line saying what it is.
  const double floor = static_cast<double>(projection_flops_per_token(*m)) * static_cast<double>(m->layers);
  const ChartNote notes[] = {{1, floor, projection_floor_text(floor)}};
  o.notes = notes;
  o.size = {0, ImGui::GetContentRegionAvail().y - 4};
  // Every page on this view is about the chart; each line is named at its end (a legend over the plot covered the
  // steepest line, and the text above says what each counts).
  o.flags = LineChartFlags_PageChart | LineChartFlags_NoLegend | LineChartFlags_Stripes;
  LineChart("cost", series, o);
  ImGui::End();
}

}  // namespace attn::ui
