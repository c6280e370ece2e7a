#include "core/indexer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attn {

namespace {

// Rows [r, r + n) of I: only over the keys some row of the block sees (a causal block stops at its last row).
void score_block(const Matrix& q, const Matrix& w, const Matrix& kT, const Matrix& mask, Eigen::Index r, Eigen::Index n,
                 Matrix& scores) {
  Eigen::Index lo = mask.cols(), hi = -1;
  for (Eigen::Index i = r; i < r + n; ++i)
    for (Eigen::Index j = 0; j < mask.cols(); ++j)
      if (mask(i, j) != 0.0) {
        lo = std::min(lo, j);
        hi = std::max(hi, j);
      }
  if (lo > hi) return;
  const Eigen::Index d = kT.rows(), cols = hi - lo + 1;
  Matrix sum = Matrix::Zero(n, cols), dots(n, cols);
  for (Eigen::Index h = 0; h < w.cols(); ++h) {
    dots.noalias() = q.block(r, h * d, n, d) * kT.middleCols(lo, cols);
    sum.array() += dots.array().max(0.0).colwise() * w.block(r, h, n, 1).array().col(0);
  }
  scores.block(r, lo, n, cols) = (mask.block(r, lo, n, cols).array() != 0.0).select(sum, kNegInf);
}

}  // namespace

Matrix indexer_scores(const Matrix& q, const Matrix& w, const Matrix& k, const Matrix& mask) {
  constexpr Eigen::Index kBlock = 128;
  Matrix scores = Matrix::Constant(q.rows(), k.rows(), kNegInf);
  const Matrix kT = k.transpose();
  const Eigen::Index blocks = (q.rows() + kBlock - 1) / kBlock;
  [[maybe_unused]] const bool big = q.rows() * k.rows() * q.cols() > kParallelWork;
  // Fixed blocks: the result does not depend on the thread count.
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) if (big)
#endif
  for (Eigen::Index b = 0; b < blocks; ++b)
    score_block(q, w, kT, mask, b * kBlock, std::min(kBlock, q.rows() - b * kBlock), scores);
  return scores;
}

Matrix select_top_k(const Matrix& scores, const Matrix& mask, int top_k) {
  Matrix selected = Matrix::Zero(scores.rows(), scores.cols());
  [[maybe_unused]] const bool big = scores.size() > kParallelWork / 8;
  // Rows are independent: with OpenMP they are shared among the threads, each with its own list.
#if defined(_OPENMP)
#pragma omp parallel if (big)
#endif
  {
    std::vector<Eigen::Index> visible;
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
      visible.clear();
      for (Eigen::Index j = 0; j < scores.cols(); ++j)
        if (mask(i, j) != 0.0) visible.push_back(j);
      const auto keep = std::min<std::size_t>(visible.size(), static_cast<std::size_t>(top_k));
      // The larger score first; on a tie the lower j, so the choice never depends on the sort.
      std::nth_element(visible.begin(), visible.begin() + static_cast<std::ptrdiff_t>(keep), visible.end(),
                       [&](Eigen::Index a, Eigen::Index b) {
                         return scores(i, a) != scores(i, b) ? scores(i, a) > scores(i, b) : a < b;
                       });
      for (std::size_t n = 0; n < keep; ++n) selected(i, visible[n]) = 1.0;
    }
  }
  return selected;
}

IndexerTrace run_indexer(const SparseConfig& c, const Weights& w, const Matrix& x, const Matrix& x_kv,
                         const Matrix& mask) {
  IndexerTrace t;
  t.q = x * *w.W_QI;
  t.k = x_kv * *w.W_KI;
  t.w = x * *w.W_wI;
  t.scores = indexer_scores(t.q, t.w, t.k, mask);
  t.selected = select_top_k(t.scores, mask, c.top_k);
  return t;
}

}  // namespace attn
