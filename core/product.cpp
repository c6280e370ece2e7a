#include "core/product.h"

#include <algorithm>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace attn {

// One slab of the output per thread, cut across the longer side: each thread makes one product of its own, so the
// shared operand is packed once per thread rather than once per block of rows, and 128 tokens (one block of rows)
// still use every core.
Matrix product(const Matrix& a, const Matrix& b) {
  Matrix out(a.rows(), b.cols());
  int slabs = 1;
#if defined(_OPENMP)
  if (a.rows() * a.cols() * b.cols() > kParallelWork) slabs = omp_get_max_threads();
#endif
  const bool by_rows = a.rows() >= b.cols();
  const Eigen::Index length = by_rows ? a.rows() : b.cols();
  const Eigen::Index step = (length / slabs + 7) / 8 * 8;  // whole packets of columns or rows
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (slabs > 1)
#endif
  for (int i = 0; i < slabs; ++i) {
    const Eigen::Index r = std::min(length, i * step), n = std::min(step, length - r);
    if (n <= 0) continue;
    if (by_rows) {
      out.middleRows(r, n).noalias() = a.middleRows(r, n) * b;
    } else {
      out.middleCols(r, n).noalias() = a * b.middleCols(r, n);
    }
  }
  return out;
}

}  // namespace attn
