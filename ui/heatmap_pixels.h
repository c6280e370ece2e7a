#pragma once
// A heatmap as one texel per cell, for matrices too large to draw cell by cell: the widget uploads
// this once when the values change and draws it as a single image.
#include <cstdint>
#include <vector>

#include "ui/colormap.h"

namespace attn::ui {

// Row-major RGBA (ImGui's packed layout), rows x cols texels; hidden cells (visible == 0) are grey.
std::vector<std::uint32_t> heatmap_pixels(const Matrix& m, ColorMap map, ValueRange range, const Matrix* visible);

// FNV-1a over the values (and the visibility), to know when a cached texture is stale.
std::uint64_t content_hash(const Matrix& m, const Matrix* visible, ValueRange range, ColorMap map);

}  // namespace attn::ui
