#include "core/decode.h"

#include <algorithm>

#include "core/init.h"
#include "core/mask.h"
#include "core/validate.h"

namespace attn {

std::int64_t cache_elements_per_token(const AttentionConfig& a) {
  if (a.variant == Variant::Mla) return a.latent_dim;
  return std::int64_t(2) * kv_head_count(a) * a.head_dim;
}

Matrix decode_mask(const AttentionConfig& a, int n) {
  AttentionConfig causal = a;
  causal.mask = MaskKind::Causal;
  return build_mask(a, n, n).cwiseProduct(build_mask(causal, n, n));
}

KvCache make_kv_cache(const AttentionConfig& a, int capacity) {
  KvCache c;
  if (a.variant == Variant::Mla) {
    c.latent.resize(capacity, a.latent_dim);
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

}  // namespace

void append_to_cache(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row) {
  const int t = cache.tokens, d = a.head_dim;
  if (a.variant == Variant::Mla) {
    reserve_row(cache.latent, t);
    cache.latent.row(t) = x_row * *w.W_DKV;
  } else {
    const Matrix k = x_row * *w.W_K;  // (1, G*d)
    const Matrix v = x_row * *w.W_V;  // (1, G*d)
    for (std::size_t g = 0; g < cache.k.size(); ++g) {
      reserve_row(cache.k[g], t);
      reserve_row(cache.v[g], t);
      cache.k[g].row(t) = k.middleCols(static_cast<Eigen::Index>(g) * d, d);
      cache.v[g].row(t) = v.middleCols(static_cast<Eigen::Index>(g) * d, d);
    }
  }
  cache.tokens = t + 1;
}

DecodeStep attend_to_cache(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x_row,
                           const Matrix& mask_row, const AbsorbedWeights* absorbed) {
  const int n = cache.tokens, d = a.head_dim;
  DecodeStep s;
  s.cache_tokens = n;
  s.cache_elements = cache_elements_per_token(a) * n;
  const double scale = scale_factor(a);
  Matrix concat(1, a.heads * (a.variant == Variant::Mla ? a.latent_dim : d));
  if (a.variant == Variant::Mla) {
    AbsorbedWeights own;
    if (!absorbed) own = absorb_weights(a, w);
    const AbsorbedWeights& m = absorbed ? *absorbed : own;
    const Matrix latent = cache.latent.topRows(n);
    const Matrix query_side = w.W_DQ ? Matrix(x_row * *w.W_DQ) : x_row;
    for (int h = 0; h < a.heads; ++h) {
      // Scores against the latent directly; the values are the latent too, mapped out by W_LO below.
      const HeadTrace head = attend(query_side * m.W_UQK[h], latent, latent, mask_row, a.kernel, scale);
      concat.middleCols(h * a.latent_dim, a.latent_dim) = head.output;
      s.weights.push_back(head.weights);
      s.status.push_back(head.row_status[0]);
    }
    s.output = concat * m.W_LO;
  } else {
    const Matrix q = x_row * *w.W_Q;  // (1, H*d): the only query computed this step
    for (int h = 0; h < a.heads; ++h) {
      const int g = kv_head_for(a, h);
      const HeadTrace head =
          attend(q.middleCols(h * d, d), cache.k[g].topRows(n), cache.v[g].topRows(n), mask_row, a.kernel, scale);
      concat.middleCols(h * d, d) = head.output;
      s.weights.push_back(head.weights);
      s.status.push_back(head.row_status[0]);
    }
    s.output = w.W_O ? Matrix(concat * *w.W_O) : concat;
  }
  return s;
}

DecodeStep decode_step(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row,
                       const Matrix& mask_row, const AbsorbedWeights* absorbed) {
  const int t = cache.tokens;
  append_to_cache(a, w, cache, x_row);
  DecodeStep s = attend_to_cache(a, w, cache, x_row, mask_row, absorbed);
  s.t = t;
  return s;
}

namespace {

DecodeTrace decode(const Scenario& s, const Weights* resolved) {
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
          attend_to_cache(out.attention, out.weights, out.cache, s.input.embeddings.row(t), mask.row(t), &absorbed);
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
