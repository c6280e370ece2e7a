#include "core/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/mask.h"
#include "core/positions.h"
#include "core/product.h"
#include "core/validate.h"
#include "core/zeroed_matrix.h"

namespace attn {
namespace {

// -sum w ln w for weights e = exp(y) / z, with ln w = y - ln z: no logarithm per key. A key whose weight is 0
// adds nothing, though its y may be -inf (0 * -inf is NaN).
template <typename E, typename Y>
double entropy_of(const E& e, const Y& y, double z) {
  const double h = std::log(z) - (e * y).sum();
  return std::isfinite(h) ? h : std::log(z) - (e > 0.0).select(e * y, 0.0).sum();
}

// A row of numbers, as a matrix's row is (a column mixed into a row's arithmetic is a shape error).
using RowArray = Eigen::Array<double, 1, Eigen::Dynamic>;

// A head while attend builds it: its scores so far and its weights, written here and nowhere else.
struct HeadBuild {
  HeadTrace& t;
  Matrix& scores;          // (N_Q, N_KV) the cells of the head's score blocks; the rest not yet written
  Matrix& weights;         // (N_Q, N_KV)
  bool weights_are_zeros;  // every cell reads 0 already (zero_without_writing); else each row writes its own
};

// Softmax over the visible keys of row i's span; every other key keeps its weight of exactly 0. Subtracting the
// largest visible score keeps exp() in range; the ratios are unchanged. A row with listed keys (a span with holes)
// works on those alone: besides being fewer, a hidden key's exp(-inf) vectorised is the subnormal 5e-309, and
// arithmetic on subnormals is about a hundred times slower. The scaled scores are made in `x`, a row of scratch, and
// never stored (HeadTrace::scaled makes them again when asked).
void softmax_span(HeadBuild& b, Eigen::Index i, Span s, std::span<const Eigen::Index> listed, RowArray& x) {
  HeadTrace& t = b.t;
  auto w = b.weights.row(i).array();
  double m = 0.0, z = 0.0;
  if (listed.empty()) {  // a prefix or a band, every key of it visible: one vectorised pass
    auto e = w.segment(s.lo, s.size());
    auto xs = x.head(s.size());
    xs = b.scores.row(i).array().segment(s.lo, s.size()) * t.scale_factor;
    m = xs.maxCoeff();
    e = (xs - m).exp();
    z = e.sum();
    e /= z;
    t.entropy(i) = entropy_of(e, xs - m, z);
  } else {
    const auto count = static_cast<Eigen::Index>(listed.size());
    auto y = x.head(count);
    for (Eigen::Index c = 0; c < count; ++c) y(c) = b.scores(i, listed[c]) * t.scale_factor;
    m = y.maxCoeff();
    y -= m;
    RowArray ey = y.exp();
    z = ey.sum();
    ey /= z;
    for (Eigen::Index c = 0; c < count; ++c) w(listed[c]) = ey(c);
    t.entropy(i) = entropy_of(ey, y, z);
  }
  t.row_max(i) = m;
  t.row_sum(i) = z;
  t.row_status[i] = RowStatus::Ok;
}

// The linear kernel's row i: kappa(x) = x over the visible keys, divided by their sum; `x` holds the row's masked
// scores (0 where hidden), made in scratch.
void linear_row(HeadBuild& b, Eigen::Index i, RowArray& x) {
  HeadTrace& t = b.t;
  x = (t.mask->row(i).array() != 0.0).select(b.scores.row(i).array() * t.scale_factor, 0.0);
  auto w = b.weights.row(i).array();
  const double z = x.sum();
  t.row_sum(i) = z;
  // A sum that cancels to rounding noise (0.1 + 0.2 - 0.3) would turn into weights of 1e15.
  const double noise = 64 * std::numeric_limits<double>::epsilon() * x.abs().sum();
  w = x / z;
  if (std::abs(z) <= noise || !w.isFinite().all()) {
    w.setZero();
    t.row_status[i] = RowStatus::ZeroSum;
  } else if ((w < 0.0).any()) {
    t.row_status[i] = RowStatus::Signed;
    t.entropy(i) = std::numeric_limits<double>::quiet_NaN();
  } else {
    t.row_status[i] = RowStatus::Ok;
    t.entropy(i) = -(w > 0.0).select(w * w.log(), 0.0).sum();
  }
}

// Fills row i of weights, row_max, row_sum, entropy and row_status in one pass over its scores, so a long row is
// read from memory once. A causal row's weights outside its span are 0 (written here, or left unpaged when the matrix
// came as zeros), so exp() runs on half the cells.
void fill_row(HeadBuild& b, Eigen::Index i, const VisibleKeys& keys, RowArray& x) {
  HeadTrace& t = b.t;
  t.row_max(i) = 0.0;
  t.row_sum(i) = 0.0;
  t.entropy(i) = 0.0;
  const Span s = keys.span(i);
  auto w = b.weights.row(i);
  if (s.lo > s.hi) {
    if (!b.weights_are_zeros) w.setZero();
    t.row_status[i] = RowStatus::AllMasked;
  } else if (t.kernel == Kernel::Softmax) {
    if (!b.weights_are_zeros) {
      w.head(s.lo).setZero();
      w.tail(w.size() - s.hi - 1).setZero();
      if (!keys.listed(i).empty()) w.segment(s.lo, s.size()).setZero();
    }
    softmax_span(b, i, s, keys.listed(i), x);
  } else {
    linear_row(b, i, x);
  }
}

// The scores each block of rows reads: the keys some row of the block sees (a causal block stops at its last row).
// The blocks' spans are kept, so that HeadTrace::scores knows which cells are still to compute.
void block_scores(HeadBuild& b, const Matrix& q, const Matrix& k, const VisibleKeys& keys) {
  std::vector<Span>& blocks = b.t.derived_->score_blocks;
  for (Eigen::Index r = 0; r < q.rows(); r += HeadTrace::kScoreBlock) {
    const Eigen::Index n = std::min(HeadTrace::kScoreBlock, q.rows() - r);
    const Span s = block_span(keys, r, n);
    blocks.push_back(s);
    if (s.lo > s.hi) continue;
    b.scores.block(r, s.lo, n, s.size()).noalias() = q.middleRows(r, n) * k.middleRows(s.lo, s.size()).transpose();
  }
}

// Rows [r, r + n) of weights v. A block reads only the keys some row of it sees: a causal block stops at its
// last row (half the multiply-adds of the full product), a sliding window reads its band. A block with fewer
// than one visible key in four (a sparse selection) goes row by row over each row's own keys. The keys left
// out have weight exactly 0, and a mask that hides nothing gives the full product.
void weighted_values_block(const Matrix& weights, const Matrix& v, const VisibleKeys& keys, Eigen::Index r,
                           Eigen::Index n, Matrix& out) {
  const Span block = block_span(keys, r, n);
  if (block.lo > block.hi) return;  // every row of the block sees nothing
  Eigen::Index cells = 0;           // the visible ones
  for (Eigen::Index i = r; i < r + n; ++i) cells += keys.count(i);
  if (4 * cells >= n * block.size()) {
    out.middleRows(r, n).noalias() = weights.block(r, block.lo, n, block.size()) * v.middleRows(block.lo, block.size());
    return;
  }
  for (Eigen::Index i = r; i < r + n; ++i) {
    const Span s = keys.span(i);
    const auto listed = keys.listed(i);
    if (s.lo > s.hi) continue;
    if (listed.empty()) out.row(i).noalias() = weights.row(i).segment(s.lo, s.size()) * v.middleRows(s.lo, s.size());
    for (const Eigen::Index j : listed) out.row(i).noalias() += weights(i, j) * v.row(j);
  }
}

Matrix weighted_values(const Matrix& weights, const Matrix& v, const VisibleKeys& keys) {
  constexpr Eigen::Index kBlock = 128;
  Matrix out = Matrix::Zero(weights.rows(), v.cols());
  for (Eigen::Index r = 0; r < weights.rows(); r += kBlock)
    weighted_values_block(weights, v, keys, r, std::min(kBlock, weights.rows() - r), out);
  return out;
}

// One head's attention over the mask's visible keys, found once for every head.
HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const SharedMatrix& mask, const VisibleKeys& keys,
                 Kernel kernel, double scale_factor) {
  const Eigen::Index n_q = q.rows(), n_kv = k.rows();
  HeadTrace t;
  t.q = q;
  t.k = k;
  t.v = v;
  t.mask = mask;
  t.scale_factor = scale_factor;
  t.kernel = kernel;
  t.derived_->scores.resize(n_q, n_kv);  // a large one stays unpaged where no row block reads
  t.weights.resize(n_q, n_kv);
  HeadBuild b{t, t.derived_->scores, t.weights, zero_without_writing(t.weights)};
  block_scores(b, q, k, keys);
  t.row_max.resize(n_q);
  t.row_sum.resize(n_q);
  t.entropy.resize(n_q);
  t.row_status.assign(static_cast<std::size_t>(n_q), RowStatus::Ok);
  RowArray x(n_kv);  // a row's scaled scores, in turn
  for (Eigen::Index i = 0; i < n_q; ++i) fill_row(b, i, keys, x);
  t.output = weighted_values(b.weights, v, keys);
  for (Eigen::Index i = 0; i < n_q; ++i) {
    if (t.output.row(i).allFinite()) continue;  // a near-zero linear Z can still overflow here
    t.row_status[i] = RowStatus::ZeroSum;
    b.weights.row(i).setZero();
    t.output.row(i).setZero();
    t.entropy(i) = 0.0;
  }
  return t;
}

}  // namespace

HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, Kernel kernel,
                 double scale_factor) {
  return attend(q, k, v, SharedMatrix(mask), visible_keys(mask), kernel, scale_factor);
}

double HeadTrace::masked(Eigen::Index i, Eigen::Index j) const {
  return (*mask)(i, j) != 0.0 ? scaled(i, j) : hidden_score();
}

Eigen::RowVectorXd HeadTrace::masked_row(Eigen::Index i) const {
  return (mask->row(i).array() != 0.0).select(scores().row(i).array() * scale_factor, hidden_score());
}

// The cells attend left: for each block of rows, the keys left and right of the span it computed.
const Matrix& HeadTrace::scores() const {
  std::call_once(derived_->scores_once, [this] {
    const Matrix& qs = q_rope.size() > 0 ? q_rope : q;  // what attend multiplied
    const Matrix& ks = k_rope.size() > 0 ? k_rope : k;
    Matrix& s = derived_->scores;
    const Eigen::Index n_kv = s.cols();
    for (std::size_t b = 0; b < derived_->score_blocks.size(); ++b) {
      const Eigen::Index r = static_cast<Eigen::Index>(b) * kScoreBlock, n = std::min(kScoreBlock, s.rows() - r);
      const Span c = derived_->score_blocks[b];
      const Eigen::Index lo = c.lo <= c.hi ? c.lo : n_kv, right = c.lo <= c.hi ? n_kv - c.hi - 1 : 0;
      const auto rows = qs.middleRows(r, n);
      if (lo > 0) s.block(r, 0, n, lo).noalias() = rows * ks.topRows(lo).transpose();
      if (right > 0) s.block(r, n_kv - right, n, right).noalias() = rows * ks.bottomRows(right).transpose();
    }
  });
  return derived_->scores;
}

const Matrix& HeadTrace::contribution() const {
  std::call_once(derived_->contribution_once, [this] {
    if (W_O_h) derived_->contribution.noalias() = output * *W_O_h;
  });
  return derived_->contribution;
}

const Matrix& HeadTrace::scaled() const {
  std::call_once(derived_->scaled_once, [this] { derived_->scaled = scores() * scale_factor; });
  return derived_->scaled;
}

const Matrix& HeadTrace::masked() const {
  std::call_once(derived_->masked_once, [this] {
    derived_->masked = (mask->array() != 0.0).select(scores().array() * scale_factor, hidden_score());
  });
  return derived_->masked;
}

double scale_factor(const AttentionConfig& a) {
  return a.scale ? 1.0 / std::sqrt(static_cast<double>(score_dim(a))) : 1.0;
}

namespace {

AbsorbedMla absorb(const Trace& t) {
  const AttentionConfig& a = t.attention;
  const int dc = a.latent_dim, H = a.heads;
  AbsorbedWeights folded = absorb_weights(a, t.weights);
  AbsorbedMla m;
  m.latent_output.resize(t.n_q(), H * dc);
  for (int h = 0; h < H; ++h) {
    m.scores.push_back(t.query_side() * folded.W_UQK[static_cast<std::size_t>(h)] * t.latent.transpose());
    // The decoupled RoPE part is added beside the absorbed one: the latent itself is never turned.
    if (decoupled_rope(a)) {
      m.latent_scores.push_back(m.scores.back());
      m.scores.back().noalias() += t.heads[h].q_r * t.heads[h].k_r.transpose();
    }
    m.latent_output.middleCols(h * dc, dc) = t.heads[h].weights * t.latent;
  }
  m.W_UQK = std::move(folded.W_UQK);
  m.W_LO = std::move(folded.W_LO);
  m.output = m.latent_output * m.W_LO;
  return m;
}

}  // namespace

AbsorbedWeights absorb_weights(const AttentionConfig& a, const Weights& w) {
  AbsorbedWeights m;
  if (a.variant != Variant::Mla) return m;
  const int d = a.head_dim;
  const Matrix& W_q = w.W_UQ ? *w.W_UQ : *w.W_Q;                        // (d_q, H*d)
  Matrix block_uv = Matrix::Zero(a.heads * a.latent_dim, a.heads * d);  // blockdiag(W_UV^(h))
  for (int h = 0; h < a.heads; ++h) {
    m.W_UQK.push_back(W_q.middleCols(h * d, d) * w.W_UK->middleCols(h * d, d).transpose());
    block_uv.block(h * a.latent_dim, h * d, a.latent_dim, d) = w.W_UV->middleCols(h * d, d);
  }
  m.W_LO = w.W_O ? Matrix(block_uv * *w.W_O) : block_uv;
  return m;
}

namespace {

// The embeddings, positions and weights: everything before the projections.
Trace start_trace(const Scenario& s, const Weights* resolved) {
  const AttentionConfig& a = s.attention;
  Trace t;
  t.name = s.name;
  t.tokens = s.input.tokens;
  t.context_tokens = s.kv_side().tokens;
  t.cross_attention = s.context.has_value();
  t.attention = a;
  t.scale_factor = scale_factor(a);
  t.x = s.input.embeddings;
  t.x_kv = s.kv_side().embeddings;
  t.weights = resolved ? resolve_weights(s, *resolved) : resolve_weights(s);
  t.positions = position_rows(a, t.weights, first_position(a), std::max(t.n_q(), t.n_kv()), s.d_model());
  if (t.positions.size() > 0) {
    t.x_in = t.x + t.positions.topRows(t.n_q());
    t.x_kv_in = t.x_kv + t.positions.topRows(t.n_kv());
  }
  return t;
}

void project(Trace& t) {
  const AttentionConfig& a = t.attention;
  const Weights& w = t.weights;
  const int d = a.head_dim;
  if (a.variant == Variant::Mla) {
    t.latent = product(t.input_kv(), *w.W_DKV);
    t.K = product(t.latent, *w.W_UK);
    t.V = product(t.latent, *w.W_UV);
    if (w.W_DQ) t.query_latent = product(t.input(), *w.W_DQ);
    t.Q = w.W_DQ ? product(t.query_latent, *w.W_UQ) : product(t.input(), *w.W_Q);
  } else {
    t.Q = product(t.input(), *w.W_Q);
    t.K = product(t.input_kv(), *w.W_K);
    t.V = product(t.input_kv(), *w.W_V);
  }
  for (int g = 0; g < kv_head_count(a); ++g) t.kv_heads.push_back({t.K.middleCols(g * d, d), t.V.middleCols(g * d, d)});
}

// What every head's scores read with rope, computed once: the turned keys of each KV head (or mla's one
// decoupled key and every head's decoupled queries) and the angles of the query positions.
struct Rope {
  RopeTable queries;         // (N_Q, d/2), or (N_Q, d_R/2) for mla
  std::vector<Matrix> keys;  // per KV head (N_KV, d) turned; mla: empty
  Matrix q_r;                // (N_Q, H*d_R) mla: query side W_QR, not yet turned
  Matrix k_r;                // (N_KV, d_R)  mla: X_kv W_KR, turned
};

Rope prepare_rope(const Trace& t) {
  const AttentionConfig& a = t.attention;
  Rope r;
  if (a.positions != Positions::Rope) return r;
  const int width = rope_width(a);
  r.queries = rope_table(0, t.n_q(), width, a.rope_base, first_position(a));
  const RopeTable keys = rope_table(0, t.n_kv(), width, a.rope_base, first_position(a));
  if (decoupled_rope(a)) {
    r.q_r = product(t.query_side(), *t.weights.W_QR);
    r.k_r = rotate(product(t.input_kv(), *t.weights.W_KR), keys);
  } else {
    for (const KvHeadTrace& g : t.kv_heads) r.keys.push_back(rotate(g.k, keys));
  }
  return r;
}

// Head h: its scores from the turned q and k with rope, from the plain ones otherwise.
HeadTrace run_head(const Trace& t, const Rope& rope, const SharedMatrix& mask, const VisibleKeys& keys, int h) {
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim, g = kv_head_for(a, h);
  const KvHeadTrace& kv = t.kv_heads[static_cast<std::size_t>(g)];
  const auto q = t.Q.middleCols(h * d, d);
  HeadTrace head;
  if (a.positions != Positions::Rope) {
    head = attend(q, kv.k, kv.v, mask, keys, a.kernel, t.scale_factor);
  } else if (!decoupled_rope(a)) {
    head = attend(rotate(q, rope.queries), rope.keys[static_cast<std::size_t>(g)], kv.v, mask, keys, a.kernel,
                  t.scale_factor);
  } else {
    const int r = a.rope_dim;
    Matrix q_s(t.n_q(), d + r), k_s(t.n_kv(), d + r);  // [content | decoupled rope]
    q_s << q, rotate(rope.q_r.middleCols(h * r, r), rope.queries);
    k_s << kv.k, rope.k_r;
    head = attend(q_s, k_s, kv.v, mask, keys, a.kernel, t.scale_factor);
    head.q_r = q_s.rightCols(r);
    head.k_r = rope.k_r;
  }
  if (a.positions == Positions::Rope) {
    head.q_rope = std::move(head.q);
    head.k_rope = std::move(head.k);
    head.q = q;
    head.k = kv.k;
  }
  head.head = h;
  head.kv_head = g;
  if (t.weights.W_O) head.W_O_h = t.weights.W_O->middleRows(h * d, d);
  return head;
}

Trace compute_trace(const Scenario& s, const Weights* resolved) {
  validate(s);
  Trace t = start_trace(s, resolved);
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim;
  project(t);
  const Matrix scenario_mask = build_mask(a, t.n_q(), t.n_kv());
  // Sparse attention: each query's top_k keys among those the scenario's mask shows. The selection lies inside
  // that mask and both are 0/1, so it is their product already.
  if (a.sparse) t.indexer = run_indexer(*a.sparse, t.weights, t.input(), t.input_kv(), scenario_mask);
  // One mask for every head: a head's trace points at it.
  const SharedMatrix mask = t.indexer ? t.indexer->selected : scenario_mask;
  const VisibleKeys keys = visible_keys(*mask);
  const Rope rope = prepare_rope(t);
  // Heads are independent: with OpenMP they are computed in parallel (OMP_NUM_THREADS says how many).
  t.heads.resize(static_cast<std::size_t>(a.heads));
  [[maybe_unused]] const bool big = std::int64_t{a.heads} * t.n_q() * t.n_kv() * d > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) if (big)
#endif
  for (int h = 0; h < a.heads; ++h) t.heads[static_cast<std::size_t>(h)] = run_head(t, rope, mask, keys, h);
  t.concat.resize(t.n_q(), a.heads * d);
  for (int h = 0; h < a.heads; ++h) t.concat.middleCols(h * d, d) = t.heads[static_cast<std::size_t>(h)].output;
  t.output = t.weights.W_O ? product(t.concat, *t.weights.W_O) : t.concat;
  if (a.variant == Variant::Mla) t.absorbed = absorb(t);
  return t;
}

}  // namespace

Trace compute_trace(const Scenario& s) { return compute_trace(s, nullptr); }
Trace compute_trace_with_weights(const Scenario& s, const Weights& resolved) { return compute_trace(s, &resolved); }

}  // namespace attn
