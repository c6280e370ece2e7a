#pragma once
// The sets S_i of the documents as a 0/1 matrix: mask(i, j) = 1 when query i may attend to key j.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "core/config.h"
#include "core/matrix.h"

namespace attn {

Matrix build_mask(const AttentionConfig& config, int n_q, int n_kv);  // (N_Q, N_KV)

// The visible keys of a row lie in [lo, hi] (lo > hi: none): a causal row's span is its prefix, a sliding
// window's its band, so the work on a row can stop at its ends.
struct Span {
  Eigen::Index lo, hi;
  Eigen::Index size() const { return hi - lo + 1; }
};

// Where each row of a mask is visible, found once and read by every head. A row whose span has holes (a sparse
// selection, a custom mask) also lists its visible keys, so its work is done on those alone.
struct VisibleKeys {
  std::vector<Span> spans;           // (N_Q)
  std::vector<std::size_t> offsets;  // (N_Q + 1) row i's keys are keys[offsets[i], offsets[i + 1])
  std::vector<Eigen::Index> keys;    // ascending within a row
  // Row i's listed keys: empty when every key of its span is visible.
  std::span<const Eigen::Index> listed(Eigen::Index i) const {
    const auto r = static_cast<std::size_t>(i);
    return {keys.data() + offsets[r], offsets[r + 1] - offsets[r]};
  }
  const Span& span(Eigen::Index i) const { return spans[static_cast<std::size_t>(i)]; }
  // How many keys row i sees.
  Eigen::Index count(Eigen::Index i) const {
    const auto n = static_cast<Eigen::Index>(listed(i).size());
    return n > 0 ? n : std::max<Eigen::Index>(span(i).size(), 0);
  }
};
VisibleKeys visible_keys(const Matrix& mask);

// Whether rows [r, r + n) see the same keys in a and b.
bool same_rows(const VisibleKeys& a, const VisibleKeys& b, Eigen::Index r, Eigen::Index n);

// The keys some row of [r, r + n) sees, the union of their spans: a causal block stops at its last row.
Span block_span(const VisibleKeys& keys, Eigen::Index r, Eigen::Index n);

}  // namespace attn
