#pragma once
// Numbers inside heatmap cells: as many decimals as the cell has room for, never more than 4,
// so a 3x3 matrix shows 0.7427 and a crowded one 0.74; -inf for hidden scores.
#include <string>

#include "core/matrix.h"

namespace attn::ui {

// The shortest faithful text of x within max_chars characters: fixed-point with up to 4 decimals,
// integers without decimals, then without the leading zero ("-.04"), then compact scientific notation
// ("8e-4", "1.2e5"). "" if nothing fits.
std::string format_cell(double x, int max_chars);

// Decimals x needs to be written exactly (0.9 -> 1, 0.25 -> 2), 0 for integers, 4 at most.
int needed_decimals(double x);
// Decimals a matrix is shown with, in every step: what its (visible) values need, at most 3, the same as the
// explanations quote (short_number), so a cell and the sentence about it agree; and no more than give its
// largest value 4 significant digits (18.91, 123.5). A matrix whose values all round to 0 at 3 decimals shows its
// largest with two significant digits instead (4e-4 as 0.00040), at most 8 decimals.
inline constexpr int kMatrixDecimals = 3;
inline constexpr int kTinyMatrixDecimals = 8;
inline constexpr int kSignificantDigits = 4;
int matrix_decimals(const Matrix& m, const Matrix* visible = nullptr);

// Whether a matrix is small enough to write its numbers in its cells: at most 32 columns and 1,024 cells (a
// wider one could not show 3-decimal numbers on any screen). Larger ones show colours and the tooltip.
bool shows_numbers(const Matrix& m);

// x with exactly `decimals` decimals (1 as "1.000" among thousandths), 0 as "0"; -inf, inf, nan as words;
// never "-0.0".
std::string format_fixed(double x, int decimals);

}  // namespace attn::ui
