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
    const auto w = t.masked.row(i).array() / z;
    if (z == 0.0 || !w.allFinite()) {
      t.row_status[i] = RowStatus::ZeroSum;
      return;
    }
    t.weights.row(i) = w;
  }
  t.row_status[i] = RowStatus::Ok;
}

double entropy_of(const auto& row) {
  double h = 0.0;
  for (Eigen::Index j = 0; j < row.size(); ++j)
    if (row(j) > 0.0) h -= row(j) * std::log(row(j));
  return h;
}

}  // namespace

HeadTrace attend(const Matrix& q, const Matrix& k, const Matrix& v, const Matrix& mask, const AttentionConfig& config) {
  const Eigen::Index n_q = q.rows();
  HeadTrace t;
  t.q = q;
  t.k = k;
  t.v = v;
  t.scores = q * k.transpose();
  t.scaled = config.scale ? Matrix(t.scores / std::sqrt(static_cast<double>(q.cols()))) : t.scores;
  t.mask = mask;
  const auto hidden = mask.array() == 0.0;
  if (config.kernel == Kernel::Softmax)
    t.masked = hidden.select(kNegInf, t.scaled);
  else
    t.masked = hidden.select(0.0, t.scaled);  // kappa(x) = x, then the 0/1 product
  t.weights.resize(n_q, k.rows());
  t.row_max.resize(n_q);
  t.row_sum.resize(n_q);
  t.entropy.resize(n_q);
  t.row_status.assign(static_cast<std::size_t>(n_q), RowStatus::Ok);
  for (Eigen::Index i = 0; i < n_q; ++i) {
    normalise_row(t, i, config.kernel);
    t.entropy(i) = entropy_of(t.weights.row(i));
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
  t.scale_factor = a.scale ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
  t.x = s.input.embeddings;
  t.x_kv = s.kv_side().embeddings;
  t.weights = resolve_weights(s);
  t.Q = t.x * t.weights.W_Q;
  t.K = t.x_kv * t.weights.W_K;
  t.V = t.x_kv * t.weights.W_V;

  const Matrix mask = build_mask(a, t.n_q(), t.n_kv());
  t.concat.resize(t.n_q(), a.heads * d);
  for (int h = 0; h < a.heads; ++h) {
    HeadTrace head = attend(t.Q.middleCols(h * d, d), t.K.middleCols(h * d, d), t.V.middleCols(h * d, d), mask, a);
    head.head = h;
    head.kv_head = h;
    t.concat.middleCols(h * d, d) = head.output;
    if (t.weights.W_O) head.contribution = head.output * t.weights.W_O->middleRows(h * d, d);
    t.heads.push_back(std::move(head));
  }
  t.output = t.weights.W_O ? Matrix(t.concat * *t.weights.W_O) : t.concat;
  return t;
}

}  // namespace attn
