#include "core/product.h"

#include <algorithm>

namespace attn {

// Tiles of 128 rows by 96 columns, fixed by the shapes alone: the same tiles on any number of threads, so the same
// bits (a product cut elsewhere may round a cell's last bit differently; cutting the columns at multiples of 24,
// Eigen's register block, does not). 128 tokens still give a 512-wide projection six tiles to share out.
Matrix product(const Matrix& a, const Matrix& b) {
  constexpr Eigen::Index kRows = 128, kCols = 96;
  Matrix out(a.rows(), b.cols());
  const Eigen::Index row_tiles = (a.rows() + kRows - 1) / kRows, col_tiles = (b.cols() + kCols - 1) / kCols;
  [[maybe_unused]] const bool big = a.rows() * a.cols() * b.cols() > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (big)
#endif
  for (Eigen::Index t = 0; t < row_tiles * col_tiles; ++t) {
    const Eigen::Index r = t / col_tiles * kRows, c = t % col_tiles * kCols;
    const Eigen::Index n = std::min(kRows, a.rows() - r), m = std::min(kCols, b.cols() - c);
    out.block(r, c, n, m).noalias() = a.middleRows(r, n) * b.middleCols(c, m);
  }
  return out;
}

}  // namespace attn
