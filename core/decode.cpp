#include "core/decode.h"

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

namespace {

// What one step needs from the new token: its query per head (in the space the scores are taken in)
// and the row it appends to the cache.
class Decoder {
 public:
  Decoder(const AttentionConfig& a, const Weights& w, int n) : a_(a), w_(w), d_(a.head_dim) {
    if (a.variant == Variant::Mla) {
      cache_.latent.resize(n, a.latent_dim);
      // Served MLA never forms keys: W_UK folds into the query side, W_UV into the output.
      const Matrix& W_q = w.W_UQ ? *w.W_UQ : *w.W_Q;
      Matrix block_uv = Matrix::Zero(a.heads * a.latent_dim, a.heads * d_);
      for (int h = 0; h < a.heads; ++h) {
        W_UQK_.push_back(W_q.middleCols(h * d_, d_) * w.W_UK->middleCols(h * d_, d_).transpose());
        block_uv.block(h * a.latent_dim, h * d_, a.latent_dim, d_) = w.W_UV->middleCols(h * d_, d_);
      }
      W_LO_ = w.W_O ? Matrix(block_uv * *w.W_O) : block_uv;
    } else {
      for (int g = 0; g < kv_head_count(a); ++g) {
        cache_.k.emplace_back(n, d_);
        cache_.v.emplace_back(n, d_);
      }
    }
  }

  // Appends token t (embedding x, (1, d_model)) and attends; mask_row is (1, t+1).
  DecodeStep step(int t, const Matrix& x, const Matrix& mask_row) {
    DecodeStep s;
    s.t = t;
    s.cache_tokens = t + 1;
    const double scale = scale_factor(a_);
    Matrix concat(1, a_.heads * (a_.variant == Variant::Mla ? a_.latent_dim : d_));
    if (a_.variant == Variant::Mla) {
      cache_.latent.row(t) = x * *w_.W_DKV;
      const Matrix latent = cache_.latent.topRows(t + 1);
      const Matrix query_side = w_.W_DQ ? Matrix(x * *w_.W_DQ) : x;
      for (int h = 0; h < a_.heads; ++h) {
        // Scores against the latent directly; the values are the latent too, mapped out by W_LO below.
        const HeadTrace head = attend(query_side * W_UQK_[h], latent, latent, mask_row, a_.kernel, scale);
        concat.middleCols(h * a_.latent_dim, a_.latent_dim) = head.output;
        s.weights.push_back(head.weights);
        s.status.push_back(head.row_status[0]);
      }
      s.output = concat * W_LO_;
    } else {
      const Matrix q = x * *w_.W_Q;
      const Matrix k = x * *w_.W_K;
      const Matrix v = x * *w_.W_V;
      for (std::size_t g = 0; g < cache_.k.size(); ++g) {
        cache_.k[g].row(t) = k.middleCols(g * d_, d_);
        cache_.v[g].row(t) = v.middleCols(g * d_, d_);
      }
      for (int h = 0; h < a_.heads; ++h) {
        const int g = kv_head_for(a_, h);
        const HeadTrace head = attend(q.middleCols(h * d_, d_), cache_.k[g].topRows(t + 1), cache_.v[g].topRows(t + 1),
                                      mask_row, a_.kernel, scale);
        concat.middleCols(h * d_, d_) = head.output;
        s.weights.push_back(head.weights);
        s.status.push_back(head.row_status[0]);
      }
      s.output = w_.W_O ? Matrix(concat * *w_.W_O) : concat;
    }
    return s;
  }

  KvCache take_cache() { return std::move(cache_); }

 private:
  const AttentionConfig& a_;
  const Weights& w_;
  int d_;
  KvCache cache_;
  std::vector<Matrix> W_UQK_;  // mla: per head (d_q, d_c)
  Matrix W_LO_;                // mla: (H*d_c, d_out)
};

}  // namespace

DecodeTrace decode(const Scenario& s) {
  validate(s);
  if (s.context)
    throw ScenarioError("context", "decoding feeds each token's own keys and values into the cache; a scenario with a "
                                   "context (cross-attention) reads a fixed key/value side, so there is nothing to decode");
  DecodeTrace out;
  out.name = s.name;
  out.attention = s.attention;
  out.weights = resolve_weights(s);
  out.elements_per_token = cache_elements_per_token(s.attention);
  const int n = s.n_q();
  const Matrix mask = decode_mask(s.attention, n);
  Decoder decoder(out.attention, out.weights, n);
  for (int t = 0; t < n; ++t) {
    DecodeStep step = decoder.step(t, s.input.embeddings.row(t), mask.row(t).head(t + 1));
    step.token = s.input.tokens[t];
    step.cache_elements = out.elements_per_token * (t + 1);
    out.steps.push_back(std::move(step));
  }
  out.cache = decoder.take_cache();
  return out;
}

}  // namespace attn
