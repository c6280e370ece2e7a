#include "core/indexer.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

namespace attn {

Matrix indexer_scores(const Matrix& q, const Matrix& w, const Matrix& k, const Matrix& mask) {
  const Eigen::Index heads = w.cols(), d = k.cols();
  Matrix scores = Matrix::Zero(q.rows(), k.rows());
  for (Eigen::Index h = 0; h < heads; ++h) {
    const Matrix dots = q.middleCols(h * d, d) * k.transpose();  // (n, m)
    scores.array() += dots.array().max(0.0).colwise() * w.col(h).array();
  }
  return (mask.array() != 0.0).select(scores, -std::numeric_limits<double>::infinity());
}

Matrix select_top_k(const Matrix& scores, const Matrix& mask, int top_k) {
  Matrix selected = Matrix::Zero(scores.rows(), scores.cols());
  std::vector<Eigen::Index> visible;
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
