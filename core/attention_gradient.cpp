// The backward pass of the engine's attention (attention.cpp) for one layer of a model. Every query head h reads
// its queries q_h and the keys and values of KV head g = kv_head_for(h), so a shared KV head (gqa, mqa) sums the
// gradients of the heads that read it, and mla's one decoupled key sums those of every head.
#include "core/attention_gradient.h"

#include "core/attention.h"
#include "core/indexer.h"
#include "core/mask.h"

namespace attn {
namespace {

// The projections: each head's queries and each KV head's keys and values, as the scores read them.
void project_heads(const AttentionConfig& a, const Weights& w, AttentionCache& c) {
  const Eigen::Index d = a.head_dim, r = a.rope_dim;
  const int kv = kv_head_count(a);
  if (a.positions == Positions::Rope) {
    c.rope = rope_table(rope_spec(a), 0, static_cast<int>(c.in.rows()), first_position(a));
    c.rope_back = {c.rope.cos, -c.rope.sin, c.rope.pairing};  // RoPE's rotation is orthogonal: its gradient turns back
  }
  Matrix Q, K, V, Q_r, k_r;  // (N, H*d), (N, G*d) x 2; mla with rope (N, H*d_R), (N, d_R)
  if (a.variant == Variant::Mla) {
    c.latent = c.in * *w.W_DKV;
    if (w.W_DQ) c.query_side = c.in * *w.W_DQ;
    const Matrix& side = w.W_DQ ? c.query_side : c.in;
    Q = side * (w.W_DQ ? *w.W_UQ : *w.W_Q);
    K = c.latent * *w.W_UK;
    V = c.latent * *w.W_UV;
    if (decoupled_rope(a)) {
      Q_r = side * *w.W_QR;
      k_r = rotate(c.in * *w.W_KR, c.rope);
    }
  } else {
    Q = c.in * *w.W_Q;
    K = c.in * *w.W_K;
    V = c.in * *w.W_V;
  }
  if (a.qkv_bias) {
    Q.rowwise() += w.b_Q->row(0);
    K.rowwise() += w.b_K->row(0);
    V.rowwise() += w.b_V->row(0);
  }
  const bool whole_heads_turn = rope_turns_heads(a);
  const Eigen::Index width = score_dim(a);
  for (int h = 0; h < a.heads; ++h) {
    Matrix q(c.in.rows(), width);
    q.leftCols(d) = whole_heads_turn ? rotate(Q.middleCols(h * d, d), c.rope) : Matrix(Q.middleCols(h * d, d));
    if (decoupled_rope(a)) q.rightCols(r) = rotate(Q_r.middleCols(h * r, r), c.rope);
    c.q.push_back(std::move(q));
  }
  for (int g = 0; g < kv; ++g) {
    Matrix k(c.in.rows(), width);
    k.leftCols(d) = whole_heads_turn ? rotate(K.middleCols(g * d, d), c.rope) : Matrix(K.middleCols(g * d, d));
    if (decoupled_rope(a)) k.rightCols(r) = k_r;
    c.k.push_back(std::move(k));
    c.v.push_back(V.middleCols(g * d, d));
  }
}

// Head h's weights: softmax of the scaled scores with hidden keys at -inf, or the engine's linear kernel (whose
// rows it zeroes where Z is lost in rounding, as the engine does).
void attend_head(const AttentionConfig& a, AttentionCache& c, int h) {
  const int g = kv_head_for(a, h);
  const Matrix& q = c.q[static_cast<std::size_t>(h)];
  const Matrix& k = c.k[static_cast<std::size_t>(g)];
  if (a.kernel == Kernel::Linear) {
    HeadTrace t = attend(q, k, c.v[static_cast<std::size_t>(g)], c.mask, a.kernel, scale_factor(a));
    Vector z = t.row_sum;
    for (Eigen::Index i = 0; i < z.size(); ++i)
      if (t.row_status[static_cast<std::size_t>(i)] == RowStatus::ZeroSum) z(i) = 0.0;
    c.sums.push_back(std::move(z));
    c.weights.push_back(t.weights());
    return;
  }
  Matrix s = q * k.transpose() * scale_factor(a);  // (N, N)
  s = (c.mask.array() != 0.0).select(s, kNegInf);
  Matrix p = softmax_rows(s);
  for (Eigen::Index i = 0; i < p.rows(); ++i)  // a row that sees no key gets no weight, as the engine's
    if ((c.mask.row(i).array() == 0.0).all()) p.row(i).setZero();
  c.weights.push_back(std::move(p));
}

// d loss / d scaled scores of head h from d loss / d weights: softmax's Jacobian p_i (δ_ij - p_j) row by row, or
// the linear kernel's (δ_ij - w_j) / Z on visible keys. Hidden keys pass nothing back.
Matrix kernel_backward(const AttentionConfig& a, const AttentionCache& c, int h, const Matrix& dp) {
  const Matrix& p = c.weights[static_cast<std::size_t>(h)];
  const Vector through = (dp.array() * p.array()).rowwise().sum();
  if (a.kernel == Kernel::Softmax) return (p.array() * (dp.colwise() - through).array()).matrix();
  const Vector& z = c.sums[static_cast<std::size_t>(h)];
  const Vector per_z = (z.array() != 0.0).select(z.array().inverse(), 0.0);
  return (c.mask.array() * (dp.colwise() - through).array()).colwise() * per_z.array();
}

// What reaches the projections' outputs, before they are turned back and multiplied into the weights.
struct ProjectionGradients {
  Matrix Q, K, V;   // (N, H*d), (N, G*d), (N, G*d); mla: G = H
  Matrix Q_r, k_r;  // mla with rope: (N, H*d_R), (N, d_R), both turned back
};

// Splits each head's d q and each KV head's d k into the projections they came from, turning RoPE back.
ProjectionGradients unpack(const AttentionConfig& a, const AttentionCache& c, const std::vector<Matrix>& dq,
                           const std::vector<Matrix>& dk, const std::vector<Matrix>& dv) {
  const Eigen::Index n = c.in.rows(), d = a.head_dim, r = a.rope_dim;
  const auto back = [&](const Matrix& x) { return rope_turns_heads(a) ? rotate(x, c.rope_back) : x; };
  ProjectionGradients p;
  p.Q.resize(n, a.heads * d);
  p.K.resize(n, static_cast<Eigen::Index>(dk.size()) * d);
  p.V.resize(n, p.K.cols());
  for (int h = 0; h < a.heads; ++h) p.Q.middleCols(h * d, d) = back(dq[static_cast<std::size_t>(h)].leftCols(d));
  for (std::size_t g = 0; g < dk.size(); ++g) {
    p.K.middleCols(static_cast<Eigen::Index>(g) * d, d) = back(dk[g].leftCols(d));
    p.V.middleCols(static_cast<Eigen::Index>(g) * d, d) = dv[g];
  }
  if (!decoupled_rope(a)) return p;
  p.Q_r.resize(n, a.heads * r);
  for (int h = 0; h < a.heads; ++h)
    p.Q_r.middleCols(h * r, r) = rotate(dq[static_cast<std::size_t>(h)].rightCols(r), c.rope_back);
  Matrix dk_r = Matrix::Zero(n, r);
  for (const Matrix& k : dk) dk_r += k.rightCols(r);
  p.k_r = rotate(dk_r, c.rope_back);
  return p;
}

// The projections' weights from what reached their outputs; returns d loss / d in.
Matrix projections_backward(const AttentionConfig& a, const Weights& w, const AttentionCache& c,
                            const ProjectionGradients& p, Weights& g) {
  if (a.qkv_bias) {
    g.b_Q = Matrix(p.Q.colwise().sum());
    g.b_K = Matrix(p.K.colwise().sum());
    g.b_V = Matrix(p.V.colwise().sum());
  }
  if (a.variant != Variant::Mla) {
    g.W_Q = c.in.transpose() * p.Q;
    g.W_K = c.in.transpose() * p.K;
    g.W_V = c.in.transpose() * p.V;
    return p.Q * w.W_Q->transpose() + p.K * w.W_K->transpose() + p.V * w.W_V->transpose();
  }
  g.W_UK = c.latent.transpose() * p.K;
  g.W_UV = c.latent.transpose() * p.V;
  const Matrix d_latent = p.K * w.W_UK->transpose() + p.V * w.W_UV->transpose();  // (N, d_c)
  g.W_DKV = c.in.transpose() * d_latent;
  Matrix d_in = d_latent * w.W_DKV->transpose();
  const Matrix& side = w.W_DQ ? c.query_side : c.in;
  const SharedMatrix& W_q = w.W_DQ ? w.W_UQ : w.W_Q;
  (w.W_DQ ? g.W_UQ : g.W_Q) = side.transpose() * p.Q;
  Matrix d_side = p.Q * W_q->transpose();  // (N, d_c') or (N, d_model)
  if (decoupled_rope(a)) {
    g.W_QR = side.transpose() * p.Q_r;
    d_side += p.Q_r * w.W_QR->transpose();
    g.W_KR = c.in.transpose() * p.k_r;
    d_in += p.k_r * w.W_KR->transpose();
  }
  if (!w.W_DQ) return d_in + d_side;
  g.W_DQ = c.in.transpose() * d_side;
  return d_in + d_side * w.W_DQ->transpose();
}

}  // namespace

Matrix attention_forward(const ModelLayer& layer, const Matrix& in, AttentionCache& c) {
  const AttentionConfig& a = layer.attention;
  const Weights& w = layer.weights;
  const Eigen::Index n = in.rows(), d = a.head_dim;
  c = AttentionCache{};
  c.in = in;
  project_heads(a, w, c);
  c.mask = build_mask(a, static_cast<int>(n), static_cast<int>(n));
  if (a.sparse) c.mask = run_indexer(*a.sparse, w, in, in, c.mask).selected;
  c.concat.resize(n, a.heads * d);
  for (int h = 0; h < a.heads; ++h) {
    attend_head(a, c, h);
    c.concat.middleCols(h * d, d) = c.weights.back() * c.v[static_cast<std::size_t>(kv_head_for(a, h))];
  }
  if (!w.W_O) return c.concat;
  Matrix out = c.concat * *w.W_O;
  if (w.b_O) out.rowwise() += w.b_O->row(0);
  return out;
}

Matrix attention_backward(const ModelLayer& layer, const Matrix& d_out, const AttentionCache& c, Weights& g,
                          HeadGradients* heads) {
  const AttentionConfig& a = layer.attention;
  const Weights& w = layer.weights;
  const Eigen::Index d = a.head_dim, n = c.in.rows();
  Matrix d_concat = d_out;
  if (w.W_O) {
    g.W_O = c.concat.transpose() * d_out;
    if (w.b_O) g.b_O = Matrix(d_out.colwise().sum());
    d_concat = d_out * w.W_O->transpose();
  }
  std::vector<Matrix> dq(static_cast<std::size_t>(a.heads));
  std::vector<Matrix> dk(c.k.size(), Matrix::Zero(n, c.k.front().cols())), dv(c.v.size(), Matrix::Zero(n, d));
  for (int h = 0; h < a.heads; ++h) {
    const auto kv = static_cast<std::size_t>(kv_head_for(a, h));
    const Matrix& p = c.weights[static_cast<std::size_t>(h)];
    const auto d_head = d_concat.middleCols(h * d, d);
    dv[kv] += p.transpose() * d_head;
    const Matrix dp = d_head * c.v[kv].transpose();
    Matrix ds = kernel_backward(a, c, h, dp);
    if (heads) {
      heads->d_weights.push_back(dp);
      heads->d_scores.push_back(ds);
    }
    ds *= scale_factor(a);
    dq[static_cast<std::size_t>(h)] = ds * c.k[kv];
    dk[kv] += ds.transpose() * c.q[static_cast<std::size_t>(h)];
  }
  return projections_backward(a, w, c, unpack(a, c, dq, dk, dv), g);
}

}  // namespace attn
