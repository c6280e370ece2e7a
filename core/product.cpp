#include "core/product.h"

#include <algorithm>

namespace attn {

Matrix product(const Matrix& a, const Matrix& b) {
  constexpr Eigen::Index kBlock = 128;
  Matrix out(a.rows(), b.cols());
  const Eigen::Index blocks = (a.rows() + kBlock - 1) / kBlock;
  [[maybe_unused]] const bool big = a.rows() * a.cols() * b.cols() > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (big)
#endif
  for (Eigen::Index i = 0; i < blocks; ++i) {
    const Eigen::Index r = i * kBlock, n = std::min(kBlock, a.rows() - r);
    out.middleRows(r, n).noalias() = a.middleRows(r, n) * b;
  }
  return out;
}

}  // namespace attn
