#pragma once
// Colour maps for heatmaps. Weights (0..1) use viridis: perceptually uniform, readable in grey and by
// colour-blind viewers. Signed values use a blue-white-red diverging map centred on 0, so the sign is
// the hue and the magnitude the saturation. Hidden (masked) cells never take a colour of either scale.
#include <cstdint>
#include <vector>

#include "core/matrix.h"

namespace attn::ui {

struct Rgb {
  float r = 0, g = 0, b = 0;  // 0..1
};

enum class ColourMap {
  Sequential,  // viridis, for values with a natural 0..max such as weights
  Diverging,   // blue (negative) - white (0) - red (positive)
};

struct ValueRange {
  double lo = 0.0;
  double hi = 1.0;
};

Rgb sample(ColourMap map, double t);  // t in [0, 1], clamped

// The range a matrix is coloured by: diverging maps are symmetric about 0 (so white means 0);
// sequential maps span [min, max] of the finite visible values, or [0, 1] when those lie inside it.
// `visible` (optional, same shape, 0 = hidden) excludes hidden cells; a constant matrix gets a unit range.
ValueRange auto_range(const Matrix& m, ColourMap map, const Matrix* visible = nullptr);

// auto_range of a matrix of an immutable trace, computed ahead (on the worker, with the trace) so that the frame first
// showing a large trace need not read every cell: 16 ms of range scans at 2,048 tokens.
struct KnownRange {
  const Matrix* m = nullptr;
  ColourMap map = ColourMap::Diverging;
  const Matrix* visible = nullptr;
  ValueRange range;
};
using KnownRanges = std::vector<KnownRange>;
const ValueRange* find_range(const KnownRanges& known, const Matrix& m, ColourMap map, const Matrix* visible);

double normalise(double x, ValueRange r);  // to [0, 1], clamped

// ImGui's packed colour (IM_COL32 layout: A B G R from high to low byte).
std::uint32_t pack(Rgb c, float alpha = 1.0f);

// Black or white, whichever reads better on `background` (WCAG relative luminance).
Rgb text_on(Rgb background);

// `colour` moved toward black (on a light page) or white (on a dark one), keeping its hue as far as it can, until it
// reads at `ratio` against `page` (WCAG 2 contrast); unchanged when it already does.
Rgb legible_on(Rgb colour, Rgb page, double ratio);
// The WCAG 2 contrast ratio of two colours, 1 to 21.
double contrast_ratio(Rgb a, Rgb b);

// The grey of a hidden cell: neutral, and outside both scales' hues.
inline constexpr Rgb kHiddenCell{0.42f, 0.42f, 0.44f};
inline constexpr Rgb kHatchLine{150 / 255.0f, 150 / 255.0f, 155 / 255.0f};  // the diagonal strokes over hidden cells
inline constexpr int kHatchPeriod = 6;                                      // pixels between strokes, along a row

}  // namespace attn::ui
