#include "core/head_blocks.h"

#include <cmath>
#include <limits>

namespace attn {
namespace {

// -sum w ln w for weights e = exp(y) / z, with ln w = y - ln z: no logarithm per key. A key whose weight is 0
// adds nothing, though its y may be -inf (0 * -inf is NaN).
template <typename E, typename Y>
double entropy_of(const E& e, const Y& y, double z) {
  const double h = std::log(z) - (e * y).sum();
  return std::isfinite(h) ? h : std::log(z) - (e > 0.0).select(e * y, 0.0).sum();
}

// Softmax over the visible keys of the block's row li, whose span is s; every other key keeps its weight of 0.
// Subtracting the largest visible score keeps exp() in range; the ratios are unchanged. A row with listed keys (a
// span with holes) works on those alone: besides being fewer, a hidden key's exp(-inf) vectorised is the subnormal
// 5e-309, and arithmetic on subnormals is about a hundred times slower. The scaled scores are made in b.x and never
// stored (HeadTrace::scaled makes them again when asked).
void softmax_row(const HeadInputs& in, RowBlock& b, Eigen::Index li, Span s, std::span<const Eigen::Index> listed) {
  auto w = b.weights().row(li).array();
  double m = 0.0, z = 0.0;
  if (listed.empty()) {  // a prefix or a band, every key of it visible: one vectorised pass
    auto e = w.segment(s.lo, s.size());
    auto xs = b.x.head(s.size());
    xs = b.scores().row(li).array().segment(s.lo, s.size()) * in.scale_factor;
    m = xs.maxCoeff();
    e = (xs - m).exp();
    z = e.sum();
    e /= z;
    b.entropy(li) = entropy_of(e, xs - m, z);
  } else {
    const auto count = static_cast<Eigen::Index>(listed.size());
    auto y = b.x.head(count);
    for (Eigen::Index c = 0; c < count; ++c) y(c) = b.scores()(li, listed[c]) * in.scale_factor;
    m = y.maxCoeff();
    y -= m;
    RowArray ey = y.exp();
    z = ey.sum();
    ey /= z;
    w.setZero();  // the scores under it were read into y
    for (Eigen::Index c = 0; c < count; ++c) w(listed[c]) = ey(c);
    b.entropy(li) = entropy_of(ey, y, z);
  }
  b.row_max(li) = m;
  b.row_sum(li) = z;
  b.status[static_cast<std::size_t>(li)] = RowStatus::Ok;
}

// The linear kernel's row li (row i of the head): kappa(x) = x over the visible keys, divided by their sum; b.x
// holds the row's masked scores (0 where hidden).
void linear_row(const HeadInputs& in, RowBlock& b, Eigen::Index li, Eigen::Index i) {
  auto x = b.x.head(b.width());
  x = (in.mask.row(i).head(b.width()).array() != 0.0).select(b.scores().row(li).array() * in.scale_factor, 0.0);
  auto w = b.weights().row(li).array();
  auto& status = b.status[static_cast<std::size_t>(li)];
  const double z = x.sum();
  b.row_sum(li) = z;
  // A sum that cancels to rounding noise (0.1 + 0.2 - 0.3) would turn into weights of 1e15.
  const double noise = 64 * std::numeric_limits<double>::epsilon() * x.abs().sum();
  w = x / z;
  if (std::abs(z) <= noise || !w.isFinite().all()) {
    w.setZero();
    status = RowStatus::ZeroSum;
  } else if ((w < 0.0).any()) {
    status = RowStatus::Signed;
    b.entropy(li) = std::numeric_limits<double>::quiet_NaN();
  } else {
    status = RowStatus::Ok;
    b.entropy(li) = -(w > 0.0).select(w * w.log(), 0.0).sum();
  }
}

// Row li of the block: its weights and statistics in one pass over its scores, so a long row is read once. A causal
// row's weights outside its span are 0, so exp() runs on half the cells.
void fill_row(const HeadInputs& in, RowBlock& b, Eigen::Index li) {
  const Eigen::Index i = b.r + li;
  b.row_max(li) = b.row_sum(li) = b.entropy(li) = 0.0;
  const Span s = in.keys.span(i);
  auto w = b.weights().row(li);
  if (s.lo > s.hi) {
    w.setZero();
    b.status[static_cast<std::size_t>(li)] = RowStatus::AllMasked;
  } else if (in.kernel == Kernel::Softmax) {
    const auto listed = in.keys.listed(i);
    if (listed.empty()) {
      w.head(s.lo).setZero();
      w.tail(b.width() - s.hi - 1).setZero();
    }
    softmax_row(in, b, li, s, listed);
  } else {
    linear_row(in, b, li, i);
  }
}

}  // namespace

Eigen::Index block_width(Kernel kernel, const VisibleKeys& keys, Eigen::Index r, Eigen::Index n, Eigen::Index n_kv) {
  if (kernel == Kernel::Linear) return n_kv;
  const Span seen = block_span(keys, r, n);
  constexpr Eigen::Index kRegisterBlock = 24;  // keys per register tile of Eigen's product (3 packets of 8 doubles)
  if (seen.lo > seen.hi) return 0;             // no key
  return std::min(n_kv, (seen.hi + kRegisterBlock) / kRegisterBlock * kRegisterBlock);
}

void score_block(const HeadInputs& in, Eigen::Index r, Eigen::Index n, RowBlock& b) {
  b.r = r;
  b.n = n;
  b.n_kv = in.k.rows();
  b.keys = block_width(in.kernel, in.keys, r, n, in.k.rows());
  b.reserve_cells();
  b.row_max.resize(n);
  b.row_sum.resize(n);
  b.entropy.resize(n);
  b.status.assign(static_cast<std::size_t>(n), RowStatus::Ok);
  b.x.resize(std::max<Eigen::Index>(b.width(), 1));
  if (b.width() > 0) block_scores(in.q, in.k, r, n, b.width(), b.scores());
}

void compute_block(const HeadInputs& in, Eigen::Index r, Eigen::Index n, RowBlock& b) {
  score_block(in, r, n, b);
  for (Eigen::Index li = 0; li < n; ++li) fill_row(in, b, li);
}

// A block with fewer than one visible key in four (a sparse selection) goes row by row over each row's own keys;
// otherwise one product over the block's keys. The keys left out have weight exactly 0.
void block_output(const RowBlock& b, const VisibleKeys& keys, const Matrix& v, Matrix& out) {
  const Span seen = block_span(keys, b.r, b.n);  // within the block's keys
  if (seen.lo > seen.hi) return;                 // every row of the block sees nothing
  const auto w = b.weights();
  Eigen::Index cells = 0;  // the visible ones
  for (Eigen::Index i = b.r; i < b.r + b.n; ++i) cells += keys.count(i);
  if (4 * cells >= b.n * seen.size()) {
    out.middleRows(b.r, b.n).noalias() = w.middleCols(seen.lo, seen.size()) * v.middleRows(seen.lo, seen.size());
    return;
  }
  for (Eigen::Index li = 0; li < b.n; ++li) {
    const Eigen::Index i = b.r + li;
    const Span s = keys.span(i);
    const auto listed = keys.listed(i);
    if (s.lo > s.hi) continue;
    if (listed.empty()) out.row(i).noalias() = w.row(li).segment(s.lo, s.size()) * v.middleRows(s.lo, s.size());
    for (const Eigen::Index j : listed) out.row(i).noalias() += w(li, j) * v.row(j);
  }
}

}  // namespace attn
