#pragma once
// The attention engine: a Scenario in, an immutable Trace of every intermediate out.
// Row-vector convention of the documents: Q = X W_Q, and head h owns columns [h*d, (h+1)*d).
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ablation.h"
#include "core/indexer.h"
#include "core/init.h"
#include "core/mask.h"
#include "core/scenario.h"

namespace attn {

enum class RowStatus {
  Ok,         // the weights form a distribution
  AllMasked,  // the mask hides every key from this query: zero weights, zero output
  ZeroSum,  // linear kernel only: Z is 0 or lost in rounding (|Z| tiny next to the entries): zero weights, zero output
  Signed,   // linear kernel only: normalised, but some weights are negative, so not a distribution (entropy NaN)
};

// One head of one layer, in the order the pipeline computes it.
struct HeadTrace {
  int head = 0;
  int kv_head = 0;    // the key/value head this query head read
  Matrix q;           // (N_Q, d)     X W_Q^(h)  (never rotated)
  Matrix k;           // (N_KV, d)    X_kv W_K^(h)
  Matrix v;           // (N_KV, d)    X_kv W_V^(h)
  Matrix q_rope;      // (N_Q, d_s)   rope only: the queries the scores used (mla: [q | q_r]); d_s = score_dim
  Matrix k_rope;      // (N_KV, d_s)  rope only: the keys the scores used (mla: [k | k_r])
  Matrix q_r;         // (N_Q, d_R)   mla with rope: this head's decoupled query, turned by its position
  Matrix k_r;         // (N_KV, d_R)  mla with rope: the decoupled key every head shares, turned by its position
  SharedMatrix mask;  // (N_Q, N_KV)  1 = may attend, 0 = hidden (sparse: the mask AND the indexer's selection);
                      //              one matrix that every head of a trace shares
  std::shared_ptr<const VisibleKeys> visible;  // where each row of mask sees keys, shared like mask
  Matrix output;                               // (N_Q, d)     weights v
  SharedMatrix W_O_h;  // (d, d_model) W_O^(h), the rows of W_O this head's output meets; absent without W_O
  Vector row_max;      // (N_Q)  softmax: the shift m_i subtracted before exp; linear: 0
  Vector row_sum;      // (N_Q)  Z_i = sum_j kappa(masked_ij - m_i): the normaliser before division
  Vector entropy;      // (N_Q)  -sum_j w_ij ln w_ij in nats; NaN for a Signed row, 0 for a row that is not normalised
  std::vector<RowStatus> row_status;  // (N_Q)
  bool weights_kept = false;          // TraceOptions::keep_weights: weights() is made already
  double scale_factor = 1.0;          // scaled = scores x this: 1/sqrt(d_s), or 1 with scale off
  Kernel kernel = Kernel::Softmax;    // what masked writes where the mask hides a key: -inf (softmax) or 0 (linear)
  // The queries and keys the scores multiply: turned with rope, the projections otherwise.
  const Matrix& scored_q() const { return q_rope.size() > 0 ? q_rope : q; }
  const Matrix& scored_k() const { return k_rope.size() > 0 ? k_rope : k; }

  // scores = q k^T (rope: q_rope k_rope^T) and weights (each row sums to 1; all 0 for a row that is not Ok), (N_Q,
  // N_KV) each, are made when first asked for, like everything below. attend computes them a block of rows at a time
  // in scratch and keeps what each row yields: its statistics and its output (8 heads at 4,096 tokens would hold
  // 2 GiB of them; TraceOptions::keep_weights keeps the weights). The first ask for weights runs every block again,
  // the same code on the same numbers, so they are the bits the output was made from; scores is q k^T a block of rows
  // at a time, the same bits again.
  const Matrix& weights() const;
  double weights(Eigen::Index i, Eigen::Index j) const { return weights()(i, j); }
  const Matrix& scores() const;
  double scores(Eigen::Index i, Eigen::Index j) const { return scores()(i, j); }

  // scaled (scores x scale_factor) and masked (scaled where the mask shows the key, -inf or 0 where it hides it; the
  // linear kernel's kappa(x) = x) are not stored: a trace keeps only what cannot be recomputed cheaply. A cell costs
  // a multiply. A whole matrix is made on the first ask and kept with the head (a view showing a step asks every
  // frame); `derived_` holds those, shared by copies of the head.
  double scaled(Eigen::Index i, Eigen::Index j) const { return scores(i, j) * scale_factor; }
  double masked(Eigen::Index i, Eigen::Index j) const;
  double hidden_score() const { return kernel == Kernel::Softmax ? kNegInf : 0.0; }  // masked where the mask hides
  // The head's share of the output, output W_O^(h) (N_Q, d_model), made on the first ask like scaled; empty without
  // W_O.
  const Matrix& contribution() const;
  double contribution(Eigen::Index i, Eigen::Index c) const { return output.row(i).dot(W_O_h->col(c)); }
  const Matrix& scaled() const;                         // (N_Q, N_KV)
  const Matrix& masked() const;                         // (N_Q, N_KV)
  Eigen::RowVectorXd masked_row(Eigen::Index i) const;  // (N_KV) row i of masked alone
  struct Derived {
    std::once_flag weights_once, scores_once, scaled_once, masked_once, contribution_once;
    Matrix weights, scores, scaled, masked, contribution;
  };
  std::shared_ptr<Derived> derived_ = std::make_shared<Derived>();
};

// A copy of h whose matrices made on demand (weights, scores, scaled, masked, contribution) start afresh and go with
// the copy: what a printer walks, so that it holds one head's of them at a time and the trace stays as computed.
HeadTrace fresh_head(const HeadTrace& h);
// Frees what h made on demand (it is made again, the same bits, when next asked): a printer that explains each head
// with the trace itself calls it when the head is done.
void forget_derived(HeadTrace& h);

// One key/value head: what the cache holds for it (MHA: one per query head; GQA: G shared; MQA: 1).
struct KvHeadTrace {
  Matrix k;  // (N_KV, d)
  Matrix v;  // (N_KV, d)
};

// MLA computed the way it is served: keys and values are never formed; W_UK is absorbed into the query
// side and W_UV into the output projection. Must agree with the explicit form (tests hold it to 1e-9).
// MLA's weights folded as it is served, from the weights alone: computed once, then used by the trace's absorbed
// form and by every decoding step.
struct AbsorbedWeights {
  std::vector<Matrix> W_UQK;  // per head (d_q, d_c): W_UQ^(h) W_UK^(h)T, or W_Q^(h) W_UK^(h)T without a query latent
  Matrix W_LO;                // (H*d_c, d_out): blockdiag(W_UV^(h)) W_O, or blockdiag(W_UV^(h)) without W_O
};
// mla only (empty for the other variants); w holds the weights the variant uses (resolve_weights).
AbsorbedWeights absorb_weights(const AttentionConfig& a, const Weights& w);

// The absorbed weights (W_UQK, W_LO) and what the cached latents give through them.
// Whether an mla layer's absorbed scores add something beside the latent's part: the key bias (q . b_K) or the
// decoupled RoPE key (q_r k_r^T). AbsorbedMla::latent_scores holds that part apart then.
bool latent_part_apart(const AttentionConfig& a);

struct AbsorbedMla : AbsorbedWeights {
  // per head (N_Q, d_c): query_side W_UQK^(h) (+ b_Q^(h) W_UK^(h)T with biases), each query as the latent reads it
  std::vector<Matrix> queries;
  // per head (N_Q, N_KV): queries^(h) latent^T (+ q_i . b_K^(h) along row i with biases, + q_r^(h) k_r^T with rope),
  // equal to HeadTrace::scores
  std::vector<Matrix> scores;
  // With a key bias or decoupled RoPE (latent_part_apart), per head (N_Q, N_KV): queries^(h) latent^T alone, the part
  // the latent carries; scores = latent_scores + q_i . b_K^(h) along row i + q_r^(h) k_r^T
  std::vector<Matrix> latent_scores;
  Matrix latent_output;  // (N_Q, H*d_c): [weights_h latent]_h
  Matrix output;         // (N_Q, d_out): latent_output W_LO (+ the value bias through W_O), equal to Trace::output
};

struct Trace {
  std::string name;
  std::vector<std::string> tokens;          // query-side labels: rows of every matrix
  std::vector<std::string> context_tokens;  // key/value-side labels: columns of scores and weights
  bool cross_attention = false;
  AttentionConfig attention;
  double scale_factor = 1.0;            // 1/sqrt(score_dim) with scale on, 1 with it off
  Matrix x;                             // (N_Q, d_model)   the embeddings as given
  Matrix x_kv;                          // (N_KV, d_model)
  Matrix positions;                     // (max(N_Q, N_KV), d_model) sinusoidal or learned: the rows added; else empty
  Matrix x_in;                          // (N_Q, d_model)   x + positions rows 0..N_Q-1; empty without them
  Matrix x_kv_in;                       // (N_KV, d_model)  x_kv + positions rows 0..N_KV-1; empty without them
  Weights weights;                      // every weight the trace used, seeded ones included
  std::optional<IndexerTrace> indexer;  // sparse only: the scores over the scenario's mask and the selection
  Matrix query_latent;                  // (N_Q, d_c')   mla with query_latent_dim > 0: X W_DQ; else empty
  Matrix latent;                        // (N_KV, d_c)   mla: X_kv W_DKV, the only thing cached per token; else empty
  Matrix Q;                             // (N_Q, H*d)
  Matrix K;                             // (N_KV, G*d)   mla: latent W_UK, (N_KV, H*d)
  Matrix V;                             // (N_KV, G*d)   mla: latent W_UV, (N_KV, H*d)
  std::vector<KvHeadTrace> kv_heads;    // G of them; each query head names its own in HeadTrace::kv_head
  std::vector<HeadTrace> heads;
  Matrix concat;                   // (N_Q, H*d)  [output_1 ... output_H], the ablated heads' replaced
  std::vector<int> ablated_heads;  // TraceOptions::ablated_heads: their outputs zero or their mean in concat
  AblationMode ablation_mode = AblationMode::Zero;
  Matrix output;                        // (N_Q, d_model) concat W_O; (N_Q, H*d) = concat without W_O
  std::optional<AbsorbedMla> absorbed;  // mla only

  int n_q() const { return static_cast<int>(tokens.size()); }
  int n_kv() const { return static_cast<int>(context_tokens.size()); }
  // What the projections (and the indexer) read: the embeddings plus absolute positions, if any.
  const Matrix& input() const { return x_in.size() > 0 ? x_in : x; }
  const Matrix& input_kv() const { return x_kv_in.size() > 0 ? x_kv_in : x_kv; }
  // The query side before the per-head up-projection: the query latent for mla with one, else input().
  const Matrix& query_side() const { return query_latent.size() > 0 ? query_latent : input(); }
  bool has_output_projection() const { return weights.W_O.has_value(); }
  const Matrix& W_O() const { return *weights.W_O; }
};

// Attention of one head given its projected q, k, v and the 0/1 mask; fills everything from scores to output.
// scale_factor multiplies the scores (1/sqrt(d), or 1 with scale off).
HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, Kernel kernel,
                 double scale_factor);

// 1/sqrt(score_dim) with scale on (head_dim, plus rope_dim with decoupled RoPE), 1 with it off.
double scale_factor(const AttentionConfig& a);

struct TraceOptions {
  bool keep_weights = false;  // keep every head's weights as they are computed (a window shows them all)
  // The trace of the document before an edit (a window's drag): every tile of a projection and every block of a
  // head's rows whose inputs are the same bits is taken from it rather than computed, so the result is the same bits
  // as without it. It must stay alive until compute_trace returns.
  const Trace* earlier = nullptr;
  // Heads knocked out (ablation.h): their columns of concat are zeros or their mean over the positions before W_O;
  // each head's own trace (its output included) is what it computed.
  std::vector<int> ablated_heads{};
  AblationMode ablation_mode = AblationMode::Zero;
  // mla: compute the absorbed form beside the explicit one (its weights are H times the latent's size; a model's
  // layer whose heads are not kept leaves it out, and with it the bounds validate puts on its size).
  bool absorbed = true;
};

// Validates (throws InputError) and computes the whole trace.
Trace compute_trace(const Scenario& s, TraceOptions options = {});
// The same, with the weights resolve_weights(s) gives already at hand (a window that keeps them across edits of
// the embeddings): drawing a model-sized layer's weights from the seed costs more than attention at small T.
// Throws std::invalid_argument if a weight the variant uses is missing or has another shape.
Trace compute_trace_with_weights(const Scenario& s, const Weights& resolved, TraceOptions options = {});

}  // namespace attn
