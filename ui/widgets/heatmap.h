#pragma once
// ui::Heatmap: a matrix as coloured cells with token labels, values where they fit, a colour legend,
// hidden cells grey and hatched. In the manner of ImPlot's PlotHeatmap: one call per frame, options in
// a small struct, the hovered cell returned so views can explain it.
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "ui/logic/colour_map.h"

namespace attn::ui {

enum HeatmapFlags_ {
  HeatmapFlags_None = 0,
  HeatmapFlags_NoValues = 1 << 0,        // never print the numbers, even where they fit
  HeatmapFlags_NoLegend = 1 << 1,        // no colour bar with the range
  HeatmapFlags_NoLabels = 1 << 2,        // no token labels (thumbnails)
  HeatmapFlags_Clickable = 1 << 3,       // report clicks on cells (toggling a custom mask)
  HeatmapFlags_NoTooltip = 1 << 4,       // the caller explains the hovered cell itself
  HeatmapFlags_Fill = 1 << 5,            // fill the box: cells stretched to its width and height (thumbnails)
  HeatmapFlags_Texture = 1 << 6,         // one texture, never a rectangle per cell: many thumbnails redrawn every frame
  HeatmapFlags_StretchTall = 1 << 7,     // more rows than pixels: up to the box's width or a square
  HeatmapFlags_NoColumnLabels = 1 << 8,  // rows labelled, columns not: a vector's dimensions, which no text names
  HeatmapFlags_NoRowLabels = 1 << 9,     // columns labelled, rows not: beside a matrix whose labels name them
  HeatmapFlags_NoPictureMenu = 1 << 10,  // the right-click is the caller's (a tile it knocks out), not a picture's
};
using HeatmapFlags = int;

struct HeatmapOptions {
  const std::vector<std::string>* row_labels = nullptr;  // one per row; nullptr numbers them
  const std::vector<std::string>* col_labels = nullptr;  // one per column; nullptr numbers them
  ColourMap map = ColourMap::Diverging;
  std::optional<ValueRange> range;  // nullopt: auto_range
  const Matrix* visible = nullptr;  // same shape; 0 marks a hidden cell
  float max_cell = 72.0f;           // the largest cell edge, in pixels
  ImVec2 size = {0, 0};             // the box to fit in; 0 = available width, height as needed
  float min_width = 0;              // the cells at least this wide together, as far as the box allows
  int highlight_row = -1;           // outline a row or a column (it feeds a cell hovered elsewhere)
  int highlight_col = -1;
  int selected_row = -1, selected_col = -1;       // outline one cell strongly
  std::span<const std::pair<int, int>> outlined;  // more cells outlined as strongly (a lesson page's)
  int outlined_col0 = 0;  // where column 0 sits in the matrix `outlined` was given for (a head's slice of concat)
  // A focused matrix (ui/logic/focus.h): the original row or column each drawn one stands for, kElided for a run
  // of elided ones, drawn as a row of "⋮" or a column of "⋯". Empty: drawn whole. With slots, the highlighted,
  // selected, outlined and hovered rows and columns are the original matrix's.
  std::span<const int> row_slots, col_slots;
  HeatmapFlags flags = HeatmapFlags_None;
};

struct HeatmapResult {
  int hovered_row = -1, hovered_col = -1;
  bool clicked = false;
  ImVec2 size;
  float outlined_y = -1;  // screen y of the first of `outlined` drawn, -1 if none was
};

HeatmapResult Heatmap(const char* id, const Matrix& m, const HeatmapOptions& opts = {});

// Whether a matrix is small enough to write its numbers in its cells (cell_format's shows_numbers).
bool HeatmapShowsNumbers(const Matrix& m);
// A token label as drawn beside a matrix: shortened like text tables (24 columns) and to kMaxLabelEms, so a long or
// wide one ("WWWW…") never takes the matrix's room; `i` itself without labels.
inline constexpr float kMaxLabelEms = 8.0f;
std::string HeatmapLabel(const std::vector<std::string>* labels, Eigen::Index i);
// The cell width the widest of m's (visible) numbers needs at the matrix's decimals, with its padding; 0 for a
// matrix that shows no numbers. Remembered by the matrix's content.
float HeatmapValueWidth(const Matrix& m, const Matrix* visible = nullptr);

// What the matrices drawn until the matching Pop hold changes only with `version` (a view over an immutable
// trace passes the trace's ticket): a large heatmap then reuses its texture and value range without reading
// every cell each frame. Version 0, the default, means unknown: the content is hashed.
void PushHeatmapVersion(std::uint64_t version);
void PopHeatmapVersion();
// The version pushed last (0 when none is): other widgets over the same matrices remember by it too.
std::uint64_t HeatmapVersion();
// Ranges computed ahead for matrices drawn until the matching Pop (the shown trace's, made on the worker); they must
// outlive it. nullptr: none.
void PushHeatmapRanges(const KnownRanges* known);
void PopHeatmapRanges();

// How many times the pixels of a large heatmap's texture have been replaced (a number that grows, never repeating for
// a texture made again); 0 for a texture not made here (the font atlas). A drawn frame that would sample the same
// textures at the same versions with the same vertices looks the same (app/gui/damage.h).
std::uint64_t TexturePixelsVersion(ImTextureID texture);

// Frees the textures large heatmaps were drawn with; call before the GL context goes.
void ReleaseHeatmapTextures();

}  // namespace attn::ui
