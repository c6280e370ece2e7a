// The Compare view's second tab: what a smaller KV cache costs the Real model view's model, measured. GQA at every
// divisor of its key/value heads and MLA at a ladder of latent widths, each the same model converted from its own
// weights, run on the class's text or the sonnets: the cache per token against the loss it adds, and every number in
// a table.
#include <algorithm>
#include <cmath>

#include "ui/logic/document_files.h"
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
  // What is shown, beside the button where it fits (a lesson page says it: the room goes to the chart).
  if (state.tradeoff.loaded() && !state.lesson.open()) {
    const TradeoffRun& t = state.tradeoff.shown();
    const std::string shown = t.model->name() + " on " + t.text_name + ", " + plural(t.tokens, "token") + ", in " +
                              format_unit(t.seconds, NumberUnit::Plain) + " s";
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < TextWidth(shown)) ImGui::NewLine();
    TextWrappedAtSpaces(shown);
  }
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
  Series gqa{"GQA and MQA, solid: heads averaged", {}, {}, variant_colour(1), series_style(0), ""};
  Series mla{"MLA, dashed: a low-rank latent", {}, {}, variant_colour(3), series_style(1), ""};
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

// The colour of a point's line: GQA's (the model as shipped among them) or MLA's.
ImU32 point_colour(const TradeoffPoint& p) {
  return p.conversion && p.conversion->to == KvTarget::Mla ? variant_colour(3) : variant_colour(1);
}

// "Click to open gpt2 as mla 64 in the Real model view": what pointing at a point does.
void open_hint(const TradeoffRun& t, std::size_t i) {
  const std::optional<KvConversion>& c = (*t.trace)[i].conversion;
  ImGui::BeginTooltip();
  TextWrappedAtSpaces("Click to open " + t.model->name() + (c ? " as " + tradeoff_point_name(c) : "") +
                      " in the Real model view");
  ImGui::EndTooltip();
}

// The series and the model as shipped named on a line above the chart, a dot of each one's colour: a legend inside
// would cover points.
void series_key(std::vector<Series> series, Series shipped) {
  const float h = ImGui::GetTextLineHeight();
  series.push_back(std::move(shipped));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string name = series[i].name;
    if (i > 0) {
      ImGui::SameLine(0, 2 * ImGui::GetStyle().ItemSpacing.x);
      if (ImGui::GetContentRegionAvail().x < h * 1.5f + TextWidth(name)) ImGui::NewLine();
    }
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::Dummy({h, h});
    ImGui::GetWindowDrawList()->AddCircleFilled({at.x + h / 2, at.y + h / 2}, h * 0.3f, series[i].colour);
    ImGui::SameLine();
    ImGui::TextUnformatted(name.c_str());
  }
}

// Point i clicked (in the chart or the table): the index, else -1.
int tradeoff_chart(const TradeoffRun& t, float height) {
  const std::vector<TradeoffPoint>& points = *t.trace;
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
  // A mark a point, in the table's order: the one pointed at is the point to open.
  std::vector<ChartMark> marks;
  const double base = tradeoff_point_loss(points.front());
  for (const TradeoffPoint& p : points)
    marks.push_back({static_cast<double>(p.kv_bytes_per_token), tradeoff_point_loss(p) - base, "", point_colour(p)});
  marks.front() = {marks.front().x, 0.0, "", variant_colour(0)};
  o.marks = marks;
  o.flags = LineChartFlags_MarksOpen | LineChartFlags_NoLegend;
  series_key(series, {"as shipped", {}, {}, variant_colour(0), {}, ""});
  o.size = {0, height - ImGui::GetTextLineHeightWithSpacing()};
  const LineChartHits hits = LineChart("tradeoff", series, o);
  if (hits.hovered_mark >= 0) open_hint(t, static_cast<std::size_t>(hits.hovered_mark));
  return hits.clicked_mark;
}

// The table, a row a point; the row of the model the Real model view shows is selected. Point i clicked: i, else -1.
int tradeoff_table(const AppState& state, const TradeoffRun& t) {
  const std::vector<TradeoffPoint>& points = *t.trace;
  const std::int64_t context = state.models.context;
  const std::string at = "at " + format_unit(static_cast<double>(context), NumberUnit::Tokens) + " tokens";
  const char* const heads[] = {"cache", "per token", at.c_str(), "loss (added)", "perplexity", "top-1 same", "KL"};
  if (!ImGui::BeginTable("tradeoff table", 7,
                         ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp |
                             ImGuiTableFlags_ScrollY))
    return -1;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : heads) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  const std::vector<TradeoffRow> rows = tradeoff_rows(points, context);
  const RealModelRun& shown_run = state.real_model.shown();
  const bool same_folder = shown_run.folder == t.folder;
  int clicked = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TradeoffRow& row = rows[i];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    const bool shown = same_folder && shown_run.conversion == points[i].conversion;
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Selectable(row.cache.c_str(), shown, ImGuiSelectableFlags_SpanAllColumns)) clicked = static_cast<int>(i);
    if (ImGui::IsItemHovered()) open_hint(t, i);
    ImGui::PopID();
    int column = 1;
    for (const std::string* cell : {&row.per_token, &row.at_context, &row.loss, &row.perplexity, &row.top1, &row.kl}) {
      ImGui::TableSetColumnIndex(column++);
      ImGui::TextUnformatted(cell->c_str());
    }
  }
  ImGui::EndTable();
  return clicked;
}

}  // namespace

void CompareMeasured(AppState& state) {
  // A lesson page has the title and says what is measured: the room goes to the chart and the table.
  if (!state.lesson.open()) {
    ImGui::PushFont(title_font());
    TextWrappedAtSpaces("What a smaller cache costs " + state.real_model.shown().source->name() + ", measured");
    ImGui::PopFont();
    TextDisabledWrapped(
        "The same model with fewer key/value heads (GQA: each group's heads averaged) or a latent "
        "(MLA: the best low-rank fit of W_K and W_V), run on a text: what its cache saves against the "
        "loss it adds.");
  }
  measure_controls(state);
  if (!state.tradeoff.loaded()) return;
  const TradeoffRun& t = state.tradeoff.shown();
  // Every row in sight where the chart keeps nine lines (a model with 12 heads has 14 points: on a lesson page at the
  // projector's size they fit), the chart taking what the table leaves.
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float table = line * (static_cast<float>(t.trace->size()) + 1.5f);
  const float avail = ImGui::GetContentRegionAvail().y;
  const int from_chart = tradeoff_chart(t, std::max(9 * line, avail - table));
  const int from_table = tradeoff_table(state, t);
  if (const int i = std::max(from_chart, from_table); i >= 0) open_tradeoff_point(state, static_cast<std::size_t>(i));
}

}  // namespace attn::ui
