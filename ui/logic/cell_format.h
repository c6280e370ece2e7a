#pragma once
// Numbers inside heatmap cells: every cell of a matrix at the matrix's decimals (the activation rule of
// core/text_format.h), a shorter form only for a cell too small for it; -inf for hidden scores.
#include <string>

#include "core/matrix.h"

namespace attn::ui {

// The shortest faithful text of x within max_chars characters: fixed-point with up to 4 decimals,
// integers without decimals, then without the leading zero ("-.04"), then compact scientific notation
// ("8e-4", "1.2e5"). "" if nothing fits.
std::string format_cell(double x, int max_chars);

// Decimals a matrix is shown with, in every step, in its cells, its hover texts and the sentences quoting it: the
// activation rule of core/text_format.h (activation_decimals) over its (visible, finite) values. 3 decimals, fewer
// for 4 significant digits (18.91, 123.5), 0 for whole numbers, 1 for tenths typed by hand, two significant digits
// when all would read 0.000.
int matrix_decimals(const Matrix& m, const Matrix* visible = nullptr);

// Whether a matrix is small enough to write its numbers in its cells: at most 32 columns and 1,024 cells (a
// wider one could not show 3-decimal numbers on any screen). Larger ones show colours and the tooltip.
bool shows_numbers(const Matrix& m);

// x with exactly `decimals` decimals (1 as "1.000" among thousandths), 0 as "0"; -inf, inf, nan as words;
// never "-0.0".
std::string format_fixed(double x, int decimals);

}  // namespace attn::ui
