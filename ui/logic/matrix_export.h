#pragma once
// A matrix as text to paste into a spreadsheet or a slide, with its token labels.
#include <string>
#include <vector>

#include "core/matrix.h"

namespace attn::ui {

// CSV: a header row of column labels (first cell empty), then one row per matrix row led by its label.
// Full precision (17 significant digits), -inf for hidden scores; labels quoted when they need it.
std::string matrix_csv(const Matrix& m, const std::vector<std::string>* rows, const std::vector<std::string>* cols);

// "scores.png", "scores-2.png", ...: a file name for an export, new in `folder`, with only letters,
// digits and underscores from `name`.
std::string unique_file_name(const std::string& folder, const std::string& name, const std::string& extension);
inline std::string picture_file_name(const std::string& folder, const std::string& name) {
  return unique_file_name(folder, name, "png");
}

}  // namespace attn::ui
