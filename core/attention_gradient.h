#pragma once
// One layer's attention as training runs it: the engine's forward pass (every variant, RoPE and MLA's decoupled
// RoPE, every mask a model may have, both kernels, with or without W_O, sparse selection), keeping what the backward
// pass needs, and that backward pass. Row vectors, as attention.h.
#include <vector>

#include "core/model.h"
#include "core/positions.h"

namespace attn {

// What one layer's backward pass sends into each head's kernel: d loss / d weights (the attention weights) and
// d loss / d scores (the scaled scores the kernel read; 0 on hidden keys), one (N, N) matrix per head each. With
// softmax, row i of d scores is row i of d weights times softmax's Jacobian diag(p) - p pᵀ: a saturated row passes
// almost nothing back. With the linear kernel it is (d weights - p·d weights) / Z on the visible keys.
struct HeadGradients {
  std::vector<Matrix> d_weights, d_scores;
};

struct AttentionCache {
  Matrix in;                    // (N, d_model) what the attention read
  Matrix query_side;            // (N, d_c') mla with a query latent: in W_DQ; else empty (the query side is `in`)
  Matrix latent;                // (N, d_c) mla: in W_DKV
  std::vector<Matrix> q;        // per head (N, d_s) the queries the scores read: turned with rope; mla with rope
                                // [q | q_r], d_s = score_dim
  std::vector<Matrix> k;        // per KV head (N, d_s) the keys the scores read, likewise ([k | k_r])
  std::vector<Matrix> v;        // per KV head (N, d)
  RopeTable rope;               // rope: positions 0..N-1 at the width RoPE turns (rope_width)
  RopeTable rope_back;          // the same angles turned back (cos, -sin): RoPE's gradient
  Matrix mask;                  // (N, N) 1 = may attend (sparse: the indexer's selection within the mask)
  std::vector<Matrix> weights;  // per head (N, N)
  std::vector<Vector> sums;     // linear kernel: per head, each row's Z (0 for a row the kernel zeroed)
  Matrix concat;                // (N, H*d)
};

// The layer's attention output on `in` (N, d_model): (N, d_model), concat W_O, or the concatenation itself for an
// attention without W_O (which a model file cannot hold: a model layer always writes back through W_O).
Matrix attention_forward(const ModelLayer& layer, const Matrix& in, AttentionCache& c);

// d loss / d in from d loss / d output; sets the gradient of every weight the attention trains in `g`, and each
// head's d weights and d scores in `heads` when given. The indexer's weights (sparse) get none: its top-k selection
// is a step function of them, so the loss has no slope there.
Matrix attention_backward(const ModelLayer& layer, const Matrix& d_out, const AttentionCache& c, Weights& g,
                          HeadGradients* heads);

}  // namespace attn
