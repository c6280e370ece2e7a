#pragma once
// Chart axes without a window: where a value sits along an axis, which ticks it gets and how they read,
// and where labels go so none overlaps another. ui::LineChart and ui::BarChart only measure text and draw
// what these return.
//
// Tick labels and values read as core/text_format writes them (tick_text, format_unit, format_value, format_exact).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/text_format.h"

namespace attn::ui {

// The context-length charts run from 1 to 2^20 = 1,048,576 tokens.
inline constexpr int kMaxContextExponent = 20;

enum class AxisScale { Linear, Log10 };

struct Axis {
  double lo = 0, hi = 1;  // a log axis needs 0 < lo < hi
  AxisScale scale = AxisScale::Linear;
  NumberUnit unit = NumberUnit::Plain;
  std::string title;
};

// Position of v along the axis, 0 at lo and 1 at hi; outside the range it goes below 0 or above 1 (the
// widgets clip), except that v <= 0 on a log axis maps to 0.
double axis_fraction(double v, const Axis& a);
double axis_value(double fraction, const Axis& a);  // the inverse

// The right end of a log context axis that ends at `end`, doubled (up to `max_end`) while a mark lies within half an
// octave left of it: a point on the plot's border reads as cut off, so every mark is clearly inside or past the end.
double context_axis_end(std::span<const double> marks, double end, double max_end);

struct Tick {
  double value;
  std::string label;  // empty on minor ticks
  bool major;
  bool pinned = false;  // a value the page talks about: its label is kept before its neighbours'
};

// Ticks inside [lo, hi], ascending, at most max_major of them labelled:
// - Linear: 1-2-5 steps (in KiB, MiB, ... for bytes and in k, M for tokens, so a bytes axis steps
//   by 256 MiB, not by 268,435,456 / 10^n); no minor ticks.
// - Log10, Bytes: majors at powers of 1024 (thinned to every 2nd, 3rd, ... when too many), minors at
//   the powers of 2 between; a range holding fewer than two powers of 1024 labels powers of 2.
// - Log10, Tokens: decades 1, 10, 100 below 1k and powers of 2 from 1k (1k, 4k, 16k, ... when thinned,
//   always keeping 1k and 1M); minors at the powers of 2 and at 2..9 x the decades.
// - Log10, otherwise: decades (thinned when too many, from the lowest one in range up, so the floor of an axis
//   starting at a decade is labelled), minors at 2..9 x each decade.
// A log range too narrow for two of those majors falls back to linear steps.
std::vector<Tick> axis_ticks(const Axis& a, int max_major);

// The ticks with a labelled, pinned major at each of `values` (replacing a tick there), ascending.
std::vector<Tick> with_pinned_ticks(std::vector<Tick> ticks, std::span<const double> values, NumberUnit unit);

// An axis holding [lo, hi], widened to tick values: linear ends to a multiple of the step axis_ticks
// would take for 6 labels; log ends to powers of 2 (bytes, tokens) or of 10 (otherwise). A log axis
// over a non-positive lo starts 3 decades below hi.
Axis nice_axis(double lo, double hi, AxisScale scale, NumberUnit unit, std::string title);

// The series' y at x (xs ascending), straight between samples in axis space (in log-log space for two log
// axes, where y = c·x is exact); nullopt outside the sampled x range or in a break (a point a log axis cannot
// show, <= 0); nullopt outside the sampled x range or in a break.
std::optional<double> interpolate_y(std::span<const double> xs, std::span<const double> ys, double x, AxisScale x_scale,
                                    AxisScale y_scale);

// Label placement, in pixels (y down).
struct Box {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

bool overlaps(const Box& a, const Box& b, float gap);

// For each label in priority order, the index of the first of its candidate boxes that lies inside
// `bounds` and clear (by `gap`) of `occupied` and of the labels placed before it; -1 drops the label.
std::vector<int> place_labels(std::span<const std::vector<Box>> candidates, std::vector<Box> occupied,
                              const Box& bounds, float gap);

// A place for a label in a crowded plot, and the strip the leader line back to its anchor crosses.
struct LabelSpot {
  Box label;
  std::optional<Box> leader;  // none when the label sits right by its anchor
};

// place_labels for crowded plots: as many labels as possible, no label over another label, a leader
// or `occupied`, no leader under a label; `avoid` boxes (lines, say) kept clear of labels where
// possible, and nearer candidates preferred. A short search over the combinations, so the result does
// not hinge on the order labels come in; it gives up after a fixed number of steps (with the best found).
std::vector<int> place_labels_best(std::span<const std::vector<LabelSpot>> candidates, const std::vector<Box>& occupied,
                                   const std::vector<Box>& avoid, const Box& bounds, float gap);

// The first x from `start` at which a label `width` wide keeps `gap` from every vertical line at `lines` (a bar's
// value moved past a reference line rather than struck through by it).
float clear_of_lines(float start, float width, std::span<const float> lines, float gap);

// A polyline (pixels) as boxes along it, each at most `step` long and `half_width` out from the line on every side:
// what a label placed in the plot must keep clear of.
std::vector<Box> polyline_boxes(std::span<const float> xs, std::span<const float> ys, float half_width, float step);

// Centres for labels `height` tall that want to sit at `want` (any order) on one vertical line: labels
// too close are pushed apart as a group around their mean (least total movement), kept inside [lo, hi].
std::vector<float> spread_labels(std::span<const float> want, float height, float lo, float hi);

// The points of a polyline worth drawing at one pixel per column (xs in pixels, ascending; as many as ys): in each
// column the first, the lowest, the highest and the last point, in their order. The line drawn through them covers
// the same pixels as the whole polyline (a 3,000-step loss curve in 500 columns needs 2,000 points, not 3,000).
std::vector<std::size_t> column_envelope(std::span<const float> xs, std::span<const float> ys);

}  // namespace attn::ui
