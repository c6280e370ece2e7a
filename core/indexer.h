#pragma once
// DeepSeek Sparse Attention's lightning indexer and top-k selection (DeepSeek-V3.2): a few cheap heads score
// every key a query may see, I[i, j] = sum_h w[i, h] * ReLU(q^I[i, h] . k^I[j]); each query then attends to
// only its top_k keys by that score. One selected set per query, shared by every attention head.
#include "core/config.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

struct IndexerTrace {
  Matrix q;         // (N_Q, H_I*d_I)  X W_QI; head h owns columns [h*d_I, (h+1)*d_I)
  Matrix k;         // (N_KV, d_I)     X_kv W_KI
  Matrix w;         // (N_Q, H_I)      X W_wI
  Matrix scores;    // (N_Q, N_KV)     I; -inf where the mask hides the key
  Matrix selected;  // (N_Q, N_KV)     1 = among the query's top_k visible keys, else 0
};

// I for queries q (n, H_I*d_I) with head weights w (n, H_I) against keys k (m, d_I); -inf where mask (n, m) is 0.
Matrix indexer_scores(const Matrix& q, const Matrix& w, const Matrix& k, const Matrix& mask);

// 0/1 (n, m): in each row the top_k largest scores among the keys the mask shows (ties: the lower j first;
// fewer visible keys than top_k: all of them).
Matrix select_top_k(const Matrix& scores, const Matrix& mask, int top_k);

// The whole indexer for queries x (N_Q, d_model) over keys x_kv (N_KV, d_model) under mask (N_Q, N_KV).
// w holds W_QI, W_KI and W_wI.
IndexerTrace run_indexer(const SparseConfig& c, const Weights& w, const Matrix& x, const Matrix& x_kv,
                         const Matrix& mask);

}  // namespace attn
