// The Model view: the transformer around attention as a column of layers, every box a live heatmap of what
// flows out of it for the tokens, with its colour bar, token rows and feature columns (a click opens it large, with
// its numbers); every head of every layer as small multiples (rows = layers); the next-token probabilities. A layer's
// attention opens in the pipeline; a lesson page's parts are framed in the accent colour.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/model_bytes.h"
#include "core/text_format.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/model_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/bar_chart.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/heatmap_layout.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

// The numbers of one part's output for one token, named as the stream's, and what a click does.
void stream_tooltip(const std::string& where, const std::vector<std::string>& tokens, const Matrix& m,
                    const HeatmapResult& r) {
  if (r.hovered_row < 0) return;
  ImGui::BeginTooltip();
  ImGui::Text("%s, \"%s\" (position %d), dimension %d:  %s", where.c_str(),
              tokens[static_cast<std::size_t>(r.hovered_row)].c_str(), r.hovered_row, r.hovered_col,
              format_fixed(m(r.hovered_row, r.hovered_col), matrix_decimals(m)).c_str());
  ImGui::TextDisabled("click to open the box large, with its numbers");
  ImGui::EndTooltip();
}

// The labels around the boxes (tokens, feature indices) in smaller type than the text, before any is skipped.
constexpr float kSmallType = 0.8f;

// Where a column's items end, for fold_height: a y on the screen kept in the column's content coordinates.
void fold_break_at(AppState& state, float screen_y) {
  ModelPanelView& v = state.model_view;
  v.folds[static_cast<std::size_t>(v.column)].breaks.push_back(screen_y - ImGui::GetWindowPos().y +
                                                               ImGui::GetScrollY());
}

void fold_break(AppState& state) { fold_break_at(state, ImGui::GetItemRectMax().y); }

// A scrolling column ending between its items (fold_height) as they were in the frame before: a projected view
// shows no line cut in half at its bottom.
void begin_column(AppState& state, int column, const char* id, float width, float height) {
  ModelPanelView::Fold& f = state.model_view.folds[static_cast<std::size_t>(column)];
  const float shown = fold_height(f.breaks, f.scroll, height);
  f.breaks.clear();
  f.height = height;
  state.model_view.column = column;
  ImGui::BeginChild(id, {width, shown}, false);
}

void end_column(AppState& state) {
  state.model_view.folds[static_cast<std::size_t>(state.model_view.column)].scroll = ImGui::GetScrollY();
  ImGui::EndChild();
}

float scaled_width(const std::string& s, float scale) {
  return ImGui::GetFont()->CalcTextSizeA(ImGui::GetFontSize() * scale, FLT_MAX, 0.0f, s.c_str()).x;
}

void scaled_text(ImVec2 at, const std::string& s, float scale) {
  ImGui::GetWindowDrawList()->AddText(ImGui::GetFont(), ImGui::GetFontSize() * scale, at,
                                      ImGui::GetColorU32(ImGuiCol_Text), s.c_str());
}

// The rows of a box row: one per token, each labelled on the left (fit_row_labels: smaller type before a skip).
struct RowGeometry {
  float label_w;
  RowLabelFit fit;
};

RowGeometry row_geometry(const std::vector<std::string>& tokens) {
  const float line = ImGui::GetTextLineHeight();
  const RowLabelFit fit = fit_row_labels(static_cast<int>(tokens.size()), 10.0f * line, line, kSmallType * line);
  float label_w = 0;
  for (const std::string& t : tokens) label_w = std::max(label_w, scaled_width(t, fit.label_scale));
  // A pixel to spare: FitText measures rounded up.
  return {std::min(std::ceil(label_w) + 1, 6 * line) + ImGui::GetStyle().ItemSpacing.x, fit};
}

void token_labels(const std::vector<std::string>& tokens, const RowGeometry& g) {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float text_h = ImGui::GetTextLineHeight() * g.fit.label_scale;
  for (std::size_t r = 0; r < tokens.size(); r += static_cast<std::size_t>(g.fit.every)) {
    const std::string shown = FitText(tokens[r], (g.label_w - ImGui::GetStyle().ItemSpacing.x) / g.fit.label_scale);
    scaled_text({at.x, at.y + static_cast<float>(r) * g.fit.row_h + (g.fit.row_h - text_h) / 2}, shown,
                g.fit.label_scale);
  }
  ImGui::Dummy({g.label_w, g.fit.row_h * static_cast<float>(tokens.size())});
}

// The label of a box's column: its name (a vocabulary token) where it has one, else its feature index.
std::string column_label(const std::vector<std::string>* names, Eigen::Index c) {
  return names && c < static_cast<Eigen::Index>(names->size()) ? (*names)[static_cast<std::size_t>(c)]
                                                               : std::to_string(c);
}

// The widest of a box's column labels in type of `scale`; a large vocabulary is measured over its first names only
// (every frame).
float widest_column_label(Eigen::Index cols, const std::vector<std::string>* names, float scale) {
  float widest = scaled_width(std::to_string(cols - 1), scale);
  for (Eigen::Index c = 0; names && c < std::min<Eigen::Index>(cols, 512); ++c)
    widest = std::max(widest, scaled_width(column_label(names, c), scale));
  return widest;
}

// The gap between two column labels.
float column_label_gap() { return 0.4f * ImGui::GetTextLineHeight(); }

// The cells' width of a box `width` wide: the heatmap caps a cell's edge and snaps it to quarter pixels.
float box_cell_width(float width, Eigen::Index cols) {
  return std::min(HeatmapOptions{}.max_cell, std::floor(width / static_cast<float>(cols) * 4.0f) / 4.0f);
}

// The type of a row of boxes' column labels: the body font where every box's cells have room for it (the back of the
// room reads them), smaller down to kSmallType before any label is skipped.
float column_label_type(const std::vector<StreamPart>& parts, float width) {
  float scale = 1.0f;
  for (const StreamPart& p : parts) {
    const Eigen::Index cols = p.values->cols();
    scale =
        std::min(scale, column_label_scale(box_cell_width(width, cols), widest_column_label(cols, p.column_names, 1.0f),
                                           column_label_gap(), kSmallType));
  }
  return scale;
}

// The feature indices (or the columns' names) over a box's columns in type of `scale`, every k-th where they would
// crowd, in the strip above its cells.
void column_labels(ImVec2 cells, float cell_w, Eigen::Index cols, const std::vector<std::string>* names, float scale) {
  const float line = ImGui::GetTextLineHeight();
  const int every = column_label_every(cell_w, widest_column_label(cols, names, scale) + column_label_gap());
  for (Eigen::Index c = 0; c < cols; c += every) {
    const std::string label = column_label(names, c);
    const float x = cells.x + cell_w * (static_cast<float>(c) + 0.5f) - scaled_width(label, scale) / 2;
    scaled_text({x, cells.y - scale * line}, label, scale);
  }
}

// The column scrolled so that what is drawn next is at its top (SetScrollHereY would place the previous line there,
// and the colour bar's numbers of the row above would show cut at the edge).
void scroll_to_cursor() { ImGui::SetScrollY(ImGui::GetCursorPosY()); }

// scroll_to_cursor for an outlined row, again each frame until the row stays put: the rows above it settle over the
// first frames (the column's labels are measured once drawn), and a scroll set in the first frame leaves the row
// partly under the ones above it. Clears `pending` once the row has not moved since the frame before (`last_y`).
void scroll_to_settled_row(bool& pending, float& last_y) {
  const float y = ImGui::GetCursorPosY();
  scroll_to_cursor();
  if (y == last_y) pending = false;
  last_y = pending ? y : -1;
}

// Where a box's row is in the column: the input, a layer's sublayer row, the output.
struct BoxRowPlace {
  ModelPart part;
  std::string where;  // "layer 0", in tooltips and the large view's title
};

// How a box is marked: accented while its layer is pointed at, framed strongly when the lesson page is about it;
// and its column labels' type.
struct BoxLook {
  bool accent = false, outlined = false;
  float label_scale = kSmallType;
};

// One box: a heatmap of (N, d) with its colour bar and range under it, its feature indices over it. True if clicked.
bool stream_box(const StreamPart& part, const BoxRowPlace& place, const std::vector<std::string>& tokens, ImVec2 size,
                const BoxLook& look) {
  ImGui::PushID(part.title.c_str());
  const float line = ImGui::GetTextLineHeight();
  HeatmapOptions o;
  o.size = {size.x, size.y + legend_height(line)};
  o.flags = HeatmapFlags_NoValues | HeatmapFlags_NoTooltip | HeatmapFlags_NoLabels | HeatmapFlags_Fill;
  const HeatmapResult r = Heatmap("m", *part.values, o);
  const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
  const Eigen::Index cols = part.values->cols();
  // The cells' width: the heatmap caps a cell's edge, and its colour bar may be wider than its cells.
  const float cell_w =
      std::min(r.size.x / static_cast<float>(cols), std::floor(size.x / static_cast<float>(cols) * 4.0f) / 4.0f);
  column_labels(lo, cell_w, cols, part.column_names, look.label_scale);
  stream_tooltip(place.where + ": " + part.title, tokens, *part.values, r);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (look.outlined) {
    dl->AddRect({lo.x - 4, lo.y - 4 - look.label_scale * line}, {hi.x + 4, hi.y + 2}, accent_colour(), 3.0f, 0, 3.5f);
    // A page's outline is its point: out of the panel's sight it is a finding of the layout check.
    const ImVec2 clip_lo = dl->GetClipRectMin(), clip_hi = dl->GetClipRectMax();
    if (lo.y < clip_lo.y || hi.y > clip_hi.y || lo.x < clip_lo.x || hi.x > clip_hi.x)
      ReportHere("the outlined box " + place.where + ": " + part.title + " is not wholly in sight");
  } else if (look.accent) {
    dl->AddRect({lo.x - 3, lo.y - 3}, {hi.x + 3, hi.y + 3}, accent_colour(), 3.0f, 0, 2.0f);
  }
  ImGui::PopID();
  return r.hovered_row >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left);
}

void box_titles(AppState& state, const std::vector<StreamPart>& parts, const RowGeometry& g, float width, float arrow,
                int layer) {
  const float x0 = ImGui::GetCursorPosX();
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
}

// A row of boxes sharing the width after the token labels, joined by arrows, each under its title.
void box_row(AppState& state, const std::vector<StreamPart>& parts, const BoxRowPlace& place) {
  const std::vector<std::string>& tokens = state.model_doc.trace().tokens;
  const RowGeometry g = row_geometry(tokens);
  const int layer = place.part.place == ModelPart::Place::Layer ? place.part.layer : -1;
  const bool outlined = outlines(state.model_view.outline, place.part);
  if (outlined && state.model_view.scroll_to_outlined)
    scroll_to_settled_row(state.model_view.scroll_to_outlined, state.model_view.outlined_row_y);
  const float arrow = ImGui::CalcTextSize(" \u2192 ").x, n = static_cast<float>(parts.size());
  // A few pixels kept at the right for the outline's frame.
  const float width = (ImGui::GetContentRegionAvail().x - g.label_w - arrow * (n - 1) - 10.0f) / n;
  box_titles(state, parts, g, width, arrow, layer);
  fold_break(state);
  const float label_scale = column_label_type(parts, width);
  ImGui::Dummy({0, label_scale * ImGui::GetTextLineHeight()});  // the feature indices
  // The column may end under any row of cells: the row labels are a line each.
  const float cells_top = ImGui::GetCursorScreenPos().y;
  for (std::size_t r = 1; r < tokens.size(); ++r) fold_break_at(state, cells_top + g.fit.row_h * static_cast<float>(r));
  token_labels(tokens, g);
  const float height = g.fit.row_h * static_cast<float>(tokens.size());
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
    const BoxLook look{attention && state.model_view.last_hovered_layer == layer, outlined, label_scale};
    if (stream_box(parts[i], place, tokens, {width, height}, look))
      state.model_view.opened = ModelPanelView::OpenedBox{place.part, parts[i].title};
    if (attention && ImGui::IsItemHovered()) state.model_view.hovered_layer = layer;
  }
  fold_break_at(state, ImGui::GetItemRectMax().y + 4);  // under the frames around the boxes
}

// The input box and the output boxes, as the column shows them.
std::vector<StreamPart> input_parts(const Model& m, const ModelTrace& t) {
  const std::string embedded = m.positions == Positions::Learned      ? "x = embedding[tokens] + W_P"
                               : m.positions == Positions::Sinusoidal ? "x = embedding[tokens] + sinusoids"
                                                                      : "x = embedding[tokens]";
  return {{embedded, &t.embedded, false}};
}

std::vector<StreamPart> output_parts(const Model& m, const ModelTrace& t) {
  std::vector<StreamPart> out;
  const std::string final = norm_symbol(m) + "_final(x)";
  if (m.norm == Norm::Pre) out.push_back({final, &t.final, false});
  // The unembedding reads what the box before it made: the normalised stream in Pre-LN, the stream itself in Post-LN.
  const std::string unembedding = m.tied_unembedding ? "embedding\u1D40" : "unembedding";
  out.push_back({"logits = " + (m.norm == Norm::Pre ? final : std::string("x")) + " \u00B7 " + unembedding, &t.logits,
                 false, "logits", &m.vocab});
  return out;
}

// The row of boxes a part of the column names (a layer's sublayer row), empty if the model has no such row.
std::vector<StreamPart> row_parts(const Model& m, const ModelTrace& t, const ModelPart& p) {
  if (p.place == ModelPart::Place::Input) return input_parts(m, t);
  if (p.place == ModelPart::Place::Output) return output_parts(m, t);
  if (p.layer < 0 || p.layer >= static_cast<int>(t.layers.size())) return {};
  std::vector<std::vector<StreamPart>> rows = layer_parts(m, t.layers[static_cast<std::size_t>(p.layer)]);
  if (p.sublayer < 0 || p.sublayer >= static_cast<int>(rows.size())) return {};
  return rows[static_cast<std::size_t>(p.sublayer)];
}

std::string place_name(const ModelPart& p) {
  return p.place == ModelPart::Place::Input    ? "input"
         : p.place == ModelPart::Place::Output ? "output"
                                               : "layer " + std::to_string(p.layer);
}

void layer_block(AppState& state, int l) {
  const Model& m = *state.model_doc.shown().resolved;
  const LayerTrace& t = state.model_doc.trace().layers[static_cast<std::size_t>(l)];
  ImGui::PushID(l);
  // A page about this layer shows it from its title down.
  const std::vector<ModelPart>& outline = state.model_view.outline;
  if ((outlines(outline, {ModelPart::Place::Layer, l, 0}) || outlines(outline, {ModelPart::Place::Layer, l, 1})) &&
      std::exchange(state.model_view.scroll_to_outlined, false))
    scroll_to_cursor();
  ImGui::PushFont(title_font());
  ImGui::Text("Layer %d", l);
  ImGui::PopFont();
  ImGui::SameLine();
  if (ImGui::Button("Open in the pipeline \u25B8")) state.visit_model_layer(l);
  fold_break(state);
  const std::vector<std::vector<StreamPart>> rows = layer_parts(m, t);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const ModelPart part{ModelPart::Place::Layer, l, static_cast<int>(r)};
    box_row(state, rows[r], {part, place_name(part)});
  }
  ImGui::PopID();
  ImGui::Spacing();
}

void layer_column(AppState& state) {
  if (std::exchange(state.model_view.scroll_to_top, false)) ImGui::SetScrollY(0.0f);
  const Model& m = *state.model_doc.shown().resolved;
  const ModelTrace& t = state.model_doc.trace();
  box_row(state, input_parts(m, t), {{ModelPart::Place::Input}, "input"});
  ImGui::Spacing();
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) layer_block(state, l);
  if (std::exchange(state.model_view.scroll_to_output, false)) ImGui::SetScrollHereY(0.0f);
  // A page outlining the output scrolls to its boxes (box_row), not to this title: the next-token bars under them,
  // which such a page talks about, need the room.
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted("Output");
  ImGui::PopFont();
  fold_break(state);
  box_row(state, output_parts(m, t), {{ModelPart::Place::Output}, "output"});
}

// The box opened large: its numbers in its cells where they fit, the tokens and feature indices as labels. Escape or
// the button closes it; an attention box leads on to its layer in the pipeline. False once it is closed.
bool opened_box(AppState& state) {
  const Model& m = *state.model_doc.shown().resolved;
  const ModelTrace& t = state.model_doc.trace();
  const ModelPanelView::OpenedBox& box = *state.model_view.opened;
  const std::vector<StreamPart> row = row_parts(m, t, box.part);
  const auto it = std::find_if(row.begin(), row.end(), [&](const StreamPart& p) { return p.title == box.title; });
  if (it == row.end() || ImGui::Button("Close (Esc)") || key_pressed(Key::Escape, KeyMods_None, false)) {
    state.model_view.opened.reset();  // the model changed under it, or the reader is done
    return false;
  }
  if (it->attention) {
    ImGui::SameLine();
    if (ImGui::Button(("Open layer " + std::to_string(box.part.layer) + " in the pipeline \u25B8").c_str()))
      state.visit_model_layer(box.part.layer);
  }
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces(place_name(box.part) + ": " + it->title + "  [" + std::to_string(it->values->rows()) + "\u00D7" +
                      std::to_string(it->values->cols()) + "]");
  ImGui::PopFont();
  TextDisabledWrapped("Rows: the tokens. Columns: the features, numbered from 0.");
  HeatmapOptions o;
  o.row_labels = &t.tokens;
  o.size = ImGui::GetContentRegionAvail();
  o.max_cell = 160.0f;
  Heatmap("opened", *it->values, o);
  return true;
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
    if (const std::optional<std::string> why = state.model_doc.show_layer(l)) state.say("Layer not shown: " + *why);
}

// A thumbnail's caption: over a layer's first head its label (head_grid_label), then the head's number, shortened to
// what fits over the thumbnail.
void head_caption(AppState& state, int l, int h, float cell) {
  float room = cell;
  if (h == 0) {
    head_grid_label(state, l);
    room -= ImGui::GetItemRectSize().x + ImGui::GetStyle().ItemSpacing.x;
    ImGui::SameLine();
  }
  const std::string name = "head " + std::to_string(h), brief = "h" + std::to_string(h);
  ImGui::TextDisabled("%s", TextWidth(name) <= room ? name.c_str() : TextWidth(brief) <= room ? brief.c_str() : "");
}

// One head's weights as a thumbnail `cell` square. The hover names layer, head and weight; a click opens the layer.
// Only the shown layer's heads are kept whole; the others are drawn from their overviews (the same numbers when the
// tokens are few).
void head_thumbnail(AppState& state, int l, int h, float cell) {
  const ModelTrace& t = state.model_doc.trace();
  const LayerTrace& layer = t.layers[static_cast<std::size_t>(l)];
  const int n = static_cast<int>(t.tokens.size());
  ImGui::PushID(h);
  const bool whole = layer.kept;
  HeatmapOptions o;
  o.map = ColourMap::Sequential;
  o.range = ValueRange{0, 1};
  o.visible = whole ? &*layer.attention.heads[static_cast<std::size_t>(h)].mask : &layer.mask_overview;
  o.size = {cell, cell};
  o.max_cell = cell;
  o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
            HeatmapFlags_Fill;
  const Matrix& w = whole ? layer.attention.heads[static_cast<std::size_t>(h)].weights()
                          : layer.weights_overview[static_cast<std::size_t>(h)];
  const HeatmapResult r = Heatmap("w", w, o);
  if (r.hovered_row >= 0) {
    state.model_view.hovered_layer = l;
    std::string text = head_cell_text(l, h, t.tokens, w, r.hovered_row, r.hovered_col);
    if (w.rows() != n) text += "\n(click L" + std::to_string(l) + " to keep this layer's heads whole)";
    ImGui::SetTooltip("%s\nclick to open layer %d in the pipeline", text.c_str(), l);
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
      if (state.visit_model_layer(l)) state.pipeline.head = h;  // clamped when its trace is shown
  }
  ImGui::PopID();
}

// Layers [first, last) side by side, each head in its slot (`most` slots a layer): the captions, then the thumbnails.
void head_grid_row(AppState& state, int first, int last, int most, float cell) {
  const ModelTrace& t = state.model_doc.trace();
  const float x0 = ImGui::GetCursorPosX(), gap = ImGui::GetStyle().ItemSpacing.x;
  for (const bool captions : {true, false}) {
    bool started = false;
    for (int l = first; l < last; ++l) {
      ImGui::PushID(l);
      const int heads = static_cast<int>(t.layers[static_cast<std::size_t>(l)].weights_overview.size());
      for (int h = 0; h < heads; ++h) {
        const float x = x0 + static_cast<float>((l - first) * most + h) * (cell + gap);
        if (started) ImGui::SameLine(x);
        else ImGui::SetCursorPosX(x);
        started = true;
        if (captions) head_caption(state, l, h, cell);
        else head_thumbnail(state, l, h, cell);
      }
      ImGui::PopID();
    }
  }
  fold_break(state);
}

// Every head of every layer as large as width x height allows (fit_head_grid): a layer's heads side by side, and
// layers side by side where that makes them larger.
void model_head_grid(AppState& state, float width, float height) {
  const ModelTrace& t = state.model_doc.trace();
  int most = 1;
  for (const LayerTrace& l : t.layers) most = std::max(most, static_cast<int>(l.weights_overview.size()));
  const ImGuiStyle& style = ImGui::GetStyle();
  const int layers = static_cast<int>(t.layers.size());
  const HeadGridFit fit = fit_head_grid(layers, most, width, height,
                                        ImGui::GetTextLineHeight() + 2 * style.ItemSpacing.y, style.ItemSpacing.x);
  for (int first = 0; first < layers; first += fit.layers_per_row)
    head_grid_row(state, first, std::min(layers, first + fit.layers_per_row), most, fit.cell);
}

// The likeliest next tokens shown as bars.
constexpr int kShownPredictions = 5;

// The row the bars are about: the one pointed at in the last frame, else the last (new tokens move the bars along).
int predicted_position(const AppState& state) {
  const int rows = static_cast<int>(state.model_doc.trace().tokens.size());
  return std::clamp(state.model_view.position < 0 ? rows - 1 : state.model_view.position, 0, rows - 1);
}

// The next token after each position: the probabilities over the vocabulary, and the most likely as bars for the
// position pointed at (the last one otherwise).
void predictions(AppState& state, float width) {
  const ModelTrace& t = state.model_doc.trace();
  const Model& m = *state.model_doc.shown().resolved;
  const int rows = static_cast<int>(t.tokens.size());
  const int position = predicted_position(state);
  std::vector<Bar> bars;
  for (const Prediction& p : top_predictions(t, m.vocab, position, kShownPredictions))
    bars.push_back({p.token, p.probability, accent_colour(), ""});
  BarChartOptions b;
  b.unit = NumberUnit::Probability;
  b.size = {width, 0};
  // Within what is in sight below, where it starts in sight: the axis under the bars is read too. The column's
  // height before it ends between items: a chart sized to the shortened one would keep it short.
  const ModelPanelView& v = state.model_view;
  const float in_sight = ImGui::GetWindowPos().y + v.folds[static_cast<std::size_t>(v.column)].height -
                         ImGui::GetStyle().WindowPadding.y - ImGui::GetCursorScreenPos().y;
  if (in_sight > 0) b.max_height = in_sight;
  // A lesson page about the output talks about the bars: they take what is in sight, and the layout check wants that
  // to be a third of the window (once the page's scroll has settled).
  const bool page_chart =
      outlines(state.model_view.outline, {ModelPart::Place::Output}) && !state.model_view.scroll_to_outlined;
  if (page_chart && in_sight > 0) b.size.y = in_sight;
  BarChart("next", bars, b);
  fold_break(state);
  if (page_chart) NoteChartPlotHere("Next token", ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
  TextDisabledWrapped("Every position's probabilities (rows: after the token, columns: the next); point at a row.");
  fold_break(state);
  HeatmapOptions o;
  o.map = ColourMap::Sequential;
  o.range = ValueRange{0, 1};
  o.row_labels = &t.tokens;
  o.col_labels = &m.vocab;
  // Rows a line high, columns as wide as the width gives them: the vocabulary's names stay readable.
  const float line = ImGui::GetTextLineHeight();
  o.size = {width, line * static_cast<float>(rows + 4)};
  o.flags = HeatmapFlags_Fill | HeatmapFlags_NoValues;  // the bars above give the numbers
  o.highlight_row = position;
  const HeatmapResult r = Heatmap("probabilities", t.probabilities, o);
  fold_break(state);
  state.model_view.position = r.hovered_row;
}

// Beside the layers (`beside`), the heads take what the column's height leaves above the next-token title and its
// chart at the bars' own height; under the predictions, a third of it.
void heads_section(AppState& state, float height, bool beside) {
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted("Every head");
  ImGui::PopFont();
  fold_break(state);
  TextDisabledWrapped(
      "Each head's attention weights (rows: queries, columns: keys). Point at a cell; click to open "
      "its layer.");
  fold_break(state);
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float below = 4 * spacing + title_font_size() + BarChartHeight(kShownPredictions);
  model_head_grid(state, ImGui::GetContentRegionAvail().x,
                  beside ? height - ImGui::GetCursorPosY() - below : height * 0.3f);
  ImGui::Spacing();
}

void predictions_section(AppState& state) {
  // The answer first: the likeliest next tokens after the position chosen in the map below them.
  const int position = predicted_position(state);
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces("Next token after \"" + state.model_doc.trace().tokens[static_cast<std::size_t>(position)] +
                      "\" (position " + std::to_string(position) + ")");
  ImGui::PopFont();
  fold_break(state);
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
  TextDisabledWrapped("memory: " + budget_share_text(state.model_doc.held_bytes(), state.memory_budget,
                                                     state.held_beside(WindowPart::Model)));
  // What the share holds on demand: a third line of the header took the room of the bars on the output's page.
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The Model view holds every layer's stream, layer %d's heads whole, the others in blocks, and "
        "the undo history",
        shown.layer);
}

}  // namespace

void LayerBreadcrumb(AppState& state) {
  const std::optional<LayerVisit>& visit = state.layer_visit();
  if (!visit) return;
  const std::string back(view_title(visit->from));
  if (ImGui::Button(("\u25C2 " + back + " " + visit->model_name).c_str()))
    state.pending.ask_to_replace([&state] { state.end_layer_visit(); }, false);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Back to the %s view (and the scenario open before)", back.c_str());
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
  if (state.model_view.opened && opened_box(state)) {
    ImGui::End();
    return;
  }
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  // Side by side where three boxes of a layer keep room for their titles; else one column to scroll.
  const bool side_by_side = avail_w >= 48.0f * ImGui::GetFontSize();
  begin_column(state, 0, "column", side_by_side ? avail_w * 0.52f : 0, avail_h);
  layer_column(state);
  if (side_by_side) {  // the heads beside the column, then the next token
    end_column(state);
    ImGui::SameLine();
    begin_column(state, 1, "heads", 0, avail_h);
    heads_section(state, avail_h, true);
    predictions_section(state);
  } else {  // the next token right under the output it comes from, then the heads
    ImGui::Spacing();
    predictions_section(state);
    heads_section(state, avail_h, false);
  }
  end_column(state);
  ImGui::End();
}

}  // namespace attn::ui
