// The Compare view's second tab: what a smaller KV cache costs the Real model view's model, measured. GQA at every
// divisor of its key/value heads and MLA at a ladder of latent widths, each the same model converted from its own
// weights, run on the class's text or the sonnets: the cache per token against the loss it adds, and every number in
// a table.
#include <algorithm>
#include <cmath>

#include "ui/logic/tradeoff.h"
#include "ui/panels/panels.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

// What is measured on: the text, the button and, while it runs, how far along it is.
void measure_controls(AppState& state) {
  CompareView& v = state.compare;
  ImGui::TextUnformatted("Measure on");
  ImGui::SameLine();
  if (ImGui::RadioButton("the typed text", !v.sonnets)) v.sonnets = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("the sonnets", v.sonnets)) v.sonnets = true;
  ImGui::SameLine();
  if (ImGui::Button(state.tradeoff.loaded() ? "Measure again" : "Measure")) state.measure_cache_tradeoff();
  if (state.tradeoff.computing()) {
    const TradeoffProgress& p = state.tradeoff.progress();
    ImGui::ProgressBar(static_cast<float>(tradeoff_progress_fraction(p)), {-1, 0}, tradeoff_progress_text(p).c_str());
  }
}

// GQA's points (the model as shipped with them: its own G0) and MLA's, each as a line from the smallest cache up.
std::vector<Series> tradeoff_series(const std::vector<TradeoffPoint>& points) {
  const double base = tradeoff_point_loss(points.front());
  // Named in the legend, not at their ends: a label's leader from the end of a line stopping short of the right edge
  // reads as the line going on.
  Series gqa{"GQA and MQA: key/value heads averaged", {}, {}, variant_colour(1), series_style(0), ""};
  Series mla{"MLA: a low-rank latent", {}, {}, variant_colour(3), series_style(1), ""};
  std::vector<std::pair<double, double>> g, m;
  for (const TradeoffPoint& p : points) {
    const std::pair<double, double> xy{static_cast<double>(p.kv_bytes_per_token), tradeoff_point_loss(p) - base};
    if (p.conversion && p.conversion->to == KvTarget::Mla) m.push_back(xy);
    else g.push_back(xy);
  }
  const auto fill = [](std::vector<std::pair<double, double>>& xy, Series& s) {
    std::sort(xy.begin(), xy.end());
    for (const auto& [x, y] : xy) {
      s.x.push_back(x);
      s.y.push_back(y);
    }
  };
  fill(g, gqa);
  fill(m, mla);
  // A line of the model as shipped alone (a model of one key/value head has no GQA to make) is no line.
  std::vector<Series> lines;
  for (Series* s : {&gqa, &mla})
    if (s->x.size() > (s == &gqa ? 1u : 0u)) lines.push_back(std::move(*s));
  return lines;
}

void tradeoff_chart(const std::vector<TradeoffPoint>& points, float height) {
  const std::vector<Series> series = tradeoff_series(points);
  double x_lo = 1e300, x_hi = 0, y_lo = 0, y_hi = 0;
  for (const Series& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  LineChartOptions o;
  o.x = nice_axis(x_lo, x_hi, AxisScale::Log10, NumberUnit::Bytes, "KV cache per token, every layer (16-bit numbers)");
  // A tenth of the range beyond the points each way: a point on the plot's border reads as cut off.
  const double pad = std::max(y_hi - y_lo, 1e-3) / 10;
  o.y = nice_axis(y_lo - pad, y_hi + pad, AxisScale::Linear, NumberUnit::Plain, "loss added (nats per token)");
  std::vector<ChartMark> marks;
  for (const Series& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) marks.push_back({s.x[i], s.y[i], "", s.colour});
  marks.push_back({static_cast<double>(points.front().kv_bytes_per_token), 0.0, "as shipped", variant_colour(0)});
  o.marks = marks;
  o.size = {0, height};
  LineChart("tradeoff", series, o);
}

void tradeoff_table(const std::vector<TradeoffPoint>& points, std::int64_t context) {
  const std::string at = "at " + format_unit(static_cast<double>(context), NumberUnit::Tokens) + " tokens";
  const char* const heads[] = {"cache", "per token", at.c_str(), "loss (added)", "perplexity", "top-1 same", "KL"};
  if (!ImGui::BeginTable("tradeoff table", 7,
                         ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp |
                             ImGuiTableFlags_ScrollY))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : heads) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const TradeoffRow& row : tradeoff_rows(points, context)) {
    ImGui::TableNextRow();
    int column = 0;
    for (const std::string* cell :
         {&row.cache, &row.per_token, &row.at_context, &row.loss, &row.perplexity, &row.top1, &row.kl}) {
      ImGui::TableSetColumnIndex(column++);
      ImGui::TextUnformatted(cell->c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace

void CompareMeasured(AppState& state) {
  const RealModelRun& r = state.real_model.shown();
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces("What a smaller cache costs " + r.model->name() + ", measured");
  ImGui::PopFont();
  if (!state.lesson.open())
    TextDisabledWrapped(
        "The same model with fewer key/value heads (GQA: each group's heads averaged) or a latent "
        "(MLA: the best low-rank fit of W_K and W_V), run on a text: what its cache saves against the "
        "loss it adds.");
  measure_controls(state);
  if (!state.tradeoff.loaded()) return;
  const TradeoffRun& t = state.tradeoff.shown();
  TextWrappedAtSpaces(t.model->name() + " on " + t.text_name + ", " + plural(t.tokens, "token") + ", in " +
                      format_unit(t.seconds, NumberUnit::Plain) + " s");
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float table = line * (static_cast<float>(t.trace->size()) + 1.5f);
  const float avail = ImGui::GetContentRegionAvail().y;
  tradeoff_chart(*t.trace, std::max(12 * line, avail - std::min(table, avail / 2)));
  tradeoff_table(*t.trace, state.models.context);
}

}  // namespace attn::ui
