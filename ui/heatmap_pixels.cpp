#include "ui/heatmap_pixels.h"

#include <cmath>
#include <cstring>

namespace attn::ui {

std::vector<std::uint32_t> heatmap_pixels(const Matrix& m, ColorMap map, ValueRange range, const Matrix* visible) {
  std::vector<std::uint32_t> pixels(static_cast<std::size_t>(m.size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const bool hidden = (visible && (*visible)(r, c) == 0.0) || !std::isfinite(m(r, c));
      pixels[static_cast<std::size_t>(r * m.cols() + c)] =
          pack(hidden ? kHiddenCell : sample(map, normalise(m(r, c), range)));
    }
  return pixels;
}

std::uint64_t content_hash(const Matrix& m, const Matrix* visible, ValueRange range, ColorMap map) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
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
