// The Model view: the transformer around attention as a column of layers, every box a live heatmap of what
// flows out of it for the tokens; every head of every layer as small multiples (rows = layers); the next-token
// probabilities. A layer's attention opens in the pipeline.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/model_bytes.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/model_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/bar_chart.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

// The numbers of one part's output for one token, named as the stream's.
void stream_tooltip(const std::string& where, const std::vector<std::string>& tokens, const Matrix& m,
                    const HeatmapResult& r) {
  if (r.hovered_row < 0) return;
  ImGui::BeginTooltip();
  ImGui::Text("%s, \"%s\" (position %d), dimension %d:  %s", where.c_str(),
              tokens[static_cast<std::size_t>(r.hovered_row)].c_str(), r.hovered_row, r.hovered_col,
              format_cell(m(r.hovered_row, r.hovered_col), 12).c_str());
  ImGui::EndTooltip();
}

// The rows of a box row: one per token, labelled once on the left; a long input gets thinner rows (every k-th
// labelled) so a box stays within a few hundred pixels.
struct RowGeometry {
  float label_w, row_h;
  int label_every;
};

RowGeometry row_geometry(const std::vector<std::string>& tokens) {
  const float line = ImGui::GetTextLineHeight();
  float label_w = 0;
  for (const std::string& t : tokens) label_w = std::max(label_w, TextWidth(t));
  const float row_h = std::clamp(10.0f * line / static_cast<float>(tokens.size()), 3.0f, line);
  return {std::min(label_w, 6 * line) + ImGui::GetStyle().ItemSpacing.x, row_h,
          static_cast<int>(std::ceil(line / row_h - 0.01f))};
}

void token_labels(const std::vector<std::string>& tokens, const RowGeometry& g) {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  for (std::size_t r = 0; r < tokens.size(); r += static_cast<std::size_t>(g.label_every)) {
    const std::string shown = FitText(tokens[r], g.label_w - ImGui::GetStyle().ItemSpacing.x);
    dl->AddText({at.x, at.y + static_cast<float>(r) * g.row_h + (g.row_h - line) / 2},
                ImGui::GetColorU32(ImGuiCol_Text), shown.c_str());
  }
  ImGui::Dummy({g.label_w, g.row_h * static_cast<float>(tokens.size())});
}

// One box: a heatmap of (N, d) filling width x height, accent-outlined when `accent`. True if clicked.
bool stream_box(const StreamPart& part, const std::string& where, const std::vector<std::string>& tokens, ImVec2 size,
                bool accent) {
  ImGui::PushID(part.title.c_str());
  HeatmapOptions o;
  o.size = size;
  o.flags = HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip | HeatmapFlags_NoLabels |
            HeatmapFlags_Fill;
  const HeatmapResult r = Heatmap("m", *part.values, o);
  stream_tooltip(where + ": " + part.title, tokens, *part.values, r);
  if (accent) {
    const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRect({lo.x - 3, lo.y - 3}, {hi.x + 3, hi.y + 3}, accent_colour(), 3.0f, 0, 2.0f);
  }
  ImGui::PopID();
  return r.hovered_row >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left);
}

// A row of boxes sharing the width after the token labels, joined by arrows, each under its title.
void box_row(AppState& state, const std::vector<StreamPart>& parts, const std::string& where, int layer) {
  const std::vector<std::string>& tokens = state.model_doc.trace().tokens;
  const RowGeometry g = row_geometry(tokens);
  const float arrow = ImGui::CalcTextSize(" \u2192 ").x, n = static_cast<float>(parts.size());
  const float x0 = ImGui::GetCursorPosX();
  const float width = (ImGui::GetContentRegionAvail().x - g.label_w - arrow * (n - 1)) / n;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) ImGui::SameLine(x0 + g.label_w + static_cast<float>(i) * (width + arrow));
    else ImGui::SetCursorPosX(x0 + g.label_w);
    const StreamPart& p = parts[i];
    const bool accent = p.attention && state.model_view.last_hovered_layer == layer;
    const std::string title =
        FitText(!p.short_title.empty() && TextWidth(p.title) > width ? p.short_title : p.title, width);
    if (accent) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(accent_colour()), "%s", title.c_str());
    else ImGui::TextUnformatted(title.c_str());
  }
  token_labels(tokens, g);
  const float height = g.row_h * static_cast<float>(tokens.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ImGui::SameLine(0, 0);
    if (i > 0) {
      const ImVec2 at = ImGui::GetCursorScreenPos();
      ImGui::GetWindowDrawList()->AddText({at.x, at.y + (height - ImGui::GetTextLineHeight()) / 2},
                                          ImGui::GetColorU32(ImGuiCol_TextDisabled), " \u2192 ");
      ImGui::Dummy({arrow, height});
      ImGui::SameLine(0, 0);
    }
    const bool attention = parts[i].attention;
    const bool accent = attention && state.model_view.last_hovered_layer == layer;
    if (stream_box(parts[i], where, tokens, {width, height}, accent) && attention)
      state.visit_model_layer(layer);  // nothing is lost: the document waits for the way back
    if (attention && ImGui::IsItemHovered()) state.model_view.hovered_layer = layer;
  }
}

void layer_block(AppState& state, int l) {
  const Model& m = *state.model_doc.shown().resolved;
  const LayerTrace& t = state.model_doc.trace().layers[static_cast<std::size_t>(l)];
  ImGui::PushID(l);
  ImGui::PushFont(title_font());
  ImGui::Text("Layer %d", l);
  ImGui::PopFont();
  ImGui::SameLine();
  if (ImGui::Button("Open in the pipeline \u25B8")) state.visit_model_layer(l);
  const std::string where = "layer " + std::to_string(l);
  for (const std::vector<StreamPart>& row : layer_parts(m, t)) box_row(state, row, where, l);
  ImGui::PopID();
  ImGui::Spacing();
}

void layer_column(AppState& state) {
  if (std::exchange(state.model_view.scroll_to_top, false)) ImGui::SetScrollY(0.0f);
  const Model& m = *state.model_doc.shown().resolved;
  const ModelTrace& t = state.model_doc.trace();
  const std::string embedded = m.positions == Positions::Learned      ? "x = embedding[tokens] + W_P"
                               : m.positions == Positions::Sinusoidal ? "x = embedding[tokens] + sinusoids"
                                                                      : "x = embedding[tokens]";
  box_row(state, {{embedded, &t.embedded, false}}, "input", -1);
  ImGui::Spacing();
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) layer_block(state, l);
  std::vector<StreamPart> out;
  if (m.norm == Norm::Pre) out.push_back({"LN_final(x)", &t.final, false});
  // The unembedding reads what the box before it made: the normalised stream in Pre-LN, the stream itself in Post-LN.
  out.push_back({m.norm == Norm::Pre ? "logits = LN_final(x) \u00B7 unembedding" : "logits = x \u00B7 unembedding",
                 &t.logits, false, "logits"});
  if (std::exchange(state.model_view.scroll_to_output, false)) ImGui::SetScrollHereY(0.0f);
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted("Output");
  ImGui::PopFont();
  box_row(state, out, "output", -1);
}

// A cell of a layer's overview (ModelRunOptions::overview): the queries and keys its block covers.
std::string overview_cell_text(int layer, int head, int n, const Matrix& overview, int row, int col) {
  const auto span = [n](int i, Eigen::Index cells, const char* what) {
    const std::int64_t first = std::int64_t(i) * n / cells, last = std::int64_t(i + 1) * n / cells - 1;
    return std::string(what) + " " + std::to_string(first) + "\u2013" + std::to_string(last);
  };
  return "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": " +
         span(row, overview.rows(), "queries") + " look at " + span(col, overview.cols(), "keys") +
         " with mean weight " + format_cell(overview(row, col), 4) + "\n(click L" + std::to_string(layer) +
         " to keep this layer's heads whole)";
}

// A row label of the head grid: the layer whose heads are kept whole is accented; a click keeps another's.
void head_grid_label(AppState& state, int l) {
  const bool current = state.model_view.last_hovered_layer == l || state.model_doc.shown().layer == l;
  const std::string label = "L" + std::to_string(l);
  if (current) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(accent_colour()));
  const bool clicked =
      ImGui::Selectable(label.c_str(), state.model_doc.shown().layer == l, 0, ImGui::CalcTextSize(label.c_str()));
  if (current) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Keep layer %d's heads whole (the others are shown in blocks)", l);
  if (clicked)
    if (const std::optional<std::string> why = state.model_doc.show_layer(l))
      state.message = "Layer not shown: " + *why;
}

// Every head of every layer: rows are layers. The hover names layer, head and weight; a click opens the layer. Only
// the shown layer's heads are kept whole; the others are drawn from their overviews (the same numbers when the tokens
// are few).
void head_grid(AppState& state, float width, float height) {
  const ModelTrace& t = state.model_doc.trace();
  const std::vector<std::string>& tokens = t.tokens;
  int most = 1;
  for (const LayerTrace& l : t.layers) most = std::max(most, static_cast<int>(l.weights_overview.size()));
  const float label_w = ImGui::CalcTextSize("L00 ").x, gap = ImGui::GetStyle().ItemSpacing.x;
  const float rows = static_cast<float>(t.layers.size());
  const float cell = std::clamp(std::min((width - label_w - gap * static_cast<float>(most)) / static_cast<float>(most),
                                         (height - gap * rows) / rows),
                                24.0f, 140.0f);
  for (int h = 0; h < most; ++h) {  // the heads' numbers over their column
    if (h > 0) ImGui::SameLine();
    ImGui::SetCursorPosX(label_w + static_cast<float>(h) * (cell + gap));
    const std::string name = "head " + std::to_string(h);
    ImGui::TextDisabled("%s", TextWidth(name) <= cell ? name.c_str() : ("h" + std::to_string(h)).c_str());
  }
  const int n = static_cast<int>(tokens.size());
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) {
    const LayerTrace& layer = t.layers[static_cast<std::size_t>(l)];
    ImGui::PushID(l);
    head_grid_label(state, l);
    for (int h = 0; h < static_cast<int>(layer.weights_overview.size()); ++h) {
      ImGui::SameLine(h == 0 ? label_w : 0, gap);
      ImGui::PushID(h);
      // The head's weights whole when kept, its overview otherwise (the same matrix when the tokens are few).
      const bool whole = layer.kept;
      HeatmapOptions o;
      o.map = ColorMap::Sequential;
      o.range = ValueRange{0, 1};
      o.visible = whole ? &*layer.attention.heads[static_cast<std::size_t>(h)].mask : &layer.mask_overview;
      o.size = {cell, cell};
      o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
                HeatmapFlags_Fill;
      const Matrix& w = whole ? layer.attention.heads[static_cast<std::size_t>(h)].weights()
                              : layer.weights_overview[static_cast<std::size_t>(h)];
      const HeatmapResult r = Heatmap("w", w, o);
      if (r.hovered_row >= 0) {
        state.model_view.hovered_layer = l;
        const bool exact = whole || w.rows() == n;
        const std::string text =
            exact ? head_weight_text(l, h, tokens, r.hovered_row, r.hovered_col, w(r.hovered_row, r.hovered_col))
                  : overview_cell_text(l, h, n, w, r.hovered_row, r.hovered_col);
        ImGui::SetTooltip("%s\nclick to open layer %d in the pipeline", text.c_str(), l);
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
          if (state.visit_model_layer(l)) state.pipeline.head = h;  // clamped when its trace is shown
      }
      ImGui::PopID();
    }
    ImGui::PopID();
  }
}

// The next token after each position: the probabilities over the vocabulary, and the most likely as bars for the
// position pointed at (the last one otherwise).
void predictions(AppState& state, float width) {
  const ModelTrace& t = state.model_doc.trace();
  const Model& m = *state.model_doc.shown().resolved;
  const int rows = static_cast<int>(t.tokens.size());
  // The row pointed at in the last frame, else the last: new tokens move the bars along.
  const int position = std::clamp(state.model_view.position < 0 ? rows - 1 : state.model_view.position, 0, rows - 1);
  // The answer first: the likeliest next tokens after the position chosen below.
  TextWrappedAtSpaces("After \"" + t.tokens[static_cast<std::size_t>(position)] + "\" (position " +
                      std::to_string(position) + "), the next token:");
  std::vector<Bar> bars;
  for (const Prediction& p : top_predictions(t, m.vocab, position, 5))
    bars.push_back({p.token, p.probability, accent_colour(), ""});
  BarChartOptions b;
  b.unit = AxisUnit::Plain;
  b.size = {width, 0};
  BarChart("next", bars, b);
  TextDisabledWrapped("Every position's probabilities (rows: after the token, columns: the next); point at a row.");
  HeatmapOptions o;
  o.map = ColorMap::Sequential;
  o.range = ValueRange{0, 1};
  o.row_labels = &t.tokens;
  o.col_labels = &m.vocab;
  // Rows a line high, columns as wide as the width gives them: the vocabulary's names stay readable.
  const float line = ImGui::GetTextLineHeight();
  o.size = {width, line * static_cast<float>(rows + 4)};
  o.flags = HeatmapFlags_Fill | HeatmapFlags_NoValues;  // the bars above give the numbers
  o.highlight_row = position;
  const HeatmapResult r = Heatmap("probabilities", t.probabilities, o);
  state.model_view.position = r.hovered_row;
}

void heads_section(AppState& state, float height) {
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted("Every head");
  ImGui::PopFont();
  TextDisabledWrapped("Attention weights, a row of heads per layer. Point at a cell; click to open its layer.");
  head_grid(state, ImGui::GetContentRegionAvail().x, height * 0.3f);
  ImGui::Spacing();
}

void predictions_section(AppState& state) {
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted("Next token");
  ImGui::PopFont();
  predictions(state, ImGui::GetContentRegionAvail().x);
  ImGui::Spacing();
}

void model_header(const AppState& state) {
  const Model& m = state.model_doc.model();
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces(m.name + (state.model_doc.dirty() ? "  \u2022 unsaved" : ""));
  ImGui::PopFont();
  TextDisabledWrapped(model_summary(m, state.model_doc.parameters()));
  std::string tokens = "tokens:";
  for (const std::string& tok : state.model_doc.input().tokens) tokens += "  " + tok;
  // A big model's forward pass runs on the worker: until it is done the boxes show the last one.
  if (state.model_doc.computing()) tokens += "   (computing\u2026)";
  TextWrappedAtSpaces(tokens);
  const ModelShown& shown = state.model_doc.shown();
  TextDisabledWrapped(
      "memory: " +
      budget_share_text(state.model_doc.held_bytes(), state.memory_budget, state.held_beside(WindowPart::Model)) +
      " (every layer's stream, layer " + std::to_string(shown.layer) +
      "'s heads whole, the others in blocks, and the undo history)");
}

}  // namespace

void LayerBreadcrumb(AppState& state) {
  const std::optional<LayerVisit>& visit = state.layer_visit();
  if (!visit) return;
  if (ImGui::Button(("\u25C2 Model " + visit->model_name).c_str()))
    state.pending_replace = [&state] { state.end_layer_visit(); };
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the Model view (and the scenario open before)");
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  const std::string where = "\u25B8 layer " + std::to_string(visit->layer) + "'s attention, X = " +
                            (visit->pre_norm ? "LN1(the stream entering it)" : "the stream entering it");
  ImGui::TextDisabled("%s", FitText(where, ImGui::GetContentRegionAvail().x).c_str());
}

void ModelPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Model", pos, size, ImGuiWindowFlags_NoTitleBar);
  if (!state.model_doc.loaded()) {
    if (!state.model_unopened.empty())
      TextWrappedAtSpaces("No model is open: " + state.model_unopened + ". File > Open a model file opens another.");
    else TextWrappedAtSpaces("No model is open. File > Open a model file (assets/models/tiny.json is one).");
    ImGui::End();
    return;
  }
  state.model_view.last_hovered_layer = std::exchange(state.model_view.hovered_layer, -1);
  model_header(state);
  ImGui::Separator();
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  // Side by side where three boxes of a layer keep room for their titles; else one column to scroll.
  const bool side_by_side = avail_w >= 48.0f * ImGui::GetFontSize();
  ImGui::BeginChild("column", {side_by_side ? avail_w * 0.52f : 0, avail_h}, false);
  layer_column(state);
  if (side_by_side) {  // the heads beside the column, then the next token
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("heads", {0, avail_h}, false);
    heads_section(state, avail_h);
    predictions_section(state);
  } else {  // the next token right under the output it comes from, then the heads
    ImGui::Spacing();
    predictions_section(state);
    heads_section(state, avail_h);
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn::ui
