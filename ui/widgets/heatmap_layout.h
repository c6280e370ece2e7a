#pragma once
// Where a heatmap's parts go, from text measurements alone, so the layout is tested without a window.
#include <span>
#include <utility>
#include <vector>

namespace attn::ui {

struct HeatmapLayoutInput {
  int rows = 0, cols = 0;
  float avail_w = 0, avail_h = 0;  // the box to fit in; avail_h <= 0 means "as tall as the cells need"
  float row_label_w = 0;           // widest row label, 0 without labels
  float line_h = 0;                // one line of text
  bool labels = true, legend = true;
  bool header = true;      // with labels: the column labels' row too
  bool row_labels = true;  // with labels: the row labels' column too
  float max_cell = 72;
  float value_w = 0;     // the widest number with its padding; 0 when no numbers are shown
  bool fill = false;     // stretch the cells to the box (up to max_cell): a thumbnail of 16x512 is no sliver
  bool texture = false;  // a texture whatever the cells: a rectangle per cell costs a software GL more to draw
  // The grid at least this wide, its cells widened, as far as the box allows: 4,096 rows of q (64 columns) beside
  // X in a formula would otherwise be a line 3 pixels wide, its columns unseen.
  float min_w = 0;
  // A tall matrix with more rows than pixels is widened up to its box's width or a square, whichever is narrower:
  // its rows are texels however wide it is drawn, and X of 4,096 tokens in a formula is no longer a sliver beside
  // W_Q and q, nor drawn wider than tall.
  bool stretch_tall = false;
};

struct HeatmapLayout {
  // Cells are square, except that a matrix of a few rows and many columns (a 3-token X of width 512) gets rows
  // a text line tall instead of slivers, and likewise a few columns of many rows; and a cell a text line tall
  // but narrower than its number is widened for it, as far as the box allows; and a grid narrower than min_w is
  // widened to it; and with stretch_tall, a matrix of more rows than pixels up to its box's width or a square.
  float cell_w = 0, cell_h = 0;
  float label_w = 0;   // row labels' column, including its gap
  float header_h = 0;  // column labels' row
  float legend_h = 0;  // the colour bar and its range below the grid
  float width = 0, height = 0;
  bool texture = false;  // too many or too small cells to draw one by one
};

// The colour bar and its range under a grid, for text lines line_h tall.
inline float legend_height(float line_h) { return line_h + 14.0f; }

// The least room between two column labels written one per cell: a cell is widened for its label by this (as far as
// its box allows), or "the cat sat" over three narrow columns is cut to "the  sat".
inline constexpr float kLabelGap = 6.0f;

inline constexpr int kTextureCells = 64 * 64;  // above this, one texture beats one rectangle per cell
inline constexpr float kMinDrawnCell = 3.0f;   // below this many pixels, cells are texels

HeatmapLayout layout_heatmap(const HeatmapLayoutInput& in);

// Texels along one side of a texture heatmap drawn `pixels` long: one per pixel, at least one, and no more
// than `limit` (the GL's largest texture, at most kMaxTexels), beyond which nearest sampling stretches it.
inline constexpr int kMaxTexels = 4096;
int texture_extent(float pixels, int limit);

// A block of cells, rows [row, row + rows) by columns [col, col + cols).
struct CellBlock {
  int row = 0, col = 0, rows = 1, cols = 1;
  bool contains(int r, int c) const { return r >= row && r < row + rows && c >= col && c < col + cols; }
  bool operator==(const CellBlock&) const = default;
};

// Outlined cells (row, column) as few blocks as one frame each: the runs of adjacent cells along a row, stacked where
// the rows below run over the same columns. A lesson's outlined row is one frame around the row, not a frame per cell
// with the dark edge of each drawn over its neighbour's white one. Cells outside rows x cols and repeats are dropped.
std::vector<CellBlock> outline_blocks(std::span<const std::pair<int, int>> cells, int rows, int cols);

}  // namespace attn::ui
