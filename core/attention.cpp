#include "core/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/engine_entries.h"
#include "core/head_blocks.h"
#include "core/mask.h"
#include "core/positions.h"
#include "core/product.h"
#include "core/same_bits.h"
#include "core/validate.h"
#include "core/zeroed_matrix.h"

namespace attn {
namespace {

// Rows [r, r + n) of weights, keys 0 .. w-1 of them given and the rest 0; `zeros`: weights reads 0 everywhere already
// (zero_without_writing).
template <class Rows>
void keep_rows(Eigen::Index r, const Rows& given, bool zeros, Matrix& weights) {
  const Eigen::Index n = given.rows(), w = given.cols();
  if (!zeros) weights.block(r, w, n, weights.cols() - w).setZero();
  weights.block(r, 0, n, w) = given;
}

// A head with its inputs and room for its rows' statistics and output; the blocks fill them.
HeadTrace start_head(const HeadInputs& in, const Matrix& v, const SharedMatrix& mask,
                     const std::shared_ptr<const VisibleKeys>& keys) {
  const Eigen::Index n_q = in.q.rows();
  HeadTrace t;
  t.q = in.q;
  t.k = in.k;
  t.v = v;
  t.mask = mask;
  t.visible = keys;
  t.scale_factor = in.scale_factor;
  t.kernel = in.kernel;
  t.row_max.resize(n_q);
  t.row_sum.resize(n_q);
  t.entropy.resize(n_q);
  t.row_status.resize(static_cast<std::size_t>(n_q));
  t.output = Matrix::Zero(n_q, v.cols());
  return t;
}

// The same head of the trace before an edit, and the first key whose k or v changed since: a block of rows whose
// queries, visible keys and keys up to its width are the same bits is that head's block again (the same code on the
// same numbers).
struct EarlierHead {
  const HeadTrace& head;
  Eigen::Index k_from, v_from;
};

std::optional<EarlierHead> earlier_head(const HeadTrace* e, const HeadInputs& in, const Matrix& v, bool keep_weights) {
  if (!e || !e->visible || e->kernel != in.kernel || e->scale_factor != in.scale_factor ||
      (keep_weights && !e->weights_kept))
    return std::nullopt;
  const Matrix &q = e->scored_q(), &k = e->scored_k();
  if (q.rows() != in.q.rows() || q.cols() != in.q.cols() || k.rows() != in.k.rows() || k.cols() != in.k.cols() ||
      e->v.rows() != v.rows() || e->v.cols() != v.cols())
    return std::nullopt;
  return EarlierHead{*e, first_changed_row(in.k, k), first_changed_row(v, e->v)};
}

bool block_unchanged(const EarlierHead& e, const HeadInputs& in, Eigen::Index r, Eigen::Index n) {
  const Eigen::Index width = block_width(in.kernel, in.keys, r, n, in.k.rows());
  return width <= e.k_from && width <= e.v_from && same_rows(in.keys, *e.head.visible, r, n) &&
         same_bits(in.q.middleRows(r, n), e.head.scored_q().middleRows(r, n));
}

// Rows [r, r + n) taken from the earlier head; `weights`: kept (keep_rows).
void take_block(const HeadTrace& e, const HeadInputs& in, Eigen::Index r, Eigen::Index n, HeadTrace& t, Matrix* weights,
                bool zeros) {
  t.row_max.segment(r, n) = e.row_max.segment(r, n);
  t.row_sum.segment(r, n) = e.row_sum.segment(r, n);
  t.entropy.segment(r, n) = e.entropy.segment(r, n);
  std::copy_n(e.row_status.begin() + r, n, t.row_status.begin() + r);
  t.output.middleRows(r, n) = e.output.middleRows(r, n);
  if (weights)
    keep_rows(r, e.weights().block(r, 0, n, block_width(in.kernel, in.keys, r, n, in.k.rows())), zeros, *weights);
}

// A row whose output overflowed (a near-zero linear Z) is a ZeroSum row: no weights, no output.
void zero_overflowed_rows(HeadTrace& t, Matrix* weights) {
  for (Eigen::Index i = 0; i < t.output.rows(); ++i) {
    if (t.output.row(i).allFinite()) continue;
    t.row_status[static_cast<std::size_t>(i)] = RowStatus::ZeroSum;  // HeadTrace::weights zeroes the row
    t.output.row(i).setZero();
    t.entropy(i) = 0.0;
    if (weights) weights->row(i).setZero();
  }
}

// One head's attention over the mask's visible keys, found once for every head; a block of rows at a time, each
// block's scores and weights in scratch (head_blocks.h). `keep_weights`: the whole weights matrix is kept as the blocks
// make it (a window shows every head's), rather than made again on the first ask. `earlier`: the same head before an
// edit, whose blocks stand where their inputs did not change.
HeadTrace attend(const HeadInputs& in, const Matrix& v, const SharedMatrix& mask,
                 const std::shared_ptr<const VisibleKeys>& keys, bool keep_weights, const HeadTrace* earlier) {
  const Eigen::Index n_q = in.q.rows();
  Matrix weights;  // (N_Q, N_KV) kept_weights only
  if (keep_weights) weights.resize(n_q, in.k.rows());
  const bool zeros = keep_weights && zero_without_writing(weights);
  Matrix* kept = keep_weights ? &weights : nullptr;
  HeadTrace t = start_head(in, v, mask, keys);
  const std::optional<EarlierHead> before = earlier_head(earlier, in, v, keep_weights);
  RowBlock b;
  for (Eigen::Index r = 0; r < n_q; r += kRowBlock) {
    const Eigen::Index n = std::min(kRowBlock, n_q - r);
    if (before && block_unchanged(*before, in, r, n)) {
      take_block(before->head, in, r, n, t, kept, zeros);
      continue;
    }
    compute_block(in, r, n, b);
    t.row_max.segment(r, b.n) = b.row_max;
    t.row_sum.segment(r, b.n) = b.row_sum;
    t.entropy.segment(r, b.n) = b.entropy;
    std::copy(b.status.begin(), b.status.end(), t.row_status.begin() + r);
    block_output(b, *keys, v, t.output);
    if (keep_weights) keep_rows(b.r, b.weights(), zeros, weights);
  }
  zero_overflowed_rows(t, kept);
  if (keep_weights) {
    t.weights_kept = true;
    std::call_once(t.derived_->weights_once, [&] { t.derived_->weights = std::move(weights); });
  }
  return t;
}

// Every block of h again, its weights kept. A large matrix starts as zeros never written (a causal head's hidden
// triangle is never paged in); a smaller one gets its zeros here.
void make_weights(const HeadTrace& h, Matrix& weights) {
  if (!h.visible) return;
  const Eigen::Index n_q = h.scored_q().rows();
  weights.resize(n_q, h.scored_k().rows());
  const bool zeros = zero_without_writing(weights);
  const HeadInputs in{h.scored_q(), h.scored_k(), *h.mask, *h.visible, h.kernel, h.scale_factor};
  RowBlock b;
  for (Eigen::Index r = 0; r < n_q; r += kRowBlock) {
    compute_block(in, r, std::min(kRowBlock, n_q - r), b);
    keep_rows(b.r, b.weights(), zeros, weights);
    for (Eigen::Index i = r; i < r + b.n; ++i)  // a row whose output overflowed (attend) has no weights
      if (h.row_status[static_cast<std::size_t>(i)] == RowStatus::ZeroSum) weights.row(i).setZero();
  }
}

}  // namespace

HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, Kernel kernel,
                 double scale_factor) {
  const auto keys = std::make_shared<const VisibleKeys>(visible_keys(mask));
  return attend({q, k, mask, *keys, kernel, scale_factor}, v, SharedMatrix(mask), keys, false, nullptr);
}

HeadTrace fresh_head(const HeadTrace& h) {
  HeadTrace copy = h;
  forget_derived(copy);
  return copy;
}

void forget_derived(HeadTrace& h) {
  h.derived_ = std::make_shared<HeadTrace::Derived>();
  h.weights_kept = false;
}

double HeadTrace::masked(Eigen::Index i, Eigen::Index j) const {
  return (*mask)(i, j) != 0.0 ? scaled(i, j) : hidden_score();
}

Eigen::RowVectorXd HeadTrace::masked_row(Eigen::Index i) const {
  return (mask->row(i).array() != 0.0).select(scores().row(i).array() * scale_factor, hidden_score());
}

const Matrix& HeadTrace::weights() const {
  std::call_once(derived_->weights_once, [this] { make_weights(*this, derived_->weights); });
  return derived_->weights;
}

// A block of rows against every key at a time: the same bits as attend's blocks, which stop at the last key a row
// of the block sees, and as the whole product q k^T.
const Matrix& HeadTrace::scores() const {
  std::call_once(derived_->scores_once, [this] {
    Matrix& s = derived_->scores;
    const Matrix &q = scored_q(), &k = scored_k();
    s.resize(q.rows(), k.rows());
    // A block's first keys with the very product compute_block made them with (the bits the weights came from),
    // the keys past them apart.
    for_row_blocks(s.rows(), s.size() * q.cols(), [&](Eigen::Index r, Eigen::Index n) {
      const Eigen::Index w = visible ? block_width(kernel, *visible, r, n, k.rows()) : k.rows();
      if (w > 0) block_scores(q, k, r, n, w, s.block(r, 0, n, w));
      if (w < k.rows())
        s.block(r, w, n, k.rows() - w).noalias() = q.middleRows(r, n) * k.bottomRows(k.rows() - w).transpose();
    });
  });
  return derived_->scores;
}

const Matrix& HeadTrace::contribution() const {
  std::call_once(derived_->contribution_once, [this] {
    if (W_O_h) derived_->contribution.noalias() = output * *W_O_h;
  });
  return derived_->contribution;
}

// Row blocks on every thread: at 2,048 tokens each of these is 32 MiB of fresh pages, made for the followed head
// before a trace is shown.
const Matrix& HeadTrace::scaled() const {
  std::call_once(derived_->scaled_once, [this] {
    const Matrix& s = scores();
    Matrix& out = derived_->scaled;
    out.resize(s.rows(), s.cols());
    for_row_blocks(s.rows(), s.size(),
                   [&](Eigen::Index r, Eigen::Index n) { out.middleRows(r, n) = s.middleRows(r, n) * scale_factor; });
  });
  return derived_->scaled;
}

const Matrix& HeadTrace::masked() const {
  std::call_once(derived_->masked_once, [this] {
    const Matrix& s = scores();
    Matrix& out = derived_->masked;
    out.resize(s.rows(), s.cols());
    for_row_blocks(s.rows(), s.size(), [&](Eigen::Index r, Eigen::Index n) {
      out.middleRows(r, n) =
          (mask->middleRows(r, n).array() != 0.0).select(s.middleRows(r, n).array() * scale_factor, hidden_score());
    });
  });
  return derived_->masked;
}

double scale_factor(const AttentionConfig& a) {
  return a.scale ? 1.0 / std::sqrt(static_cast<double>(score_dim(a))) : 1.0;
}

namespace {

// Head h's query as the latent reads it: query_side W_UQK^(h), plus b_Q^(h) W_UK^(h)T when the queries have a bias.
Matrix absorbed_queries(const Trace& t, const AbsorbedWeights& m, int h) {  // (N_Q, d_c)
  const int d = t.attention.head_dim;
  Matrix q = t.query_side() * m.W_UQK[static_cast<std::size_t>(h)];
  if (t.weights.b_Q)
    q.rowwise() += (t.weights.b_Q->middleCols(h * d, d) * t.weights.W_UK->middleCols(h * d, d).transpose()).row(0);
  return q;
}

// What the value bias adds outside the latent: through each row's weights, (sum_j w_ij) b_V^(h), to the output
// before W_O.
void add_value_bias(const Trace& t, AbsorbedMla& m) {
  const int d = t.attention.head_dim, H = t.attention.heads;
  const Weights& w = t.weights;
  if (!w.b_V) return;
  Matrix value_bias(t.n_q(), H * d);  // (N_Q, H*d)
  for (int h = 0; h < H; ++h)
    value_bias.middleCols(h * d, d) =
        t.heads[static_cast<std::size_t>(h)].weights().rowwise().sum() * w.b_V->middleCols(h * d, d);
  ablate_heads(value_bias, d, t.ablated_heads, t.ablation_mode);
  m.output += w.W_O ? Matrix(value_bias * *w.W_O) : value_bias;
}

AbsorbedMla absorb(const Trace& t) {
  const AttentionConfig& a = t.attention;
  const int dc = a.latent_dim, H = a.heads;
  AbsorbedMla m;
  static_cast<AbsorbedWeights&>(m) = absorb_weights(a, t.weights);
  m.latent_output.resize(t.n_q(), H * dc);
  for (int h = 0; h < H; ++h) {
    m.queries.push_back(absorbed_queries(t, m, h));
    m.scores.push_back(m.queries.back() * t.latent.transpose());
    if (latent_part_apart(a)) m.latent_scores.push_back(m.scores.back());
    // q_i . b_K^(h), the same for every key of row i: the key bias, outside the latent.
    if (t.weights.b_K)
      m.scores.back().colwise() += (t.Q.middleCols(h * a.head_dim, a.head_dim) *
                                    t.weights.b_K->middleCols(h * a.head_dim, a.head_dim).transpose())
                                       .col(0);
    // The decoupled RoPE part is added beside the absorbed one: the latent itself is never turned.
    if (decoupled_rope(a)) m.scores.back().noalias() += t.heads[h].q_r * t.heads[h].k_r.transpose();
    m.latent_output.middleCols(h * dc, dc) = t.heads[h].weights() * t.latent;
  }
  // W_LO is linear: the latent columns ablated as the head's are what its ablated output meets in W_O.
  ablate_heads(m.latent_output, dc, t.ablated_heads, t.ablation_mode);
  m.output = m.latent_output * m.W_LO;
  add_value_bias(t, m);
  if (t.weights.b_O) m.output.rowwise() += t.weights.b_O->row(0);
  return m;
}

}  // namespace

bool latent_part_apart(const AttentionConfig& a) { return a.qkv_bias || decoupled_rope(a); }

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

// x W + b for a weight with a bias, x W without. A product with a bias takes no tiles from before (they hold the
// bias), nor from an earlier product that had one.
Matrix project_row_side(const Matrix& x, const SharedMatrix& W, const SharedMatrix& b, const Matrix& e_x,
                        const SharedMatrix& e_W, const SharedMatrix& e_b, const Matrix& e_out) {
  if (!b) return product(x, *W, e_b ? std::nullopt : earlier_product(e_x, e_W, e_out));
  Matrix out = product(x, *W);
  out.rowwise() += b->row(0);
  return out;
}

// Q, K and V (mla: through its latents). `e`: the trace before an edit, whose tiles stand where their inputs did not
// change (an empty trace when there is none).
void project(Trace& t, const Trace& e) {
  const AttentionConfig& a = t.attention;
  const Weights &w = t.weights, &ew = e.weights;
  const int d = a.head_dim;
  if (a.variant == Variant::Mla) {
    t.latent = product(t.input_kv(), *w.W_DKV, earlier_product(e.input_kv(), ew.W_DKV, e.latent));
    t.K = project_row_side(t.latent, w.W_UK, w.b_K, e.latent, ew.W_UK, ew.b_K, e.K);
    t.V = project_row_side(t.latent, w.W_UV, w.b_V, e.latent, ew.W_UV, ew.b_V, e.V);
    if (w.W_DQ) t.query_latent = product(t.input(), *w.W_DQ, earlier_product(e.input(), ew.W_DQ, e.query_latent));
    t.Q = w.W_DQ ? project_row_side(t.query_latent, w.W_UQ, w.b_Q, e.query_latent, ew.W_UQ, ew.b_Q, e.Q)
                 : project_row_side(t.input(), w.W_Q, w.b_Q, e.input(), ew.W_Q, ew.b_Q, e.Q);
  } else {
    t.Q = project_row_side(t.input(), w.W_Q, w.b_Q, e.input(), ew.W_Q, ew.b_Q, e.Q);
    t.K = project_row_side(t.input_kv(), w.W_K, w.b_K, e.input_kv(), ew.W_K, ew.b_K, e.K);
    t.V = project_row_side(t.input_kv(), w.W_V, w.b_V, e.input_kv(), ew.W_V, ew.b_V, e.V);
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
  const RopeSpec spec = rope_spec(a);
  r.queries = rope_table(spec, 0, t.n_q(), first_position(a));
  const RopeTable keys = rope_table(spec, 0, t.n_kv(), first_position(a));
  if (decoupled_rope(a)) {
    r.q_r = product(t.query_side(), *t.weights.W_QR);
    r.k_r = rotate(product(t.input_kv(), *t.weights.W_KR), keys);
  } else {
    for (const KvHeadTrace& g : t.kv_heads) r.keys.push_back(rotate(g.k, keys));
  }
  return r;
}

// Head h: its scores from the turned q and k with rope, from the plain ones otherwise. `earlier`: head h of the trace
// before an edit, if any.
HeadTrace run_head(const Trace& t, const Rope& rope, const SharedMatrix& mask,
                   const std::shared_ptr<const VisibleKeys>& keys, int h, bool keep_weights, const HeadTrace* earlier) {
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim, g = kv_head_for(a, h);
  const KvHeadTrace& kv = t.kv_heads[static_cast<std::size_t>(g)];
  const Matrix q = t.Q.middleCols(h * d, d);
  const auto scored = [&](const Matrix& q_s, const Matrix& k_s) {  // (N_Q, d_s), (N_KV, d_s)
    return attend({q_s, k_s, *mask, *keys, a.kernel, t.scale_factor}, kv.v, mask, keys, keep_weights, earlier);
  };
  HeadTrace head;
  if (a.positions != Positions::Rope) {
    head = scored(q, kv.k);
  } else if (!decoupled_rope(a)) {
    head = scored(rotate(q, rope.queries), rope.keys[static_cast<std::size_t>(g)]);
  } else {
    const int r = a.rope_dim;
    Matrix q_s(t.n_q(), d + r), k_s(t.n_kv(), d + r);  // [content | decoupled rope]
    q_s << q, rotate(rope.q_r.middleCols(h * r, r), rope.queries);
    k_s << kv.k, rope.k_r;
    head = scored(q_s, k_s);
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

Trace compute_trace(const Scenario& s, const Weights* resolved, TraceOptions options) {
  note_engine_entry();
  validate(s, nullptr, options.absorbed);
  for (const int h : options.ablated_heads) check_range(h, 0, s.attention.heads - 1, "ablated head");
  Trace t = start_trace(s, resolved);
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim;
  const Trace none;
  const Trace& e = options.earlier ? *options.earlier : none;
  const auto earlier_head = [&e](int h) {
    return h < static_cast<int>(e.heads.size()) ? &e.heads[static_cast<std::size_t>(h)] : nullptr;
  };
  project(t, e);
  const Matrix scenario_mask = build_mask(a, t.n_q(), t.n_kv());
  // Sparse attention: each query's top_k keys among those the scenario's mask shows. The selection lies inside
  // that mask and both are 0/1, so it is their product already.
  if (a.sparse) t.indexer = run_indexer(*a.sparse, t.weights, t.input(), t.input_kv(), scenario_mask);
  // One mask for every head: a head's trace points at it.
  const SharedMatrix mask = t.indexer ? t.indexer->selected : scenario_mask;
  const auto keys = std::make_shared<const VisibleKeys>(visible_keys(*mask));
  const Rope rope = prepare_rope(t);
  // Heads are independent: with OpenMP they are computed in parallel (OMP_NUM_THREADS says how many).
  t.heads.resize(static_cast<std::size_t>(a.heads));
  t.concat.resize(t.n_q(), a.heads * d);
  [[maybe_unused]] const bool big = std::int64_t{a.heads} * t.n_q() * t.n_kv() * d > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) if (big)
#endif
  for (int h = 0; h < a.heads; ++h) {
    HeadTrace& head = t.heads[static_cast<std::size_t>(h)];
    head = run_head(t, rope, mask, keys, h, options.keep_weights, earlier_head(h));
    t.concat.middleCols(h * d, d) = head.output;  // each head its own columns, on its own thread
  }
  t.ablated_heads = options.ablated_heads;
  t.ablation_mode = options.ablation_mode;
  ablate_heads(t.concat, d, t.ablated_heads, t.ablation_mode);
  t.output = t.weights.W_O ? project_row_side(t.concat, t.weights.W_O, t.weights.b_O, e.concat, e.weights.W_O,
                                              e.weights.b_O, e.output)
                           : t.concat;
  // RoPE turning the up-projected keys stands between W_UK and the latent: that form cannot be absorbed.
  if (a.variant == Variant::Mla && options.absorbed && !rope_turns_heads(a)) t.absorbed = absorb(t);
  return t;
}

}  // namespace

Trace compute_trace(const Scenario& s, TraceOptions options) { return compute_trace(s, nullptr, options); }
Trace compute_trace_with_weights(const Scenario& s, const Weights& resolved, TraceOptions options) {
  return compute_trace(s, &resolved, options);
}

}  // namespace attn
