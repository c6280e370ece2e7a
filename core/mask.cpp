#include "core/mask.h"

#include <algorithm>
#include <limits>

#include "core/zeroed_matrix.h"

namespace attn {

Matrix build_mask(const AttentionConfig& config, int n_q, int n_kv) {
  if (config.mask == MaskKind::None) return Matrix::Ones(n_q, n_kv);
  if (config.mask == MaskKind::Custom)
    return Matrix::NullaryExpr(
        n_q, n_kv, [&](Eigen::Index i, Eigen::Index j) { return config.custom_mask(i, j) != 0.0 ? 1.0 : 0.0; });
  // Causal (j <= i) or a sliding window (i - window < j <= i): each row's ones are one span, and only those are
  // written when the matrix comes as zeros (a causal mask's hidden triangle then never pages in).
  Matrix m(n_q, n_kv);
  if (!zero_without_writing(m)) m.setZero();
  for (int i = 0; i < n_q; ++i) {
    const int lo = config.mask == MaskKind::Causal ? 0 : std::max(0, i - config.window + 1);
    const int hi = std::min(i, n_kv - 1);
    if (lo <= hi) m.row(i).segment(lo, hi - lo + 1).setOnes();
  }
  return m;
}

namespace {

// Row i's span.
Span visible_span(const Matrix& mask, Eigen::Index i) {
  // Sixteen cells at a time while all are hidden (a 0/1 mask sums to 0 there: one vectorised sum), then cell
  // by cell.
  const auto row = mask.row(i).array();
  Eigen::Index lo = 0, hi = row.size() - 1;
  while (hi - lo >= 16 && row.segment<16>(lo).sum() == 0.0) lo += 16;
  while (lo <= hi && row(lo) == 0.0) ++lo;
  while (hi - lo >= 16 && row.segment<16>(hi - 15).sum() == 0.0) hi -= 16;
  while (hi >= lo && row(hi) == 0.0) --hi;
  return {lo, hi};
}

}  // namespace

VisibleKeys visible_keys(const Matrix& mask) {
  VisibleKeys v;
  v.spans.reserve(static_cast<std::size_t>(mask.rows()));
  v.offsets.reserve(static_cast<std::size_t>(mask.rows()) + 1);
  v.offsets.push_back(0);
  for (Eigen::Index i = 0; i < mask.rows(); ++i) {
    const Span s = visible_span(mask, i);
    v.spans.push_back(s);
    const auto row = mask.row(i).segment(s.lo, std::max<Eigen::Index>(s.size(), 0)).array();
    const auto shown = static_cast<std::size_t>(row.sum());  // 0/1 cells
    if (shown < static_cast<std::size_t>(row.size())) {
      const std::size_t start = v.keys.size();
      v.keys.resize(start + static_cast<std::size_t>(row.size()));
      std::size_t n = start;
      for (Eigen::Index j = 0; j < row.size(); ++j) {  // branch-free compaction
        v.keys[n] = s.lo + j;
        n += row(j) != 0.0;
      }
      v.keys.resize(n);
    }
    v.offsets.push_back(v.keys.size());
  }
  return v;
}

bool same_rows(const VisibleKeys& a, const VisibleKeys& b, Eigen::Index r, Eigen::Index n) {
  if (a.spans.size() != b.spans.size()) return false;
  for (Eigen::Index i = r; i < r + n; ++i) {
    const Span &sa = a.span(i), &sb = b.span(i);
    const auto la = a.listed(i), lb = b.listed(i);
    if (sa.lo != sb.lo || sa.hi != sb.hi || !std::equal(la.begin(), la.end(), lb.begin(), lb.end())) return false;
  }
  return true;
}

Span block_span(const VisibleKeys& keys, Eigen::Index r, Eigen::Index n) {
  Span block{std::numeric_limits<Eigen::Index>::max(), -1};
  for (Eigen::Index i = r; i < r + n; ++i) {
    const Span s = keys.span(i);
    if (s.lo > s.hi) continue;
    block.lo = std::min(block.lo, s.lo);
    block.hi = std::max(block.hi, s.hi);
  }
  return block;
}

}  // namespace attn
