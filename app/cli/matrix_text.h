#pragma once
// Matrices as aligned text tables with token labels on rows and columns, like a NumPy printout with names.
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention.h"
#include "core/matrix.h"
#include "core/text_format.h"

namespace attn::cli {

struct MatrixTextOptions {
  int precision = 4;                    // digits after the decimal point
  std::vector<std::string> row_labels;  // one per row; empty = 0, 1, 2, ...
  std::vector<std::string> col_labels;  // one per column; empty = 0, 1, 2, ...
};

// Column labels of a matrix made of head blocks: "h1.0" is column 0 of head 1 ("g" for KV heads); one head: "0", "1",
// ...
std::vector<std::string> head_column_labels(const char* prefix, int heads, int head_dim);

// A row's numbers separated by two spaces.
std::string row_text(const Matrix& row, int precision);

void print_matrix(std::ostream& out, const Matrix& m, const MatrixTextOptions& opts);

// Each query row's normalisation as a table: shift m, Z and entropy (softmax), or Z and entropy (linear).
struct RowStatistics {
  Matrix values;                     // (N_Q, 3) or (N_Q, 2)
  std::vector<std::string> columns;  // {"m", "Z", "entropy"} or {"Z", "entropy"}
};
RowStatistics row_statistics(const HeadTrace& h, bool softmax);

}  // namespace attn::cli
