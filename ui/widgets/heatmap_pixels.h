#pragma once
// A heatmap as one texel per cell, for matrices too large to draw cell by cell: the widget uploads
// this once when the values change and draws it as a single image.
#include <cstdint>
#include <vector>

#include "ui/logic/colour_map.h"

namespace attn::ui {

// Row-major RGBA (ImGui's packed layout). One texel per cell, or with tex_rows x tex_cols (the size it is
// drawn at) the cell at each texel's centre: a 1024x1024 matrix drawn 300 pixels wide needs 300x300 texels,
// not a million, and a 100x100 one drawn at 400 gets a texel per pixel. Hidden cells (visible == 0) are grey
// with a diagonal stroke every kHatchPeriod texels, as drawn cells are hatched: readable without colour.
std::vector<std::uint32_t> heatmap_pixels(const Matrix& m, ColourMap map, ValueRange range, const Matrix* visible,
                                          int tex_rows = 0, int tex_cols = 0);

// FNV-1a over the values (and the visibility), to know when a cached texture is stale.
std::uint64_t content_hash(const Matrix& m, const Matrix* visible, ValueRange range, ColourMap map);

}  // namespace attn::ui
