#include "core/decode.h"

#include <algorithm>

#include "core/engine_entries.h"
#include "core/indexer.h"
#include "core/init.h"
#include "core/mask.h"
#include "core/positions.h"
#include "core/validate.h"

namespace attn {

std::int64_t cache_elements_per_token(const AttentionConfig& a) {
  const std::int64_t indexer = a.sparse ? a.sparse->indexer_dim : 0;
  if (a.variant == Variant::Mla) return a.latent_dim + (decoupled_rope(a) ? a.rope_dim : 0) + indexer;
  return std::int64_t(2) * kv_head_count(a) * a.head_dim + indexer;
}

Matrix decode_mask(const AttentionConfig& a, int n) {
  // The future zeroed in place: a product with a causal mask held three (T, T) matrices at once (400 MB at 4,096).
  Matrix mask = build_mask(a, n, n);
  mask.triangularView<Eigen::StrictlyUpper>().setZero();
  return mask;
}

KvCache make_kv_cache(const AttentionConfig& a, int capacity) {
  KvCache c;
  if (a.sparse) c.indexer_k.resize(capacity, a.sparse->indexer_dim);
  if (a.variant == Variant::Mla) {
    c.latent.resize(capacity, a.latent_dim);
    if (decoupled_rope(a)) c.k_r.resize(capacity, a.rope_dim);
  } else {
    for (int g = 0; g < kv_head_count(a); ++g) {
      c.k.emplace_back(capacity, a.head_dim);
      c.v.emplace_back(capacity, a.head_dim);
    }
  }
  return c;
}

namespace {

// Makes room for one more row, doubling the reserved rows when they run out.
void reserve_row(Matrix& m, int tokens) {
  if (tokens < m.rows()) return;
  m.conservativeResize(std::max<Eigen::Index>(2 * m.rows(), tokens + 1), m.cols());
}

// The embedding of row p with its absolute position added (sinusoidal, learned); as it is otherwise.
Matrix at_position(const AttentionConfig& a, const Weights& w, const Matrix& x_row, int p) {
  if (a.positions != Positions::Sinusoidal && a.positions != Positions::Learned) return x_row;
  return x_row + position_rows(a, w, first_position(a) + p, 1, static_cast<int>(x_row.cols()));
}

// Row p turned by RoPE at its position when the configuration uses it (not mla's content part: see decoupled_rope).
Matrix turned(const AttentionConfig& a, const Matrix& row, int p) {
  return a.positions == Positions::Rope ? rotate(row, p, a) : row;
}

}  // namespace

void append_to_cache(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row) {
  const int t = cache.tokens, d = a.head_dim;
  const Matrix x = at_position(a, w, x_row, t);
  if (a.sparse) {
    reserve_row(cache.indexer_k, t);
    cache.indexer_k.row(t) = x * *w.W_KI;
  }
  if (a.variant == Variant::Mla) {
    reserve_row(cache.latent, t);
    cache.latent.row(t) = x * *w.W_DKV;
    if (decoupled_rope(a)) {
      reserve_row(cache.k_r, t);
      cache.k_r.row(t) = turned(a, x * *w.W_KR, t);
    }
  } else {
    Matrix k = x * *w.W_K;  // (1, G*d)
    Matrix v = x * *w.W_V;  // (1, G*d)
    if (w.b_K) k += *w.b_K;
    if (w.b_V) v += *w.b_V;
    for (std::size_t g = 0; g < cache.k.size(); ++g) {
      reserve_row(cache.k[g], t);
      reserve_row(cache.v[g], t);
      cache.k[g].row(t) = turned(a, k.middleCols(static_cast<Eigen::Index>(g) * d, d), t);
      cache.v[g].row(t) = v.middleCols(static_cast<Eigen::Index>(g) * d, d);
    }
  }
  cache.tokens = t + 1;
}

namespace {

// mla as served: scores against the latent directly ([latent | k_r] with decoupled RoPE), values the latent too,
// mapped out by W_LO. Fills the step's weights and status; returns the output row.
Matrix attend_absorbed(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x, int position,
                       const Matrix& mask, const AbsorbedWeights* absorbed, DecodeStep& s) {
  const int n = cache.tokens, dc = a.latent_dim, r = a.rope_dim;
  AbsorbedWeights own;
  if (!absorbed) own = absorb_weights(a, w);
  const AbsorbedWeights& m = absorbed ? *absorbed : own;
  const Matrix latent = cache.latent.topRows(n);
  const Matrix query_side = w.W_DQ ? Matrix(x * *w.W_DQ) : x;
  Matrix keys = latent;
  Matrix q_r;  // (1, H*d_R)
  if (decoupled_rope(a)) {
    keys.resize(n, dc + r);
    keys << latent, cache.k_r.topRows(n);
    q_r = query_side * *w.W_QR;
  }
  Matrix concat(1, a.heads * dc);
  for (int h = 0; h < a.heads; ++h) {
    Matrix q = query_side * m.W_UQK[h];
    if (decoupled_rope(a)) {
      Matrix with_rope(1, dc + r);
      with_rope << q, turned(a, q_r.middleCols(h * r, r), position);
      q = std::move(with_rope);
    }
    const HeadTrace head = attend(q, keys, latent, mask, a.kernel, scale_factor(a));
    concat.middleCols(h * dc, dc) = head.output;
    s.weights.push_back(head.weights());
    s.status.push_back(head.row_status[0]);
  }
  Matrix out = concat * m.W_LO;
  if (w.b_O) out += *w.b_O;
  return out;
}

// Every query head h attends with queries(h) over keys(h) and values(h); the heads' outputs go through W_O and b_O
// when the layer has them.
template <typename Queries, typename Keys, typename Values>
Matrix attend_heads(const AttentionConfig& a, const Weights& w, const Matrix& mask, DecodeStep& s, Queries queries,
                    Keys keys, Values values) {
  const int d = a.head_dim;
  Matrix concat(1, a.heads * d);
  for (int h = 0; h < a.heads; ++h) {
    const HeadTrace head = attend(queries(h), keys(h), values(h), mask, a.kernel, scale_factor(a));
    concat.middleCols(h * d, d) = head.output;
    s.weights.push_back(head.weights());
    s.status.push_back(head.row_status[0]);
  }
  if (!w.W_O) return concat;
  Matrix out = concat * *w.W_O;
  if (w.b_O) out += *w.b_O;
  return out;
}

// mla whose keys the absorbed form does not reach (RoPE turns the expanded keys; biases sit beside the latent): every
// cached latent is expanded into each head's keys and values again at this step, the price of caching the latent.
// With a decoupled RoPE key, each head's [q | q_r] meets [k | k_r] as in the trace.
Matrix attend_expanded(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x, int position,
                       const Matrix& mask, DecodeStep& s) {
  const int n = cache.tokens, d = a.head_dim, r = a.rope_dim;
  const Matrix latent = cache.latent.topRows(n);  // (n, d_c)
  const Matrix query_side = w.W_DQ ? Matrix(x * *w.W_DQ) : x;
  Matrix K = latent * *w.W_UK, V = latent * *w.W_UV, q = query_side * (w.W_DQ ? *w.W_UQ : *w.W_Q);
  if (w.b_K) {
    K.rowwise() += w.b_K->row(0);
    V.rowwise() += w.b_V->row(0);
    q += *w.b_Q;
  }
  const Matrix q_r = decoupled_rope(a) ? Matrix(query_side * *w.W_QR) : Matrix();  // (1, H*d_R)
  const auto queries = [&](int h) -> Matrix {
    if (!decoupled_rope(a)) return turned(a, q.middleCols(h * d, d), position);
    Matrix with_rope(1, d + r);
    with_rope << q.middleCols(h * d, d), turned(a, q_r.middleCols(h * r, r), position);
    return with_rope;
  };
  const auto keys = [&](int h) -> Matrix {
    if (rope_turns_heads(a)) return rotate(Matrix(K.middleCols(h * d, d)), 0, a);  // row i at position i
    if (!decoupled_rope(a)) return K.middleCols(h * d, d);
    Matrix with_rope(n, d + r);
    with_rope << K.middleCols(h * d, d), cache.k_r.topRows(n);
    return with_rope;
  };
  return attend_heads(a, w, mask, s, queries, keys, [&](int h) -> Matrix { return V.middleCols(h * d, d); });
}

Matrix attend_explicit(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x, int position,
                       const Matrix& mask, DecodeStep& s) {
  const int n = cache.tokens, d = a.head_dim;
  Matrix q = x * *w.W_Q;  // (1, H*d): the only query computed this step
  if (w.b_Q) q += *w.b_Q;
  const auto queries = [&](int h) -> Matrix { return turned(a, q.middleCols(h * d, d), position); };
  const auto keys = [&](int h) -> Matrix { return cache.k[kv_head_for(a, h)].topRows(n); };
  const auto values = [&](int h) -> Matrix { return cache.v[kv_head_for(a, h)].topRows(n); };
  return attend_heads(a, w, mask, s, queries, keys, values);
}

}  // namespace

DecodeStep attend_to_cache(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x_row,
                           int position, const Matrix& mask_row, const AbsorbedWeights* absorbed) {
  const int n = cache.tokens;
  DecodeStep s;
  s.cache_tokens = n;
  s.cache_elements = cache_elements_per_token(a) * n;
  const Matrix x = at_position(a, w, x_row, position);
  Matrix mask = mask_row;
  if (a.sparse) {
    // The indexer scans the whole cache; the heads then read only the tokens it selects.
    s.indexer_scores = indexer_scores(x * *w.W_QI, x * *w.W_wI, cache.indexer_k.topRows(n), mask_row);
    s.selected = select_top_k(s.indexer_scores, mask_row, a.sparse->top_k);
    mask = mask.cwiseProduct(s.selected);
  }
  if (a.variant != Variant::Mla) s.output = attend_explicit(a, w, cache, x, position, mask, s);
  else if (rope_turns_heads(a) || a.qkv_bias) s.output = attend_expanded(a, w, cache, x, position, mask, s);
  else s.output = attend_absorbed(a, w, cache, x, position, mask, absorbed, s);
  return s;
}

DecodeStep decode_step(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row,
                       const Matrix& mask_row, const AbsorbedWeights* absorbed) {
  const int t = cache.tokens;
  append_to_cache(a, w, cache, x_row);
  DecodeStep s = attend_to_cache(a, w, cache, x_row, t, mask_row, absorbed);
  s.t = t;
  return s;
}

namespace {

DecodeTrace decode(const Scenario& s, const Weights* resolved) {
  note_engine_entry();
  validate(s);
  DecodeTrace out;
  out.name = s.name;
  out.attention = s.attention;
  out.weights = resolved ? resolve_weights(s, *resolved) : resolve_weights(s);
  out.elements_per_token = cache_elements_per_token(s.attention);
  const int n = s.n_q();
  const AbsorbedWeights absorbed = absorb_weights(out.attention, out.weights);
  if (s.context) {
    // Cross-attention: the context's keys and values, once, before the first token; every token reads them all.
    out.cross_attention = true;
    out.cached_tokens = s.context->tokens;
    out.cache = make_kv_cache(out.attention, s.n_kv());
    for (int j = 0; j < s.n_kv(); ++j)
      append_to_cache(out.attention, out.weights, out.cache, s.context->embeddings.row(j));
    const Matrix mask = build_mask(s.attention, n, s.n_kv());  // (N_Q, N_KV), as the full trace
    for (int t = 0; t < n; ++t) {
      DecodeStep step =
          attend_to_cache(out.attention, out.weights, out.cache, s.input.embeddings.row(t), t, mask.row(t), &absorbed);
      step.t = t;
      step.token = s.input.tokens[t];
      out.steps.push_back(std::move(step));
    }
    return out;
  }
  const Matrix mask = decode_mask(s.attention, n);
  out.cached_tokens = s.input.tokens;
  out.cache = make_kv_cache(out.attention, n);
  for (int t = 0; t < n; ++t) {
    DecodeStep step = decode_step(out.attention, out.weights, out.cache, s.input.embeddings.row(t),
                                  mask.row(t).head(t + 1), &absorbed);
    step.token = s.input.tokens[t];
    out.steps.push_back(std::move(step));
  }
  return out;
}

}  // namespace

DecodeTrace decode(const Scenario& s) { return decode(s, nullptr); }
DecodeTrace decode_with_weights(const Scenario& s, const Weights& resolved) { return decode(s, &resolved); }

}  // namespace attn
