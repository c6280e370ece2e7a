#include "core/indexer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/mask.h"
#include "core/product.h"

namespace attn {

namespace {

constexpr Eigen::Index kBlock = 128;

// Rows [r, r + n) of I over the keys of their block's span, the other cells left at -inf. sum and dots are the
// calling thread's, kept from block to block.
void score_block(const Matrix& q, const Matrix& w, const Matrix& kT, const Matrix& mask, const VisibleKeys& keys,
                 Eigen::Index r, Eigen::Index n, Matrix& sum, Matrix& dots, Matrix& scores) {
  const Span span = block_span(keys, r, n);
  if (span.lo > span.hi) return;
  const Eigen::Index d = kT.rows(), cols = span.size();
  sum.resize(n, cols);
  dots.resize(n, cols);
  sum.setZero();
  for (Eigen::Index h = 0; h < w.cols(); ++h) {
    dots.noalias() = q.block(r, h * d, n, d) * kT.middleCols(span.lo, cols);
    sum.array() += dots.array().max(0.0).colwise() * w.block(r, h, n, 1).array().col(0);
  }
  scores.block(r, span.lo, n, cols) = (mask.block(r, span.lo, n, cols).array() != 0.0).select(sum, kNegInf);
}

}  // namespace

Matrix indexer_scores(const Matrix& q, const Matrix& w, const Matrix& k, const Matrix& mask) {
  Matrix scores = Matrix::Constant(q.rows(), k.rows(), kNegInf);
  const Matrix kT = k.transpose();
  const VisibleKeys keys = visible_keys(mask);
  const Eigen::Index blocks = (q.rows() + kBlock - 1) / kBlock;
  [[maybe_unused]] const bool big = q.rows() * k.rows() * q.cols() > kParallelWork;
  // Fixed blocks: the result does not depend on the thread count.
#if defined(_OPENMP)
#pragma omp parallel if (big)
#endif
  {
    Matrix sum, dots;
#if defined(_OPENMP)
#pragma omp for schedule(dynamic)
#endif
    for (Eigen::Index b = 0; b < blocks; ++b)
      score_block(q, w, kT, mask, keys, b * kBlock, std::min(kBlock, q.rows() - b * kBlock), sum, dots, scores);
  }
  return scores;
}

namespace {

// NaN (a score that overflowed) ranks below every visible key, so the order stays a strict weak one.
double rank_of(double score) { return std::isnan(score) ? kNegInf : score; }

// Moves the values of [first, last) that pass to the front and returns the end of them, branch-free: each value
// is swapped into place unconditionally and the boundary moves when it passed (Lomuto's scheme without its
// branch, which mispredicts one value in two).
template <typename Pass>
double* partition_front(double* first, double* last, Pass pass) {
  double* store = first;
  for (double* p = first; p < last; ++p) {
    const double x = *p;
    *p = *store;
    *store = x;
    store += pass(x);
  }
  return store;
}

// The rank-th largest (1-based) of c[0, n), reordering c: a quickselect on a median of three, splitting each range
// into greater, equal and smaller so that ties cannot stall it. After 2 log2 n rounds (an adversarial order)
// std::nth_element finishes the range.
double rank_th_largest(double* c, std::size_t n, std::size_t rank) {
  double *first = c, *last = c + n, *kth = c + rank - 1;
  for (int rounds = 2 * static_cast<int>(std::log2(double(n))) + 2; last - first > 16 && rounds > 0; --rounds) {
    const double a = *first, b = first[(last - first) / 2], z = last[-1];
    const double pivot = std::max(std::min(a, b), std::min(std::max(a, b), z));
    double* greater = partition_front(first, last, [pivot](double x) { return x > pivot; });
    double* equal = partition_front(greater, last, [pivot](double x) { return x == pivot; });
    if (kth < greater) last = greater;
    else if (kth < equal) return pivot;
    else first = equal;
  }
  std::nth_element(first, kth, last, std::greater<>());
  return *kth;
}

// The keep-th largest of x[0, n) (0 < keep < n), found in candidates (any contents). A strided sample of 128
// gives a bound that about twice keep values pass; the exact selection then runs on those few (Floyd and
// Rivest's idea), or on them all when the sample misled.
double kth_largest(const double* x, std::size_t n, std::size_t keep, std::vector<double>& candidates) {
  constexpr std::size_t kSample = 128;
  candidates.resize(n);
  double* c = candidates.data();
  const double expected = double(keep) * kSample / double(n);  // the keep-th largest's rank in the sample
  const auto rank = static_cast<std::size_t>(expected + 3.0 * std::sqrt(expected)) + 1;
  if (n >= 2 * kSample && rank < kSample / 2) {
    for (std::size_t s = 0; s < kSample; ++s) c[s] = rank_of(x[s * n / kSample]);
    const double bound = rank_th_largest(c, kSample, rank);
    std::size_t m = 0;
    for (std::size_t j = 0; j < n; ++j) {  // branch-free compaction of the values at or above the bound
      c[m] = rank_of(x[j]);
      m += c[m] >= bound;
    }
    if (m >= keep) return rank_th_largest(c, m, keep);
  }
  for (std::size_t j = 0; j < n; ++j) c[j] = rank_of(x[j]);
  return rank_th_largest(c, n, keep);
}

// Row i of the selection over the keys of its span. The keep-th largest visible score sets a threshold; every
// visible score above it is taken and, of those equal to it, the lowest j first. scratch is the calling
// thread's, kept from row to row.
void select_row(const Matrix& scores, const Matrix& mask, const VisibleKeys& keys, Eigen::Index i, int top_k,
                std::vector<double>& scratch, Matrix& selected) {
  const Span span = keys.span(i);
  if (span.lo > span.hi) return;
  const auto visible = mask.row(i).segment(span.lo, span.size()).array();
  auto chosen = selected.row(i).segment(span.lo, span.size()).array();
  const auto n = static_cast<std::size_t>(keys.count(i));
  const std::size_t keep = std::min(n, static_cast<std::size_t>(top_k));
  if (keep == n) {
    chosen = visible;
    return;
  }
  const auto x = scores.row(i).segment(span.lo, span.size()).array();
  double threshold = 0.0;
  if (keys.listed(i).empty()) {  // no holes: the scores themselves, without a copy
    threshold = kth_largest(x.data(), n, keep, scratch);
  } else {
    std::vector<double> shown;
    shown.reserve(n);
    for (const Eigen::Index j : keys.listed(i)) shown.push_back(scores(i, j));
    threshold = kth_largest(shown.data(), n, keep, scratch);
  }
  chosen = (x > threshold && visible != 0.0).cast<double>();
  auto ties = static_cast<std::ptrdiff_t>(keep) - static_cast<std::ptrdiff_t>(chosen.sum());
  for (Eigen::Index j = 0; ties > 0 && j < span.size(); ++j)
    if (visible(j) != 0.0 && rank_of(x(j)) == threshold) {
      chosen(j) = 1.0;
      --ties;
    }
}

}  // namespace

Matrix select_top_k(const Matrix& scores, const Matrix& mask, int top_k) {
  Matrix selected = Matrix::Zero(scores.rows(), scores.cols());
  const VisibleKeys keys = visible_keys(mask);
  [[maybe_unused]] const bool big = scores.size() > kParallelWork / 8;
  // Rows are independent: with OpenMP they are shared among the threads, each with its own scratch.
#if defined(_OPENMP)
#pragma omp parallel if (big)
#endif
  {
    std::vector<double> scratch;
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (Eigen::Index i = 0; i < scores.rows(); ++i) select_row(scores, mask, keys, i, top_k, scratch, selected);
  }
  return selected;
}

IndexerTrace run_indexer(const SparseConfig& c, const Weights& w, const Matrix& x, const Matrix& x_kv,
                         const Matrix& mask) {
  IndexerTrace t;
  t.q = product(x, *w.W_QI);
  t.k = product(x_kv, *w.W_KI);
  t.w = product(x, *w.W_wI);
  t.scores = indexer_scores(t.q, t.w, t.k, mask);
  t.selected = select_top_k(t.scores, mask, c.top_k);
  return t;
}

}  // namespace attn
