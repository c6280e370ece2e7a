#pragma once
// The attention engine: a Scenario in, an immutable Trace of every intermediate out.
// Row-vector convention of the documents: Q = X W_Q, and head h owns columns [h*d, (h+1)*d).
#include <string>
#include <vector>

#include "core/init.h"
#include "core/scenario.h"

namespace attn {

enum class RowStatus {
  Ok,         // the weights form a distribution
  AllMasked,  // the mask hides every key from this query: zero weights, zero output
  ZeroSum,    // linear kernel only: Z is 0, or so near 0 that dividing by it overflows: zero weights, zero output
};

// One head of one layer, in the order the pipeline computes it.
struct HeadTrace {
  int head = 0;
  int kv_head = 0;         // the key/value head this query head read
  Matrix q;                // (N_Q, d)     X W_Q^(h)
  Matrix k;                // (N_KV, d)    X_kv W_K^(h)
  Matrix v;                // (N_KV, d)    X_kv W_V^(h)
  Matrix scores;           // (N_Q, N_KV)  q k^T
  Matrix scaled;           // (N_Q, N_KV)  scores / sqrt(d), or scores with scale off
  Matrix mask;             // (N_Q, N_KV)  1 = may attend, 0 = hidden
  Matrix masked;           // (N_Q, N_KV)  softmax: scaled with -inf where hidden; linear: kappa(scaled), 0 where hidden
  Matrix weights;          // (N_Q, N_KV)  each row sums to 1 (all 0 for a row that is not Ok)
  Matrix output;           // (N_Q, d)     weights v
  Matrix contribution;     // (N_Q, d_model) output W_O^(h); empty without W_O
  Vector row_max;          // (N_Q)  softmax: the shift m_i subtracted before exp; linear: 0
  Vector row_sum;          // (N_Q)  Z_i = sum_j kappa(masked_ij - m_i): the normaliser before division
  Vector entropy;          // (N_Q)  -sum_j w_ij ln w_ij over the positive weights, in nats
  std::vector<RowStatus> row_status;  // (N_Q)
};

struct Trace {
  std::string name;
  std::vector<std::string> tokens;          // query-side labels: rows of every matrix
  std::vector<std::string> context_tokens;  // key/value-side labels: columns of scores and weights
  bool cross_attention = false;
  AttentionConfig attention;
  double scale_factor = 1.0;  // 1/sqrt(d) with scale on, 1 with it off
  Matrix x;                   // (N_Q, d_model)
  Matrix x_kv;                // (N_KV, d_model)
  Weights weights;            // every weight the trace used, seeded ones included
  Matrix Q;                   // (N_Q, H*d)
  Matrix K;                   // (N_KV, H*d)
  Matrix V;                   // (N_KV, H*d)
  std::vector<HeadTrace> heads;
  Matrix concat;              // (N_Q, H*d)  [output_1 ... output_H]
  Matrix output;              // (N_Q, d_model) concat W_O; (N_Q, H*d) = concat without W_O

  int n_q() const { return static_cast<int>(tokens.size()); }
  int n_kv() const { return static_cast<int>(context_tokens.size()); }
  bool has_output_projection() const { return weights.W_O.has_value(); }
};

// Attention of one head given its projected q, k, v and the 0/1 mask; fills everything from scores to output.
HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, const AttentionConfig& config);

// Validates (throws ScenarioError) and computes the whole trace.
Trace compute_trace(const Scenario& s);

}  // namespace attn
