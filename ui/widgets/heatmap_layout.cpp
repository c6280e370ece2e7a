#include "ui/widgets/heatmap_layout.h"

#include <algorithm>
#include <cmath>

namespace attn::ui {

HeatmapLayout layout_heatmap(const HeatmapLayoutInput& in) {
  HeatmapLayout l;
  if (in.rows <= 0 || in.cols <= 0) return l;
  l.label_w = in.labels && in.row_labels ? in.row_label_w + 0.5f * in.line_h : 0.0f;
  l.header_h = in.labels && in.header ? in.line_h + 2.0f : 0.0f;
  l.legend_h = in.legend ? legend_height(in.line_h) : 0.0f;
  float cell = std::min(in.max_cell, (in.avail_w - l.label_w) / static_cast<float>(in.cols));
  if (in.avail_h > 0) cell = std::min(cell, (in.avail_h - l.header_h - l.legend_h) / static_cast<float>(in.rows));
  // Whole quarter pixels keep drawn grids crisp; below a pixel the texture is simply scaled down.
  const auto snap = [](float c) { return c >= 1.0f ? std::floor(c * 4.0f) / 4.0f : std::max(c, 0.01f); };
  l.cell_w = l.cell_h = snap(cell);
  // Stretched only where every row (column) then gets at least half a text line (at most one) in the box.
  const float line = std::min(in.line_h, in.max_cell);
  if (cell < 0.5f * line) {
    const float rows = static_cast<float>(in.rows), cols = static_cast<float>(in.cols);
    // Without a height given, no taller than the box is wide.
    const float room_h = (in.avail_h > 0 ? in.avail_h - l.header_h - l.legend_h : in.avail_w - l.label_w) / rows;
    if (room_h >= 0.5f * line) l.cell_h = snap(std::min(line, room_h));
    else if ((in.avail_w - l.label_w) / cols >= 0.5f * line)
      l.cell_w = snap(std::min(line, (in.avail_w - l.label_w) / cols));
    else if (room_h > l.cell_h) l.cell_h = snap(room_h);  // many rows and many columns: as tall as the box lets it be
  }
  if (in.fill && in.avail_h > 0) {
    l.cell_w = snap(std::max(l.cell_w, std::min(in.max_cell, (in.avail_w - l.label_w) / static_cast<float>(in.cols))));
    l.cell_h = snap(std::max(
        l.cell_h, std::min(in.max_cell, (in.avail_h - l.header_h - l.legend_h) / static_cast<float>(in.rows))));
  }
  // Numbers need width more than height: a cell that can hold a line of text is widened to hold its number.
  const float room_w = (in.avail_w - l.label_w) / static_cast<float>(in.cols);
  if (in.value_w > l.cell_w && l.cell_h >= in.line_h &&
      room_w > l.cell_w)  // rounded up: snapping down would lose a digit
    l.cell_w = in.value_w <= room_w ? std::ceil(in.value_w * 4.0f) / 4.0f : snap(room_w);
  if (in.stretch_tall && l.cell_h < 1.0f) {  // no wider than tall: a square or wide matrix is never widened
    const float square = l.cell_h * static_cast<float>(in.rows) / static_cast<float>(in.cols);
    l.cell_w = std::max(l.cell_w, snap(std::min(room_w, square)));
  }
  const float grid_min = std::min(in.min_w, in.avail_w - l.label_w);
  if (l.cell_w * static_cast<float>(in.cols) < grid_min) l.cell_w = grid_min / static_cast<float>(in.cols);
  l.width = l.label_w + l.cell_w * static_cast<float>(in.cols);
  l.height = l.header_h + l.cell_h * static_cast<float>(in.rows) + l.legend_h;
  l.texture = in.texture || in.rows * in.cols > kTextureCells || std::min(l.cell_w, l.cell_h) < kMinDrawnCell;
  return l;
}

std::vector<CellBlock> outline_blocks(std::span<const std::pair<int, int>> cells, int rows, int cols) {
  std::vector<std::pair<int, int>> in;
  for (const auto& [r, c] : cells)
    if (r >= 0 && r < rows && c >= 0 && c < cols) in.emplace_back(r, c);
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  std::vector<CellBlock> runs;  // along each row, top to bottom
  for (const auto& [r, c] : in) {
    if (!runs.empty() && runs.back().row == r && runs.back().col + runs.back().cols == c) ++runs.back().cols;
    else runs.push_back({r, c, 1, 1});
  }
  std::vector<CellBlock> blocks;
  for (const CellBlock& run : runs) {
    const auto above = std::find_if(blocks.begin(), blocks.end(), [&](const CellBlock& b) {
      return b.col == run.col && b.cols == run.cols && b.row + b.rows == run.row;
    });
    if (above != blocks.end()) ++above->rows;
    else blocks.push_back(run);
  }
  return blocks;
}

int texture_extent(float pixels, int limit) {
  const float most = static_cast<float>(limit > 0 ? std::min(limit, kMaxTexels) : kMaxTexels);  // 0: the GL did not say
  return static_cast<int>(std::clamp(std::ceil(pixels), 1.0f, most));
}

}  // namespace attn::ui
