#include "ui/heatmap_layout.h"

#include <algorithm>
#include <cmath>

namespace attn::ui {

HeatmapLayout layout_heatmap(const HeatmapLayoutInput& in) {
  HeatmapLayout l;
  if (in.rows <= 0 || in.cols <= 0) return l;
  l.label_w = in.labels ? in.row_label_w + 0.5f * in.line_h : 0.0f;
  l.header_h = in.labels ? in.line_h + 2.0f : 0.0f;
  l.legend_h = in.legend ? in.line_h + 14.0f : 0.0f;
  float cell = std::min(in.max_cell, (in.avail_w - l.label_w) / static_cast<float>(in.cols));
  if (in.avail_h > 0) cell = std::min(cell, (in.avail_h - l.header_h - l.legend_h) / static_cast<float>(in.rows));
  // Whole quarter pixels keep drawn grids crisp; below a pixel the texture is simply scaled down.
  l.cell = cell >= 1.0f ? std::floor(cell * 4.0f) / 4.0f : std::max(cell, 0.01f);
  l.width = l.label_w + l.cell * static_cast<float>(in.cols);
  l.height = l.header_h + l.cell * static_cast<float>(in.rows) + l.legend_h;
  l.texture = in.rows * in.cols > kTextureCells || l.cell < kMinDrawnCell;
  return l;
}

}  // namespace attn::ui
