#include "core/attention.h"

#include <cmath>
#include <limits>

#include "core/mask.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Normalises row i of `masked` into `weights`, recording the shift, the normaliser and the status.
void normalise_row(HeadTrace& t, Eigen::Index i, Kernel kernel) {
  const auto allowed = t.mask.row(i).array() != 0.0;
  t.row_max(i) = 0.0;
  t.row_sum(i) = 0.0;
  t.weights.row(i).setZero();
  if (!allowed.any()) {
    t.row_status[i] = RowStatus::AllMasked;
    return;
  }
  if (kernel == Kernel::Softmax) {
    // Subtracting the largest visible score keeps exp() in range; the ratios are unchanged.
    const double m = t.masked.row(i).maxCoeff();
    // std::exp, not Eigen's vectorised exp: that one clamps its input and turns exp(-inf) into 5e-309,
    // where a hidden key must get exactly 0.
    const Eigen::ArrayXd e = allowed.select((t.masked.row(i).array() - m).unaryExpr([](double x) { return std::exp(x); }), 0.0);
    t.row_max(i) = m;
    t.row_sum(i) = e.sum();
    t.weights.row(i) = e / t.row_sum(i);
  } else {
    const double z = t.masked.row(i).sum();
    t.row_sum(i) = z;
    // A sum that cancels to rounding noise (0.1 + 0.2 - 0.3) would turn into weights of 1e15.
    const double noise = 64 * std::numeric_limits<double>::epsilon() * t.masked.row(i).cwiseAbs().sum();
    const auto w = t.masked.row(i).array() / z;
    if (std::abs(z) <= noise || !w.allFinite()) {
      t.row_status[i] = RowStatus::ZeroSum;
      return;
    }
    t.weights.row(i) = w;
    if ((w < 0.0).any()) {
      t.row_status[i] = RowStatus::Signed;
      return;
    }
  }
  t.row_status[i] = RowStatus::Ok;
}

double entropy_of(const auto& row, RowStatus status) {
  if (status == RowStatus::Signed) return std::numeric_limits<double>::quiet_NaN();
  double h = 0.0;
  for (Eigen::Index j = 0; j < row.size(); ++j)
    if (row(j) > 0.0) h -= row(j) * std::log(row(j));
  return h;
}

}  // namespace

HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, Kernel kernel, double scale_factor) {
  const Eigen::Index n_q = q.rows();
  HeadTrace t;
  t.q = q;
  t.k = k;
  t.v = v;
  t.scores = q * k.transpose();
  t.scaled = scale_factor == 1.0 ? t.scores : Matrix(t.scores * scale_factor);
  t.mask = mask;
  const auto hidden = mask.array() == 0.0;
  if (kernel == Kernel::Softmax)
    t.masked = hidden.select(kNegInf, t.scaled);
  else
    t.masked = hidden.select(0.0, t.scaled);  // kappa(x) = x, then the 0/1 product
  t.weights.resize(n_q, k.rows());
  t.row_max.resize(n_q);
  t.row_sum.resize(n_q);
  t.entropy.resize(n_q);
  t.row_status.assign(static_cast<std::size_t>(n_q), RowStatus::Ok);
  for (Eigen::Index i = 0; i < n_q; ++i) {
    normalise_row(t, i, kernel);
    t.entropy(i) = entropy_of(t.weights.row(i), t.row_status[i]);
  }
  t.output = t.weights * v;
  for (Eigen::Index i = 0; i < n_q; ++i) {
    if (t.output.row(i).allFinite()) continue;  // a near-zero linear Z can still overflow here
    t.row_status[i] = RowStatus::ZeroSum;
    t.weights.row(i).setZero();
    t.output.row(i).setZero();
    t.entropy(i) = 0.0;
  }
  return t;
}

double scale_factor(const AttentionConfig& a) { return a.scale ? 1.0 / std::sqrt(static_cast<double>(a.head_dim)) : 1.0; }

namespace {

// The query side before the per-head up-projection: the query latent for mla with one, else X.
const Matrix& query_side(const Trace& t) { return t.query_latent.size() > 0 ? t.query_latent : t.x; }

AbsorbedMla absorb(const Trace& t) {
  const AttentionConfig& a = t.attention;
  const int d = a.head_dim, dc = a.latent_dim, H = a.heads;
  const Matrix& W_q = t.weights.W_UQ ? *t.weights.W_UQ : *t.weights.W_Q;  // (d_q, H*d)
  AbsorbedMla m;
  m.latent_output.resize(t.n_q(), H * dc);
  Matrix block_uv = Matrix::Zero(H * dc, H * d);  // blockdiag(W_UV^(h))
  for (int h = 0; h < H; ++h) {
    m.W_UQK.push_back(W_q.middleCols(h * d, d) * t.weights.W_UK->middleCols(h * d, d).transpose());
    m.scores.push_back(query_side(t) * m.W_UQK.back() * t.latent.transpose());
    m.latent_output.middleCols(h * dc, dc) = t.heads[h].weights * t.latent;
    block_uv.block(h * dc, h * d, dc, d) = t.weights.W_UV->middleCols(h * d, d);
  }
  m.W_LO = t.weights.W_O ? Matrix(block_uv * t.W_O()) : block_uv;
  m.output = m.latent_output * m.W_LO;
  return m;
}

}  // namespace

Trace compute_trace(const Scenario& s) {
  validate(s);
  const AttentionConfig& a = s.attention;
  const int d = a.head_dim;

  Trace t;
  t.name = s.name;
  t.tokens = s.input.tokens;
  t.context_tokens = s.kv_side().tokens;
  t.cross_attention = s.context.has_value();
  t.attention = a;
  t.scale_factor = scale_factor(a);
  t.x = s.input.embeddings;
  t.x_kv = s.kv_side().embeddings;
  t.weights = resolve_weights(s);
  const Weights& w = t.weights;
  if (a.variant == Variant::Mla) {
    t.latent = t.x_kv * *w.W_DKV;
    t.K = t.latent * *w.W_UK;
    t.V = t.latent * *w.W_UV;
    if (w.W_DQ) t.query_latent = t.x * *w.W_DQ;
    t.Q = w.W_DQ ? Matrix(t.query_latent * *w.W_UQ) : Matrix(t.x * *w.W_Q);
  } else {
    t.Q = t.x * *w.W_Q;
    t.K = t.x_kv * *w.W_K;
    t.V = t.x_kv * *w.W_V;
  }
  for (int g = 0; g < kv_head_count(a); ++g) t.kv_heads.push_back({t.K.middleCols(g * d, d), t.V.middleCols(g * d, d)});

  const Matrix mask = build_mask(a, t.n_q(), t.n_kv());
  t.concat.resize(t.n_q(), a.heads * d);
  for (int h = 0; h < a.heads; ++h) {
    const int g = kv_head_for(a, h);
    HeadTrace head =
        attend(t.Q.middleCols(h * d, d), t.kv_heads[g].k, t.kv_heads[g].v, mask, a.kernel, t.scale_factor);
    head.head = h;
    head.kv_head = g;
    t.concat.middleCols(h * d, d) = head.output;
    if (w.W_O) head.contribution = head.output * w.W_O->middleRows(h * d, d);
    t.heads.push_back(std::move(head));
  }
  t.output = w.W_O ? Matrix(t.concat * *w.W_O) : t.concat;
  if (a.variant == Variant::Mla) t.absorbed = absorb(t);
  return t;
}

}  // namespace attn
