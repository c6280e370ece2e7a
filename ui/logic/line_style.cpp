#include "ui/logic/line_style.h"

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

}  // namespace attn::ui
