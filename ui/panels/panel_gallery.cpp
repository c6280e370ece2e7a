// View > Widget gallery (and --gallery): every widget with its options, drawn from the document's own
// trace, in the spirit of imgui_demo.cpp, so the next person sees what exists before writing a new one.
// Each example is headed by the call that draws it.
#include <string>
#include <vector>

#include "core/init.h"
#include "core/memory.h"
#include "ui/logic/hover_text.h"
#include "ui/panels/app_window.h"
#include "ui/panels/panels.h"
#include "ui/widgets/arc_view.h"
#include "ui/widgets/bar_chart.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/file_dialog.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/matrix_editor.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "ui/widgets/variant_blocks.h"

namespace attn::ui {
namespace {

// A section title and the call it shows.
void heading(const char* title, const char* call) {
  ImGui::Separator();
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  TextDisabledWrapped(call);
}

// Examples side by side in columns of one width, each under its own caption.
void caption(const char* text) { TextDisabledWrapped(text); }

HeatmapOptions labelled(const Trace& t, ColourMap map = ColourMap::Diverging) {
  HeatmapOptions o;
  o.row_labels = &t.tokens;
  o.col_labels = &t.context_tokens;
  o.map = map;
  return o;
}

HeatmapOptions weights_options(const Trace& t) {
  HeatmapOptions o = labelled(t, ColourMap::Sequential);
  o.range = ValueRange{0, 1};
  return o;
}

void heatmaps(const AppState& state, GalleryState& g) {
  heading("Heatmap", "ui::Heatmap(id, matrix, HeatmapOptions{...}), in heatmap.h");
  const Trace& t = state.trace();
  const HeadTrace& h = t.heads[0];
  const HeadTrace& causal = state.causal_trace().heads[0];
  if (!ImGui::BeginTable("heatmaps", 3, ImGuiTableFlags_SizingStretchSame)) return;
  ImGui::TableNextColumn();
  caption("map = Diverging (signed values, white at 0): head 0's scores");
  Heatmap("diverging", h.scores(), labelled(t));
  ImGui::TableNextColumn();
  caption("map = Sequential, range = [0, 1]: head 0's weights");
  Heatmap("sequential", h.weights(), weights_options(t));
  ImGui::TableNextColumn();
  caption("visible = the causal mask: the scaled scores (\u00F7 \u221A3), hidden cells grey and hatched");
  HeatmapOptions hidden = labelled(state.causal_trace());
  hidden.visible = &*causal.mask;
  Heatmap("hidden", causal.masked(), hidden);
  ImGui::TableNextColumn();
  caption("highlight_row = 1; selected_row, selected_col = 1, 2; outlined = cell 0, 0");
  static const std::pair<int, int> kOutlined[] = {{0, 0}};
  HeatmapOptions marks = weights_options(t);
  marks.highlight_row = 1;
  marks.selected_row = 1;
  marks.selected_col = 2;
  marks.outlined = kOutlined;
  Heatmap("marks", h.weights(), marks);
  ImGui::TableNextColumn();
  caption("flags = NoValues | NoLegend; and, with NoLabels | Fill, in an 80 x 80 box (the heads panel's thumbnails)");
  HeatmapOptions plain = labelled(t);
  plain.flags = HeatmapFlags_NoValues | HeatmapFlags_NoLegend;
  Heatmap("novalues", h.scores(), plain);
  ImGui::SameLine();
  HeatmapOptions thumbnail;
  thumbnail.map = ColourMap::Sequential;
  thumbnail.size = {80, 80};
  thumbnail.flags = HeatmapFlags_NoLabels | HeatmapFlags_Fill | HeatmapFlags_NoLegend | HeatmapFlags_NoValues;
  Heatmap("thumbnail", h.weights(), thumbnail);
  ImGui::TableNextColumn();
  if (g.large.size() == 0) g.large = seeded_matrix(1, SeedStream::Embeddings, 256, 256);
  caption("256 x 256: too many cells for numbers, drawn as one texture (heatmap_pixels.h)");
  HeatmapOptions large;
  large.size = {0, 200};
  Heatmap("texture", g.large, large);
  ImGui::EndTable();
}

void equations(const AppState& state) {
  heading("Equation",
          "ui::Equation(id, terms, ops, max_height) and ui::EquationFlow(id, terms, ops, cell), in equation.h");
  const HeadTrace& h = state.trace().heads[0];
  const std::vector<std::string>& tokens = state.trace().tokens;
  const std::vector<std::string>& keys = state.trace().context_tokens;
  const Matrix kt = h.k.transpose();
  const Term terms[] = {{.name = "q", .m = &h.q, .rows = &tokens},
                        {.name = "k\u1D40", .m = &kt, .cols = &keys},
                        {.name = "scores", .m = &h.scores(), .rows = &tokens, .cols = &keys}};
  const std::string ops[] = {"\u00B7", "="};
  Equation("equation", terms, ops, 7 * ImGui::GetFontSize());
  caption("EquationFlow: every term at one cell size, in lines wrapped like text (the decode view's caches)");
  const Term flow[] = {
      {.name = "q", .m = &h.q, .rows = &tokens},
      {.name = "k", .m = &h.k, .rows = &keys},
      {.name = "v", .m = &h.v, .rows = &keys},
      {.name = "scaled", .m = &h.scaled(), .rows = &tokens, .cols = &keys},
      {.name = "weights", .m = &h.weights(), .rows = &tokens, .cols = &keys, .map = ColourMap::Sequential},
      {.name = "output", .m = &h.output, .rows = &tokens}};
  const std::string spaces[] = {" ", " ", " ", " ", " "};
  EquationFlow("flow", flow, spaces, 1.8f * ImGui::GetFontSize());
}

void arcs_and_blocks(const AppState& state) {
  heading("ArcView and VariantBlocks",
          "ui::ArcView(id, weights, ArcViewOptions{...}), in arc_view.h; ui::VariantBlocks(id, blocks, height), in "
          "variant_blocks.h");
  if (!ImGui::BeginTable("arcs", 2, ImGuiTableFlags_SizingStretchSame)) return;
  ImGui::TableNextColumn();
  caption("head 0's weights as arcs from each query to each key");
  ArcView("arcs", state.trace().heads[0].weights(),
          {.queries = &state.trace().tokens, .keys = &state.trace().context_tokens, .size = {0, 160}});
  ImGui::TableNextColumn();
  caption("areas proportional to the values 32, 8, 1 and 4.5; the second marked");
  const Block blocks[] = {{"value 32", 32, {"32"}, variant_colour(0)},
                          {"value 8", 8, {"8"}, variant_colour(1), true},
                          {"value 1", 1, {"1"}, variant_colour(2)},
                          {"value 4.5", 4.5, {"4.5"}, variant_colour(3)}};
  VariantBlocks("blocks", blocks, 160);
  ImGui::EndTable();
}

// Cache bytes against context for the first two model presets: log axes, the accelerators' memory as
// reference lines, and the same at 32k tokens as bars.
void charts(const AppState& state) {
  heading("LineChart and BarChart",
          "ui::LineChart(id, series, LineChartOptions{...}), in line_chart.h; ui::BarChart(id, bars, "
          "BarChartOptions{...}), in bar_chart.h");
  const std::vector<ModelShape>& presets = state.models.presets;
  if (presets.empty()) {
    caption("(no model presets loaded: the charts draw the presets' caches)");
    return;
  }
  std::vector<Series> series;
  std::vector<Bar> bars;
  for (std::size_t i = 0; i < std::min<std::size_t>(2, presets.size()); ++i) {
    Series s{presets[i].name, {}, {}, preset_colour(i), series_style(i), presets[i].name};  // a pattern, an end label
    for (int e = 10; e <= 20; ++e) {
      s.x.push_back(static_cast<double>(1 << e));
      s.y.push_back(static_cast<double>(kv_cache_size(presets[i], std::uint64_t{1} << e, 1, Dtype::BF16).total_bytes));
    }
    series.push_back(s);
    bars.push_back({presets[i].name, s.y[5], preset_colour(i), "at 32k tokens"});
  }
  std::vector<ReferenceLine> references;
  for (const Accelerator& a : kAccelerators) references.push_back({static_cast<double>(a.bytes), a.label});
  const auto [lo, hi] = positive_extent(series);
  if (!ImGui::BeginTable("charts", 2, ImGuiTableFlags_SizingStretchSame)) return;
  ImGui::TableNextColumn();
  LineChartOptions o;
  o.x = nice_axis(1024, 1 << 20, AxisScale::Log10, NumberUnit::Tokens, "context (tokens, log)");
  o.y = nice_axis(lo, hi, AxisScale::Log10, NumberUnit::DecimalBytes, "cache, bf16 (log)");
  o.references = references;
  o.size = {0, 260};
  o.title = "x and y: AxisScale::Log10, with reference lines";
  LineChart("line", series, o);
  ImGui::TableNextColumn();
  BarChart("bars", bars,
           {.scale = AxisScale::Log10,
            .unit = NumberUnit::DecimalBytes,
            .title = "AxisScale::Log10, with references",
            .references = references});
  ImGui::EndTable();
}

void editors_and_text(AppState& state, GalleryState& g, AppWindowState& window) {
  heading("MatrixEditor, text and the file dialog",
          "ui::MatrixEditor(id, matrix, opts), in matrix_editor.h; ui::TextWrappedAtSpaces, AgreementBadge, FitText, "
          "in text.h; ui::RequestFileDialog, in file_dialog.h");
  if (g.editable_revision != state.document().revision || g.editable.size() == 0) {  // follows the document's edits
    g.editable = state.scenario().input.embeddings;
    g.editable_revision = state.document().revision;
  }
  caption("A copy of the embeddings X: drag or double-click a number (the document is not changed)");
  if (const CellEdit e = MatrixEditor("editor", g.editable, {.row_labels = &state.scenario().input.tokens}))
    g.editable(e.row, e.col) = e.value;
  TextWrappedAtSpaces(
      "TextWrappedAtSpaces breaks lines only at spaces, so 7.392 and 0.0001 are never split across lines.");
  caption(
      "AgreementBadge(agreement(difference, claim)): a tick only within 10^-9, else the difference (0 and 0.003 here)");
  AgreementBadge(agreement(0.0, "The same numbers as computing every token at once"));
  AgreementBadge(agreement(3e-3, "The same numbers as computing every token at once"));
  caption(
      "FitText(label, width) shortens a label with an ellipsis until it fits; the layout check lists every label it "
      "shortened.");
  if (ImGui::Button("Open a scenario\u2026 (File > Open's dialog)"))
    RequestFileDialog(window.file_dialog, FileDialogMode::Open, state.document().path);
}

// The palettes of Style, one swatch per colour, in their order.
void palettes() {
  heading("Style",
          "ui::GetStyle(): accent, okabe_ito (KV heads), tableau (presets; variants take 4 of them), in style.h");
  const Style& s = GetStyle();
  const float names_w = ImGui::CalcTextSize("okabe_ito").x + ImGui::GetFontSize();
  const auto swatches = [&](const char* name, std::span<const ImU32> colours) {
    ImGui::TextUnformatted(name);
    for (std::size_t i = 0; i < colours.size(); ++i) {
      if (i == 0) ImGui::SameLine(names_w);
      else ImGui::SameLine();
      const ImVec2 at = ImGui::GetCursorScreenPos();
      const float side = ImGui::GetFrameHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(at, {at.x + side, at.y + side}, colours[i]);
      ImGui::Dummy({side, side});
    }
  };
  const ImU32 accent[] = {s.accent};
  swatches("accent", accent);
  swatches("okabe_ito", s.okabe_ito);
  swatches("tableau", s.tableau);
}

}  // namespace

void GalleryPanel(AppState& state, GalleryState& gallery, AppWindowState& window, ImVec2 pos, ImVec2 size) {
  BeginPanel("Widget gallery", pos, size);
  if (ImGui::Button("Close the gallery")) gallery.open = false;
  TextDisabledWrapped("Every widget of ui/widgets with its options, drawn from this document's trace (head 0).");
  heatmaps(state, gallery);
  equations(state);
  arcs_and_blocks(state);
  charts(state);
  editors_and_text(state, gallery, window);
  palettes();
  ImGui::End();
}

}  // namespace attn::ui
