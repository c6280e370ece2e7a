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

MlaAbsorbed absorb_for_decoding(const AttentionConfig& a, const Weights& w) {
  MlaAbsorbed m;
  if (a.variant != Variant::Mla) return m;
  const int d = a.head_dim;
  const Matrix& W_q = w.W_UQ ? *w.W_UQ : *w.W_Q;
  Matrix block_uv = Matrix::Zero(a.heads * a.latent_dim, a.heads * d);
  for (int h = 0; h < a.heads; ++h) {
    m.W_UQK.push_back(W_q.middleCols(h * d, d) * w.W_UK->middleCols(h * d, d).transpose());
    block_uv.block(h * a.latent_dim, h * d, a.latent_dim, d) = w.W_UV->middleCols(h * d, d);
  }
  m.W_LO = w.W_O ? Matrix(block_uv * *w.W_O) : block_uv;
  return m;
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

DecodeStep decode_step(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row,
                       const Matrix& mask_row, const MlaAbsorbed* absorbed) {
  const int t = cache.tokens;
  const int d = a.head_dim;
  DecodeStep s;
  s.t = t;
  s.cache_tokens = t + 1;
  s.cache_elements = cache_elements_per_token(a) * (t + 1);
  const double scale = scale_factor(a);
  Matrix concat(1, a.heads * (a.variant == Variant::Mla ? a.latent_dim : d));
  if (a.variant == Variant::Mla) {
    MlaAbsorbed own;
    if (!absorbed) own = absorb_for_decoding(a, w);
    const MlaAbsorbed& m = absorbed ? *absorbed : own;
    reserve_row(cache.latent, t);
    cache.latent.row(t) = x_row * *w.W_DKV;
    cache.tokens = t + 1;
    const Matrix latent = cache.latent.topRows(t + 1);
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
    const Matrix q = x_row * *w.W_Q;
    const Matrix k = x_row * *w.W_K;
    const Matrix v = x_row * *w.W_V;
    for (std::size_t g = 0; g < cache.k.size(); ++g) {
      reserve_row(cache.k[g], t);
      reserve_row(cache.v[g], t);
      cache.k[g].row(t) = k.middleCols(g * d, d);
      cache.v[g].row(t) = v.middleCols(g * d, d);
    }
    cache.tokens = t + 1;
    for (int h = 0; h < a.heads; ++h) {
      const int g = kv_head_for(a, h);
      const HeadTrace head = attend(q.middleCols(h * d, d), cache.k[g].topRows(t + 1), cache.v[g].topRows(t + 1),
                                    mask_row, a.kernel, scale);
      concat.middleCols(h * d, d) = head.output;
      s.weights.push_back(head.weights);
      s.status.push_back(head.row_status[0]);
    }
    s.output = w.W_O ? Matrix(concat * *w.W_O) : concat;
  }
  return s;
}

namespace {

DecodeTrace decode(const Scenario& s, const Weights* resolved) {
  validate(s);
  if (s.context)
    throw ScenarioError("context", "decoding feeds each token's own keys and values into the cache; a scenario with a "
                                   "context (cross-attention) reads a fixed key/value side, so there is nothing to decode");
  DecodeTrace out;
  out.name = s.name;
  out.attention = s.attention;
  out.weights = resolved ? resolve_weights(s, *resolved) : resolve_weights(s);
  out.elements_per_token = cache_elements_per_token(s.attention);
  const int n = s.n_q();
  const Matrix mask = decode_mask(s.attention, n);
  const MlaAbsorbed absorbed = absorb_for_decoding(out.attention, out.weights);
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
