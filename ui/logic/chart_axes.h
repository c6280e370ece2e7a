#pragma once
// Chart axes without a window: where a value sits along an axis, which ticks it gets and how they read,
// and where labels go so none overlaps another. ui::LineChart and ui::BarChart only measure text and draw
// what these return.
//
// Number formats (format_unit) share core/text_format's thousands separators; their units are a chart's own
// (a label wants "10 GiB" or "10.7 GB" where the `kv` report prints "10.00 GiB").
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attn::ui {

// The context-length charts run from 1 to 2^20 = 1,048,576 tokens.
inline constexpr int kMaxContextExponent = 20;

enum class AxisScale { Linear, Log10 };

enum class AxisUnit {
  Plain,         // up to 3 significant digits: "0.25", "83", "1230", "1.5e9"
  Bytes,         // 1024-based: "512 B", "320 KiB", "10 GiB", "1.5 TiB"
  DecimalBytes,  // 1000-based, as accelerator memory is sold: "512 B", "320 kB", "10 GB", "1.5 TB"
  Tokens,        // context lengths: exact multiples of 1024 as "128k", of 1024^2 as "1M"; others "1,000"
  Flops,         // 1000-based: "512 FLOP", "262 kFLOP", "2.6 MFLOP", "1.2 TFLOP"
  Probability,   // values as core/text_format's probability_text ("0.462", "0.098", "0.000"); ticks as Plain
};

struct Axis {
  double lo = 0, hi = 1;  // a log axis needs 0 < lo < hi
  AxisScale scale = AxisScale::Linear;
  AxisUnit unit = AxisUnit::Plain;
  std::string title;
};

// Position of v along the axis, 0 at lo and 1 at hi; outside the range it goes below 0 or above 1 (the
// widgets clip), except that v <= 0 on a log axis maps to 0.
double axis_fraction(double v, const Axis& a);
double axis_value(double fraction, const Axis& a);  // the inverse

// A value as a short label with its unit (see AxisUnit); tick labels of a Probability axis read as Plain ("0.2"). Bytes
// and FLOPs keep at most 3 significant digits and drop trailing zeros ("1.5 TiB", not "1.50 TiB"); a 1024-based value
// of 1000..1023 units stays whole ("1023 KiB") rather than turning into "0.999 MiB". Non-integral token counts round to
// whole tokens ("244,141"), except below 100, which keep 3 significant digits.
std::string format_unit(double v, AxisUnit u);

// A value (a bar's, a sentence's) as format_unit writes it, but bytes and FLOPs keep their 3 significant digits,
// zeros included, so values side by side follow one rule: "2.30 GB" beside "2.26 GB", "10.0 GB", "537 MB".
std::string format_value(double v, AxisUnit u);

// The right end of a log context axis that ends at `end`, doubled (up to `max_end`) while a mark lies within half an
// octave left of it: a point on the plot's border reads as cut off, so every mark is clearly inside or past the end.
double context_axis_end(std::span<const double> marks, double end, double max_end);

// The exact value for tooltips: "10,737,418,240 bytes (10 GiB)", "131,072 tokens (128k)",
// "262,144 FLOP (262 kFLOP)"; the part in brackets only where it says something shorter. Plain whole
// numbers keep every digit ("1,234,567"), other plain values 6 significant digits.
std::string format_exact(double v, AxisUnit u);

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
std::vector<Tick> with_pinned_ticks(std::vector<Tick> ticks, std::span<const double> values, AxisUnit unit);

// An axis holding [lo, hi], widened to tick values: linear ends to a multiple of the step axis_ticks
// would take for 6 labels; log ends to powers of 2 (bytes, tokens) or of 10 (otherwise). A log axis
// over a non-positive lo starts 3 decades below hi.
Axis nice_axis(double lo, double hi, AxisScale scale, AxisUnit unit, std::string title);

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
