#include "ui/logic/chart_axes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "core/text_format.h"

namespace attn::ui {
namespace {

constexpr double kEps = 1e-9;  // slack for floor/ceil of ratios and logarithms that should be whole

// 10^k exactly for the integer k a tick needs (std::pow on integers is correctly rounded in glibc).
double pow10i(int k) { return std::pow(10.0, k); }

// m·10^k with a single rounding, so 3·10^-1 is the double nearest 0.3 and not 0.30000000000000004.
double scaled10(double m, int k) { return k >= 0 ? m * pow10i(k) : m / pow10i(-k); }

// Floor and ceiling of a ratio that should often be whole, without 2.9999999 becoming 2.
long long floor_ratio(double a, double b) { return static_cast<long long>(std::floor(a / b + kEps)); }
long long ceil_ratio(double a, double b) { return static_cast<long long>(std::ceil(a / b - kEps)); }

// Integers in [lo, hi] divisible by s.
int count_multiples(int lo, int hi, int s) {
  const auto fl = [](int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int n = fl(hi, s) - (fl(lo - 1, s));
  return std::max(0, n);
}

// ---- linear ----

// Bytes and tokens step in whole KiB/MiB/... or k/M: the largest power of 1024 not above the range.
double unit_scale(double lo, double hi, NumberUnit u) {
  if (u != NumberUnit::Bytes && u != NumberUnit::Tokens) return 1;
  const double m = std::max(std::abs(lo), std::abs(hi));
  double s = 1;
  while (s * 1024 <= m && s < 1e18) s *= 1024;
  return s;
}

struct TickStep {
  double mantissa;  // 1, 2 or 5
  int exponent;     // step = mantissa · 10^exponent, in units of the scale
  double value() const { return scaled10(mantissa, exponent); }
};

// The smallest 1-2-5 step giving at most max_major ticks in [lo, hi].
TickStep nice_step(double lo, double hi, int max_major) {
  const double span = std::max(hi - lo, 1e-300);
  const int first = static_cast<int>(std::floor(std::log10(span / max_major))) - 1;
  for (int e = first; e < first + 40; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const TickStep s{m, e};
      if (floor_ratio(hi, s.value()) - ceil_ratio(lo, s.value()) + 1 <= max_major) return s;
    }
  return {1.0, first + 40};
}

std::vector<Tick> linear_ticks(const Axis& a, int max_major) {
  const double scale = unit_scale(a.lo, a.hi, a.unit);
  const double lo = a.lo / scale, hi = a.hi / scale;
  const TickStep step = nice_step(lo, hi, max_major);
  const long long first = ceil_ratio(lo, step.value()), last = floor_ratio(hi, step.value());
  // Enough digits that neighbouring ticks never print the same (1000, 1005, 1010 need 4).
  const double biggest = std::max(std::abs(lo), std::abs(hi));
  const int needed = static_cast<int>(std::floor(std::log10(std::max(biggest, 1e-300)))) -
                     static_cast<int>(std::floor(std::log10(step.value()))) + 1;
  const int sig = std::clamp(needed, 3, 15);
  std::vector<Tick> ticks;
  for (long long i = first; i <= last; ++i) {
    const double v = scaled10(static_cast<double>(i) * step.mantissa, step.exponent) * scale;
    ticks.push_back({v, tick_text(v, a.unit, sig), true});
  }
  return ticks;
}

// ---- log ----

struct Candidate {
  double value;
  bool major;
};

std::vector<Tick> finish(std::vector<Candidate> c, NumberUnit unit) {
  std::sort(c.begin(), c.end(), [](const Candidate& x, const Candidate& y) {
    return x.value != y.value ? x.value < y.value : x.major > y.major;
  });
  std::vector<Tick> ticks;
  for (const Candidate& t : c) {
    if (!ticks.empty() && ticks.back().value == t.value) continue;  // a major wins over a minor at the same place
    ticks.push_back({t.value, t.major ? tick_text(t.value, unit, 3) : std::string(), t.major});
  }
  return ticks;
}

struct PowerRange {
  int lo, hi;  // exponents whose powers lie in the axis range
};

PowerRange powers_of_2(const Axis& a) {
  return {static_cast<int>(std::ceil(std::log2(a.lo) - kEps)), static_cast<int>(std::floor(std::log2(a.hi) + kEps))};
}

PowerRange powers_of_10(const Axis& a) {
  return {static_cast<int>(std::ceil(std::log10(a.lo) - kEps)), static_cast<int>(std::floor(std::log10(a.hi) + kEps))};
}

// Powers of 2 in range labelled every `stride` exponents (aligned to 0, so strides dividing 10 keep
// 1 KiB, 1 MiB, ...), the others minor; past a stride of 10 only powers of 1024 stay as minors, so a
// range of 60 octaves does not get 60 tick marks.
std::vector<Candidate> power2_ticks(PowerRange r, int stride) {
  std::vector<Candidate> c;
  for (int e = r.lo; e <= r.hi; ++e) {
    const bool major = e % stride == 0;
    if (major || stride <= 10 || e % 10 == 0) c.push_back({std::ldexp(1.0, e), major});
  }
  return c;
}

// The smallest stride in `strides` labelling between 2 and max_major powers of 2; 0 if none does.
int power2_stride(PowerRange r, int max_major, std::span<const int> strides) {
  for (int s : strides) {
    const int n = count_multiples(r.lo, r.hi, s);
    if (n <= max_major) return n >= 2 ? s : 0;
  }
  return 0;
}

constexpr std::array<int, 3> kFineStrides{1, 2, 5};
constexpr std::array<int, 10> kByteStrides{10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

std::optional<std::vector<Tick>> bytes_log_ticks(const Axis& a, int max_major) {
  const PowerRange r = powers_of_2(a);
  int stride = count_multiples(r.lo, r.hi, 10) >= 2 ? power2_stride(r, max_major, kByteStrides) : 0;
  if (stride == 0) stride = power2_stride(r, max_major, kFineStrides);
  if (stride == 0) return std::nullopt;
  return finish(power2_ticks(r, stride), a.unit);
}

// Decades 1, 10, 100 (and 1000 when the axis stops before 1k, which would crowd it) below 1k.
std::vector<int> token_decades(const Axis& a) {
  const PowerRange d = powers_of_10(a);
  std::vector<int> ks;
  for (int k = d.lo; k <= d.hi; ++k)
    if (pow10i(k) < 1024 && (k < 3 || a.hi < 1024)) ks.push_back(k);
  return ks;
}

// m·10^k below 1k (below hi for a short axis): the decades in `decades` with k % stride == 0
// labelled, the rest minor.
std::vector<Candidate> token_decade_ticks(const Axis& a, const std::vector<int>& decades, int stride) {
  std::vector<Candidate> c;
  const double below = a.hi >= 1024 ? 1000 : a.hi * (1 + kEps);  // minors stop short of the first 1k
  for (int k = static_cast<int>(std::floor(std::log10(a.lo))); k <= powers_of_10(a).hi; ++k)
    for (int m = 1; m <= 9; ++m) {
      const double v = scaled10(m, k);
      if (v < a.lo * (1 - kEps) || v >= below) continue;
      const bool major = m == 1 && k % stride == 0 && std::find(decades.begin(), decades.end(), k) != decades.end();
      c.push_back({v, major});
    }
  return c;
}

std::optional<std::vector<Tick>> tokens_log_ticks(const Axis& a, int max_major) {
  const std::vector<int> decades = token_decades(a);
  PowerRange p2 = powers_of_2(a);
  p2.lo = std::max(p2.lo, 10);
  static constexpr std::array<int, 13> kStrides{1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  // Thin the powers of 2 first (1k, 4k, 16k, ...), then the decades (1, 100).
  for (int d : {1, 2, 3}) {
    const int nd = static_cast<int>(std::count_if(decades.begin(), decades.end(), [d](int k) { return k % d == 0; }));
    for (int s : kStrides) {
      const int np = p2.lo <= p2.hi ? count_multiples(p2.lo, p2.hi, s) : 0;
      if (nd + np > max_major || nd + np < 2) continue;
      std::vector<Candidate> c = token_decade_ticks(a, decades, d);
      if (p2.lo <= p2.hi)
        for (const Candidate& t : power2_ticks(p2, s)) c.push_back(t);
      return finish(std::move(c), a.unit);
    }
  }
  const PowerRange all = powers_of_2(a);  // a few tokens only: 2, 4, 8
  const int stride = power2_stride(all, max_major, kFineStrides);
  if (stride == 0) return std::nullopt;
  return finish(power2_ticks(all, stride), a.unit);
}

// A log axis spanning less than two decades: 1, 2 and 5 of each labelled, the other digits minor.
std::optional<std::vector<Tick>> one_two_five_ticks(const Axis& a, int max_major) {
  std::vector<Candidate> c;
  int majors = 0;
  for (int k = static_cast<int>(std::floor(std::log10(a.lo))); k <= powers_of_10(a).hi + 1; ++k)
    for (int m = 1; m <= 9; ++m) {
      const double v = scaled10(m, k);
      if (v < a.lo * (1 - kEps) || v > a.hi * (1 + kEps)) continue;
      const bool major = m == 1 || m == 2 || m == 5;
      majors += major;
      c.push_back({v, major});
    }
  if (majors < 2 || majors > max_major) return std::nullopt;
  return finish(std::move(c), a.unit);
}

std::optional<std::vector<Tick>> decade_log_ticks(const Axis& a, int max_major) {
  const PowerRange r = powers_of_10(a);
  int stride = 0;
  for (int d = 1; d <= 100 && stride == 0; ++d) {
    const int n = r.hi >= r.lo ? (r.hi - r.lo) / d + 1 : 0;  // every d-th decade from the lowest
    if (n <= max_major) stride = n >= 2 ? d : -1;
  }
  if (stride <= 0) return one_two_five_ticks(a, max_major);
  std::vector<Candidate> c;
  for (int k = static_cast<int>(std::floor(std::log10(a.lo))); k <= r.hi; ++k)
    for (int m = 1; m <= (stride == 1 ? 9 : 1); ++m) {  // thinned decades: the skipped ones are the minors
      const double v = scaled10(m, k);
      // Thinned from the lowest decade up: an axis' floor is labelled (a line near it is read against it).
      if (v >= a.lo * (1 - kEps) && v <= a.hi * (1 + kEps)) c.push_back({v, m == 1 && (k - r.lo) % stride == 0});
    }
  return finish(std::move(c), a.unit);
}

std::optional<double> to_axis(double v, AxisScale s) {
  if (s == AxisScale::Log10) {
    if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
    return std::log10(v);
  }
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

double from_axis(double t, AxisScale s) { return s == AxisScale::Log10 ? std::pow(10.0, t) : t; }

}  // namespace

double axis_fraction(double v, const Axis& a) {
  if (a.scale == AxisScale::Log10) {
    if (v <= 0 || a.lo <= 0 || a.hi <= a.lo) return 0;
    return (std::log10(v) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo));
  }
  return a.hi == a.lo ? 0 : (v - a.lo) / (a.hi - a.lo);
}

double axis_value(double fraction, const Axis& a) {
  if (a.scale == AxisScale::Log10) {
    if (a.lo <= 0 || a.hi <= a.lo) return a.lo;
    return std::pow(10.0, std::log10(a.lo) + fraction * (std::log10(a.hi) - std::log10(a.lo)));
  }
  return a.lo + fraction * (a.hi - a.lo);
}

double context_axis_end(std::span<const double> marks, double end, double max_end) {
  const auto near_end = [&](double e) {
    return std::any_of(marks.begin(), marks.end(), [&](double x) { return x > e / std::sqrt(2.0) && x <= e; });
  };
  while (near_end(end) && end * 2 <= max_end) end *= 2;
  return end;
}

float clear_of_lines(float start, float width, std::span<const float> lines, float gap) {
  for (bool moved = true; moved;) {
    moved = false;
    for (const float x : lines)
      if (x > start - gap && x < start + width + gap) {
        start = x + gap;
        moved = true;
      }
  }
  return start;
}

std::vector<Box> polyline_boxes(std::span<const float> xs, std::span<const float> ys, float half_width, float step) {
  std::vector<Box> boxes;
  for (std::size_t i = 1; i < std::min(xs.size(), ys.size()); ++i) {
    const float len = std::hypot(xs[i] - xs[i - 1], ys[i] - ys[i - 1]);
    const int pieces = std::max(1, static_cast<int>(std::ceil(len / step)));
    for (int k = 0; k < pieces; ++k) {
      const float t0 = static_cast<float>(k) / static_cast<float>(pieces),
                  t1 = static_cast<float>(k + 1) / static_cast<float>(pieces);
      const float xa = xs[i - 1] + (xs[i] - xs[i - 1]) * t0, xb = xs[i - 1] + (xs[i] - xs[i - 1]) * t1;
      const float ya = ys[i - 1] + (ys[i] - ys[i - 1]) * t0, yb = ys[i - 1] + (ys[i] - ys[i - 1]) * t1;
      boxes.push_back({std::min(xa, xb) - half_width, std::min(ya, yb) - half_width, std::max(xa, xb) + half_width,
                       std::max(ya, yb) + half_width});
    }
  }
  return boxes;
}

std::vector<Tick> with_pinned_ticks(std::vector<Tick> ticks, std::span<const double> values, NumberUnit unit) {
  for (const double v : values) {
    std::erase_if(ticks, [&](const Tick& t) { return t.value == v; });
    ticks.push_back({v, format_unit(v, unit), true, true});
  }
  std::stable_sort(ticks.begin(), ticks.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; });
  return ticks;
}

std::vector<Tick> axis_ticks(const Axis& a, int max_major) {
  max_major = std::max(1, max_major);
  if (!(a.hi > a.lo) || !std::isfinite(a.lo) || !std::isfinite(a.hi)) return {};
  if (a.scale == AxisScale::Linear || a.lo <= 0) return linear_ticks(a, max_major);
  std::optional<std::vector<Tick>> ticks;
  switch (a.unit) {
    case NumberUnit::Bytes: ticks = bytes_log_ticks(a, max_major); break;
    case NumberUnit::Tokens: ticks = tokens_log_ticks(a, max_major); break;
    case NumberUnit::DecimalBytes:
    case NumberUnit::Flops:
    case NumberUnit::Probability:
    case NumberUnit::Plain: ticks = decade_log_ticks(a, max_major); break;
  }
  return ticks ? *ticks : linear_ticks(a, max_major);
}

Axis nice_axis(double lo, double hi, AxisScale scale, NumberUnit unit, std::string title) {
  if (lo > hi) std::swap(lo, hi);
  Axis a{lo, hi, scale, unit, std::move(title)};
  if (scale == AxisScale::Linear) {
    if (lo == hi) {
      const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
      a.lo = lo >= 0 ? std::max(0.0, lo - pad) : lo - pad;
      a.hi = hi + pad;
    }
    const double s = unit_scale(a.lo, a.hi, unit);
    const TickStep step = nice_step(a.lo / s, a.hi / s, 6);
    a.lo = static_cast<double>(floor_ratio(a.lo / s, step.value())) * step.value() * s;
    a.hi = static_cast<double>(ceil_ratio(a.hi / s, step.value())) * step.value() * s;
    return a;
  }
  if (!(hi > 0)) hi = 10;
  if (!(lo > 0)) lo = hi / 1000;
  if (unit == NumberUnit::Bytes || unit == NumberUnit::Tokens) {
    a.lo = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(lo) + kEps)));
    a.hi = std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(hi) - kEps)));
    if (a.lo == a.hi) {
      a.lo /= 2;
      a.hi *= 2;
    }
  } else {
    a.lo = pow10i(static_cast<int>(std::floor(std::log10(lo) + kEps)));
    a.hi = pow10i(static_cast<int>(std::ceil(std::log10(hi) - kEps)));
    if (a.lo == a.hi) {
      a.lo /= 10;
      a.hi *= 10;
    }
  }
  return a;
}

std::optional<double> interpolate_y(std::span<const double> xs, std::span<const double> ys, double x, AxisScale x_scale,
                                    AxisScale y_scale) {
  const std::size_t n = std::min(xs.size(), ys.size());
  const std::optional<double> tx = to_axis(x, x_scale);
  if (!tx) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    if (x == xs[i]) return to_axis(ys[i], y_scale) ? std::optional<double>(ys[i]) : std::nullopt;
    if (i == 0 || !(xs[i - 1] < x && x < xs[i])) continue;
    const std::optional<double> x0 = to_axis(xs[i - 1], x_scale), x1 = to_axis(xs[i], x_scale);
    const std::optional<double> y0 = to_axis(ys[i - 1], y_scale), y1 = to_axis(ys[i], y_scale);
    if (!x0 || !x1 || !y0 || !y1) return std::nullopt;
    const double t = (*tx - *x0) / (*x1 - *x0);
    return from_axis(*y0 + t * (*y1 - *y0), y_scale);
  }
  return std::nullopt;
}

bool overlaps(const Box& a, const Box& b, float gap) {
  return a.x0 < b.x1 + gap && b.x0 < a.x1 + gap && a.y0 < b.y1 + gap && b.y0 < a.y1 + gap;
}

namespace {

bool fits(const Box& b, const std::vector<Box>& occupied, const Box& bounds, float gap) {
  const bool inside = b.x0 >= bounds.x0 && b.x1 <= bounds.x1 && b.y0 >= bounds.y0 && b.y1 <= bounds.y1;
  return inside && std::none_of(occupied.begin(), occupied.end(), [&](const Box& o) { return overlaps(b, o, gap); });
}

}  // namespace

std::vector<int> place_labels(std::span<const std::vector<Box>> candidates, std::vector<Box> occupied,
                              const Box& bounds, float gap) {
  std::vector<int> chosen(candidates.size(), -1);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    for (std::size_t j = 0; j < candidates[i].size(); ++j) {
      const Box& b = candidates[i][j];
      if (!fits(b, occupied, bounds, gap)) continue;
      chosen[i] = static_cast<int>(j);
      occupied.push_back(b);
      break;
    }
  return chosen;
}

namespace {

struct Placement {
  std::vector<int> chosen;
  int placed = 0, covering = 0, distance = 0;
  bool better_than(const Placement& o) const {
    if (placed != o.placed) return placed > o.placed;
    if (covering != o.covering) return covering < o.covering;
    return distance < o.distance;
  }
};

// Depth-first over the labels, most constrained first, each placed at one of its free spots (clear of
// `avoid` first) or left out; branches that cannot beat the best so far are cut, and the search stops
// after a fixed number of steps so a frame never waits on it. Its first descent is greedy placement.
struct Search {
  std::span<const std::vector<LabelSpot>> candidates;
  const std::vector<Box>& avoid;
  const Box& bounds;
  float gap;
  std::vector<std::size_t> order;
  std::vector<Box> taken;  // `occupied`, then the labels and leaders placed so far
  Placement current, best;
  int steps = 0;
  static constexpr int kMaxSteps = 4000;

  bool is_free(const LabelSpot& s) const {
    const Box everywhere{-1e30f, -1e30f, 1e30f, 1e30f};
    return fits(s.label, taken, bounds, gap) && (!s.leader || fits(*s.leader, taken, everywhere, gap));
  }

  bool can_beat(std::size_t k) const {
    Placement bound = current;
    bound.placed += static_cast<int>(order.size() - k);
    return bound.better_than(best);
  }

  void place(std::size_t k, std::size_t j, bool covers) {
    const std::size_t i = order[k];
    const LabelSpot& s = candidates[i][j];
    taken.push_back(s.label);
    if (s.leader) taken.push_back(*s.leader);
    current.chosen[i] = static_cast<int>(j);
    ++current.placed;
    current.covering += covers;
    current.distance += static_cast<int>(j);
    run(k + 1);
    --current.placed;
    current.covering -= covers;
    current.distance -= static_cast<int>(j);
    current.chosen[i] = -1;
    taken.resize(taken.size() - (s.leader ? 2 : 1));
  }

  void run(std::size_t k) {
    if (++steps > kMaxSteps || !can_beat(k)) return;
    if (k == order.size()) {
      best = current;
      return;
    }
    const std::vector<LabelSpot>& spots = candidates[order[k]];
    for (bool covering : {false, true})
      for (std::size_t j = 0; j < spots.size(); ++j)
        if (is_free(spots[j]) && fits(spots[j].label, avoid, bounds, gap) == !covering) place(k, j, covering);
    run(k + 1);  // leave this one out
  }
};

}  // namespace

std::vector<int> place_labels_best(std::span<const std::vector<LabelSpot>> candidates, const std::vector<Box>& occupied,
                                   const std::vector<Box>& avoid, const Box& bounds, float gap) {
  Search s{candidates, avoid, bounds, gap, {}, occupied, {}, {}};
  std::vector<int> free_spots(candidates.size(), 0);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    for (const LabelSpot& spot : candidates[i]) free_spots[i] += s.is_free(spot);
    s.order.push_back(i);
  }
  std::stable_sort(s.order.begin(), s.order.end(),
                   [&](std::size_t a, std::size_t b) { return free_spots[a] < free_spots[b]; });
  s.current.chosen.assign(candidates.size(), -1);
  s.best = s.current;
  s.best.placed = -1;  // anything beats nothing, even placing no label
  s.run(0);
  return s.best.chosen;
}

std::vector<float> spread_labels(std::span<const float> want, float height, float lo, float hi) {
  std::vector<std::size_t> order(want.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return want[a] < want[b]; });
  struct Group {
    std::size_t first, count;
    float top;  // centre of its first label
  };
  // Where a group sits with least squared movement, kept inside [lo, hi] as far as it fits.
  const auto settle = [&](Group& g) {
    float sum = 0;
    for (std::size_t j = 0; j < g.count; ++j) sum += want[order[g.first + j]] - static_cast<float>(j) * height;
    const float top_max = hi - height / 2 - static_cast<float>(g.count - 1) * height;
    g.top = std::max(lo + height / 2, std::min(sum / static_cast<float>(g.count), top_max));
  };
  std::vector<Group> groups;
  for (std::size_t k = 0; k < order.size(); ++k) {
    groups.push_back({k, 1, 0});
    settle(groups.back());
    while (groups.size() >= 2) {
      Group& prev = groups[groups.size() - 2];
      const Group& last = groups.back();
      if (prev.top + static_cast<float>(prev.count) * height <= last.top) break;
      prev.count += last.count;
      groups.pop_back();
      settle(groups.back());
    }
  }
  std::vector<float> centre(want.size());
  for (const Group& g : groups)
    for (std::size_t j = 0; j < g.count; ++j) centre[order[g.first + j]] = g.top + static_cast<float>(j) * height;
  return centre;
}

std::vector<std::size_t> column_envelope(std::span<const float> xs, std::span<const float> ys) {
  std::vector<std::size_t> keep;
  const std::size_t n = std::min(xs.size(), ys.size());
  for (std::size_t first = 0; first < n;) {
    const float column = std::floor(xs[first]);
    std::size_t last = first, low = first, high = first;
    for (std::size_t i = first + 1; i < n && std::floor(xs[i]) == column; ++i) {
      last = i;
      if (ys[i] < ys[low]) low = i;
      if (ys[i] > ys[high]) high = i;
    }
    std::size_t picked[] = {first, low, high, last};
    std::sort(std::begin(picked), std::end(picked));
    for (const std::size_t i : picked)
      if (keep.empty() || keep.back() != i) keep.push_back(i);
    first = last + 1;
  }
  return keep;
}

}  // namespace attn::ui
