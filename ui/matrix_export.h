#pragma once
// A matrix as text to paste into a spreadsheet or a slide, with its token labels.
#include <string>
#include <vector>

#include "core/matrix.h"

namespace attn::ui {

// CSV: a header row of column labels (first cell empty), then one row per matrix row led by its label.
// Full precision (17 significant digits), -inf for hidden scores; labels quoted when they need it.
std::string matrix_csv(const Matrix& m, const std::vector<std::string>* rows, const std::vector<std::string>* cols);

}  // namespace attn::ui
