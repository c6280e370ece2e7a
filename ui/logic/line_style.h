#pragma once
// How chart lines differ besides their colour, without a window: a dash pattern and a marker per series, the
// points a marker goes on, and where each line's end label sits. A projector merges orange with vermillion and
// sky blue with blue; a class still tells the lines apart by their pattern and reads their names at their ends.
#include <cstddef>
#include <span>
#include <vector>

namespace attn::ui {

enum class LineDash { Solid, Dashed, Dotted, DashDot };
enum class LineMarker { None, Circle, Square, Triangle, Diamond };

struct LineStyle {
  LineDash dash = LineDash::Solid;
  LineMarker marker = LineMarker::None;
  bool operator==(const LineStyle&) const = default;
};

// The i-th series' style: the four dashes unmarked, then with a circle, a square, a triangle and a diamond, so the
// first 20 series of a chart are pairwise distinct (series 0 and 5, 1 and 4 differ in dash as well).
LineStyle series_style(std::size_t i);

// The pattern's lengths in pixels, alternately drawn and skipped ({} for a solid line), at line width 2.5.
std::vector<float> dash_lengths(LineDash d);

// Which points (xs in pixels, ascending) carry a marker: the first, then each at least `spacing` to the right of
// the last one marked, and always the last point (a line's end is where its label is).
std::vector<std::size_t> marker_points(std::span<const float> xs, float spacing);

// A line as drawn, in pixels (x ascending).
struct PixelLine {
  std::vector<float> x, y;
};

// The width of each segment of each line (lines in drawing order): `base`, or `step` wider than the widest later line
// lying on it (layout_check's lie_on_each_other), so lines that coincide (the Cost view's KV cache and sparse lines
// while the projections dominate both) show as a stripe, the first drawn widest, instead of the last hiding the
// others. Lines that never meet keep `base` everywhere.
std::vector<std::vector<float>> stripe_widths(std::span<const PixelLine> lines, float base, float step);

}  // namespace attn::ui
