#include "ui/logic/colour_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace attn::ui {
namespace {

// Viridis at eleven evenly spaced points; linear interpolation between them stays within a small
// fraction of the full map's lightness steps.
constexpr std::array<Rgb, 11> kViridis{{
    {0.267f, 0.005f, 0.329f},
    {0.283f, 0.141f, 0.458f},
    {0.254f, 0.265f, 0.530f},
    {0.207f, 0.372f, 0.553f},
    {0.164f, 0.471f, 0.558f},
    {0.128f, 0.567f, 0.551f},
    {0.135f, 0.659f, 0.518f},
    {0.267f, 0.749f, 0.441f},
    {0.478f, 0.821f, 0.318f},
    {0.741f, 0.873f, 0.150f},
    {0.993f, 0.906f, 0.144f},
}};

// A blue-white-red map whose two halves have matching lightness ramps (after Moreland's cool-warm).
constexpr std::array<Rgb, 9> kDiverging{{
    {0.085f, 0.200f, 0.560f},
    {0.230f, 0.360f, 0.760f},
    {0.450f, 0.580f, 0.880f},
    {0.720f, 0.800f, 0.950f},
    {0.970f, 0.970f, 0.970f},
    {0.960f, 0.760f, 0.680f},
    {0.900f, 0.500f, 0.400f},
    {0.780f, 0.220f, 0.200f},
    {0.560f, 0.040f, 0.120f},
}};

template <std::size_t N>
Rgb interpolate(const std::array<Rgb, N>& stops, double t) {
  t = std::clamp(t, 0.0, 1.0) * static_cast<double>(N - 1);
  const std::size_t i = std::min(static_cast<std::size_t>(t), N - 2);
  const float f = static_cast<float>(t - static_cast<double>(i));
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

double linear(float c) { return c <= 0.04045f ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

// The least and greatest finite value, skipping cells whose `visible` entry is 0. Eight independent lanes,
// so that the compiler vectorises it: a 1024x1024 score matrix takes a fraction of a millisecond, not four,
// which matters in the frame that receives a new trace.
template <bool Masked>
std::pair<double, double> finite_extent(const double* x, const double* visible, std::size_t n) {
  constexpr std::size_t kLanes = 8;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::array<double, kLanes> lo, hi;
  lo.fill(kInf);
  hi.fill(-kInf);
  const auto take = [&](std::size_t lane, std::size_t i) {
    const double v = x[i];
    const bool keep = v - v == 0.0 && (!Masked || visible[i] != 0.0);  // v - v is NaN for +-inf and NaN
    lo[lane] = keep && v < lo[lane] ? v : lo[lane];
    hi[lane] = keep && v > hi[lane] ? v : hi[lane];
  };
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k) take(k, i + k);
  for (; i < n; ++i) take(0, i);
  return {*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end())};
}

}  // namespace

Rgb sample(ColourMap map, double t) {
  return map == ColourMap::Sequential ? interpolate(kViridis, t) : interpolate(kDiverging, t);
}

ValueRange auto_range(const Matrix& m, ColourMap map, const Matrix* visible) {
  const auto n = static_cast<std::size_t>(m.size());
  const auto [lo, hi] =
      visible ? finite_extent<true>(m.data(), visible->data(), n) : finite_extent<false>(m.data(), nullptr, n);
  if (lo > hi) return {0.0, 1.0};  // nothing visible
  if (map == ColourMap::Diverging) {
    const double a = std::max(std::abs(lo), std::abs(hi));
    return a == 0.0 ? ValueRange{-1.0, 1.0} : ValueRange{-a, a};
  }
  if (lo >= 0.0 && hi <= 1.0) return {0.0, 1.0};
  if (lo == hi) return {lo - 0.5, hi + 0.5};
  return {lo, hi};
}

const ValueRange* find_range(const KnownRanges& known, const Matrix& m, ColourMap map, const Matrix* visible) {
  for (const KnownRange& k : known)
    if (k.m == &m && k.map == map && k.visible == visible) return &k.range;
  return nullptr;
}

double normalise(double x, ValueRange r) {
  if (!(r.hi > r.lo)) return 0.5;
  return std::clamp((x - r.lo) / (r.hi - r.lo), 0.0, 1.0);
}

std::uint32_t pack(Rgb c, float alpha) {
  auto byte = [](float v) { return static_cast<std::uint32_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)); };
  return (byte(alpha) << 24) | (byte(c.b) << 16) | (byte(c.g) << 8) | byte(c.r);
}

Rgb text_on(Rgb bg) {
  const double luminance = 0.2126 * linear(bg.r) + 0.7152 * linear(bg.g) + 0.0722 * linear(bg.b);
  // The luminance where black and white text have equal contrast: (L + 0.05)^2 = 1.05 * 0.05.
  // Pure black and white: either is at least 4.58:1 on its side of it, a grey would fall under 4.5:1 near the middle.
  return luminance > 0.179 ? Rgb{0.0f, 0.0f, 0.0f} : Rgb{1.0f, 1.0f, 1.0f};
}

}  // namespace attn::ui

namespace attn::ui {

double contrast_ratio(Rgb a, Rgb b) {
  const auto luminance = [](Rgb c) { return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b); };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

Rgb legible_on(Rgb colour, Rgb page, double ratio) {
  const Rgb toward = contrast_ratio(page, {0, 0, 0}) > contrast_ratio(page, {1, 1, 1}) ? Rgb{0, 0, 0} : Rgb{1, 1, 1};
  // Judged as drawn, in whole steps of 1/255: a colour just over the ratio may round to just under it.
  const auto drawn = [](float v) { return std::round(v * 255.0f) / 255.0f; };
  Rgb c = colour;
  for (int step = 1; step <= 100 && contrast_ratio({drawn(c.r), drawn(c.g), drawn(c.b)}, page) < ratio; ++step) {
    const float t = static_cast<float>(step) / 100.0f;
    c = {colour.r + (toward.r - colour.r) * t, colour.g + (toward.g - colour.g) * t,
         colour.b + (toward.b - colour.b) * t};
  }
  return c;
}

}  // namespace attn::ui
