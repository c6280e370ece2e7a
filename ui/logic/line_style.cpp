#include "ui/logic/line_style.h"

#include <algorithm>

#include "ui/logic/layout_check.h"

namespace attn::ui {

LineStyle series_style(std::size_t i) {
  constexpr LineDash kDashes[] = {LineDash::Solid, LineDash::Dashed, LineDash::Dotted, LineDash::DashDot};
  constexpr LineMarker kMarkers[] = {LineMarker::None, LineMarker::Circle, LineMarker::Square, LineMarker::Triangle,
                                     LineMarker::Diamond};
  return {kDashes[i % 4], kMarkers[(i / 4) % 5]};
}

std::vector<float> dash_lengths(LineDash d) {
  switch (d) {
    case LineDash::Dashed: return {10.0f, 6.0f};
    case LineDash::Dotted: return {3.0f, 5.0f};
    case LineDash::DashDot: return {12.0f, 5.0f, 3.0f, 5.0f};
    case LineDash::Solid: break;
  }
  return {};
}

std::vector<std::size_t> marker_points(std::span<const float> xs, float spacing) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const bool last = i + 1 == xs.size();
    if (out.empty() || xs[i] - xs[out.back()] >= spacing) out.push_back(i);
    else if (last) out.back() = i;  // the end is marked; the one too near it gives way
  }
  return out;
}

namespace {

DrawnStroke segment_of(const PixelLine& l, std::size_t k, float width) {
  return {"", l.x[k], l.y[k], l.x[k + 1], l.y[k + 1], width, 0};
}

std::size_t segments(const PixelLine& l) {
  return std::min(l.x.size(), l.y.size()) > 0 ? std::min(l.x.size(), l.y.size()) - 1 : 0;
}

}  // namespace

std::vector<std::vector<float>> stripe_widths(std::span<const PixelLine> lines, float base, float step) {
  std::vector<std::vector<float>> widths(lines.size());
  const float widest = base + step * static_cast<float>(lines.size());  // no segment gets wider
  for (std::size_t i = lines.size(); i-- > 0;) {
    widths[i].assign(segments(lines[i]), base);
    // Both lines run left to right: only the segments of a later line over the same columns can lie on a segment.
    std::vector<std::size_t> from(lines.size(), 0);
    for (std::size_t k = 0; k < widths[i].size(); ++k) {
      const float x0 = std::min(lines[i].x[k], lines[i].x[k + 1]) - widest;
      const float x1 = std::max(lines[i].x[k], lines[i].x[k + 1]) + widest;
      // Widening reaches further: repeat until no later line lies on the segment at its width.
      for (bool widened = true; widened;) {
        widened = false;
        for (std::size_t j = i + 1; j < lines.size(); ++j) {
          while (from[j] < widths[j].size() && std::max(lines[j].x[from[j]], lines[j].x[from[j] + 1]) < x0) ++from[j];
          for (std::size_t q = from[j]; q < widths[j].size() && std::min(lines[j].x[q], lines[j].x[q + 1]) <= x1; ++q)
            if (widths[i][k] < widths[j][q] + step &&
                lie_on_each_other(segment_of(lines[i], k, widths[i][k]), segment_of(lines[j], q, widths[j][q]))) {
              widths[i][k] = widths[j][q] + step;
              widened = true;
            }
        }
      }
    }
  }
  return widths;
}

}  // namespace attn::ui
