#include "ui/widgets/heatmap_pixels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace attn::ui {

namespace {

// Texels go through a table of the colour map at 1/1024 steps (finer than 8-bit colour), made once per map.
constexpr int kColourSteps = 1024;
using ColourTable = std::array<std::uint32_t, kColourSteps + 1>;

const ColourTable& colour_table(ColourMap map) {
  static const auto make = [](ColourMap m) {
    ColourTable table;
    for (int i = 0; i <= kColourSteps; ++i)
      table[static_cast<std::size_t>(i)] = pack(sample(m, static_cast<double>(i) / kColourSteps));
    return table;
  };
  static const ColourTable sequential = make(ColourMap::Sequential), diverging = make(ColourMap::Diverging);
  return map == ColourMap::Sequential ? sequential : diverging;
}

}  // namespace

std::vector<std::uint32_t> heatmap_pixels(const Matrix& m, ColourMap map, ValueRange range, const Matrix* visible,
                                          int tex_rows, int tex_cols) {
  const ColourTable& table = colour_table(map);
  const std::uint32_t hidden_texel = pack(kHiddenCell), hatch_texel = pack(kHatchLine);
  const Eigen::Index rows = tex_rows > 0 ? tex_rows : m.rows();
  const Eigen::Index cols = tex_cols > 0 ? tex_cols : m.cols();
  std::vector<std::uint32_t> pixels(static_cast<std::size_t>(rows * cols));
  // Each texel shows the cell at its centre; the columns, the same for every row, are found once (a division each).
  std::vector<Eigen::Index> column(static_cast<std::size_t>(cols));
  for (Eigen::Index j = 0; j < cols; ++j) column[static_cast<std::size_t>(j)] = (2 * j + 1) * m.cols() / (2 * cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const Eigen::Index r = (2 * i + 1) * m.rows() / (2 * rows);
    for (Eigen::Index j = 0; j < cols; ++j) {
      const Eigen::Index c = column[static_cast<std::size_t>(j)];
      const double x = m(r, c);
      const bool hidden = (visible && (*visible)(r, c) == 0.0) || !std::isfinite(x);
      pixels[static_cast<std::size_t>(i * cols + j)] =
          !hidden                       ? table[static_cast<std::size_t>(normalise(x, range) * kColourSteps + 0.5)]
          : (i + j) % kHatchPeriod == 0 ? hatch_texel
                                        : hidden_texel;
    }
  }
  return pixels;
}

std::uint64_t content_hash(const Matrix& m, const Matrix* visible, ValueRange range, ColourMap map) {
  std::uint64_t h = 1469598103934665603ull;
  // FNV-1a over 64-bit words: a 1024x1024 matrix is 1M steps, not 8M.
  auto mix = [&h](const void* data, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, bytes + i, std::min<std::size_t>(8, n - i));
      h = (h ^ word) * 1099511628211ull;
    }
  };
  const Eigen::Index shape[2] = {m.rows(), m.cols()};
  mix(shape, sizeof shape);
  mix(m.data(), sizeof(double) * static_cast<std::size_t>(m.size()));
  if (visible) mix(visible->data(), sizeof(double) * static_cast<std::size_t>(visible->size()));
  mix(&range, sizeof range);
  mix(&map, sizeof map);
  return h;
}

}  // namespace attn::ui
