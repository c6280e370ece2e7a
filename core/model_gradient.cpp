// The backward pass of model.h's forward pass (for the models check_trainable accepts): each part's forward keeps
// what its backward needs, and the backward runs the parts in reverse.
#include "core/model_gradient.h"

#include <algorithm>
#include <cmath>
#include <exception>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/engine_entries.h"
#include "core/positions.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr double kLayerNormEps = 1e-5;  // as layer_norm

// LN(x) = gain * xhat + bias, xhat = (x - mean) / sqrt(var + eps) per row.
struct NormCache {
  Matrix xhat;     // (N, d)
  Vector inv_std;  // (N)
};

Matrix norm_forward(const Matrix& x, const Matrix& gain, const Matrix& bias, NormCache& c) {
  const Vector mean = x.rowwise().mean();
  c.xhat = x.colwise() - mean;
  c.inv_std = (c.xhat.array().square().rowwise().mean() + kLayerNormEps).rsqrt().matrix();
  c.xhat.array().colwise() *= c.inv_std.array();
  return (c.xhat.array().rowwise() * gain.row(0).array()).rowwise() + bias.row(0).array();
}

// Returns d x; sets d gain and d bias.
Matrix norm_backward(const Matrix& dy, const SharedMatrix& gain, const NormCache& c, SharedMatrix& d_gain,
                     SharedMatrix& d_bias) {
  d_gain = (dy.array() * c.xhat.array()).colwise().sum().matrix();
  d_bias = dy.colwise().sum();
  const Eigen::ArrayXXd dxhat = dy.array().rowwise() * gain->row(0).array();
  const Eigen::ArrayXd mean_dxhat = dxhat.rowwise().mean();
  const Eigen::ArrayXd mean_dxhat_xhat = (dxhat * c.xhat.array()).rowwise().mean();
  Eigen::ArrayXXd dx = dxhat.colwise() - mean_dxhat;
  dx -= c.xhat.array().colwise() * mean_dxhat_xhat;
  return (dx.colwise() * c.inv_std.array()).matrix();
}

// The feed-forward sublayer: relu / gelu (exact): act(x W_1 + b_1) W_2 + b_2; swiglu: (silu(x W_1) * (x W_3)) W_2.
struct FfnCache {
  Matrix in, pre, gate, hidden;  // (N, d_model), x W_1 (+ b_1), x W_3 (swiglu), what W_2 reads: (N, d_ff) each
};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

Matrix ffn_forward(FfnKind kind, const LayerWeights& w, const Matrix& in, FfnCache& c) {
  c.in = in;
  c.pre = in * *w.W_1;
  if (kind == FfnKind::Swiglu) {
    c.gate = in * *w.W_3;
    c.hidden = c.pre.unaryExpr([](double v) { return v * sigmoid(v); }).cwiseProduct(c.gate);
    return c.hidden * *w.W_2;
  }
  c.pre.rowwise() += w.b_1->row(0);
  if (kind == FfnKind::Relu) c.hidden = c.pre.cwiseMax(0.0);
  else c.hidden = c.pre.unaryExpr([](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
  Matrix out = c.hidden * *w.W_2;
  out.rowwise() += w.b_2->row(0);
  return out;
}

// Returns d in; sets the FFN's weight gradients in `g`.
Matrix ffn_backward(FfnKind kind, const LayerWeights& w, const Matrix& d_out, const FfnCache& c, LayerWeights& g) {
  g.W_2 = c.hidden.transpose() * d_out;
  const Matrix d_hidden = d_out * w.W_2->transpose();
  if (kind == FfnKind::Swiglu) {
    const Matrix silu = c.pre.unaryExpr([](double v) { return v * sigmoid(v); });
    const Matrix d_silu = c.pre.unaryExpr([](double v) { return sigmoid(v) * (1.0 + v * (1.0 - sigmoid(v))); });
    const Matrix d_pre = d_hidden.cwiseProduct(c.gate).cwiseProduct(d_silu);
    const Matrix d_gate = d_hidden.cwiseProduct(silu);
    g.W_1 = c.in.transpose() * d_pre;
    g.W_3 = c.in.transpose() * d_gate;
    return d_pre * w.W_1->transpose() + d_gate * w.W_3->transpose();
  }
  g.b_2 = d_out.colwise().sum();
  // relu' is 1 above 0; gelu'(v) = Phi(v) + v phi(v).
  const Matrix slope =
      kind == FfnKind::Relu ? Matrix((c.pre.array() > 0.0).cast<double>()) : c.pre.unaryExpr([](double v) {
        return 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
      });
  const Matrix d_pre = d_hidden.cwiseProduct(slope);
  g.W_1 = c.in.transpose() * d_pre;
  g.b_1 = d_pre.colwise().sum();
  return d_pre * w.W_1->transpose();
}

struct LayerCache {
  NormCache ln1, ln2;
  AttentionCache attention;
  FfnCache ffn;
};

// pre: x + Attn(LN1(x)), then + FFN(LN2(.)); none: without the norms; post: LN1(x + Attn(x)), LN2(. + FFN(.)).
Matrix layer_forward(const Model& m, const ModelLayer& layer, Matrix x, LayerCache& c) {
  const LayerWeights& w = layer.own;
  const bool pre = m.norm == Norm::Pre, post = m.norm == Norm::Post, ffn = m.ffn.kind != FfnKind::None;
  x += attention_forward(layer, pre ? norm_forward(x, *w.ln1_gain, *w.ln1_bias, c.ln1) : x, c.attention);
  if (post) x = norm_forward(x, *w.ln1_gain, *w.ln1_bias, c.ln1);
  if (!ffn) return x;
  x += ffn_forward(m.ffn.kind, w, pre ? norm_forward(x, *w.ln2_gain, *w.ln2_bias, c.ln2) : x, c.ffn);
  if (post) x = norm_forward(x, *w.ln2_gain, *w.ln2_bias, c.ln2);
  return x;
}

// The layer_forward above in reverse: d of its output in, d of its input out; the layer's gradients set in `g`.
Matrix layer_backward(const Model& m, const ModelLayer& layer, Matrix dx, const LayerCache& c, ModelLayer& g,
                      HeadGradients* heads) {
  const LayerWeights& w = layer.own;
  LayerWeights& gw = g.own;
  const bool pre = m.norm == Norm::Pre, post = m.norm == Norm::Post;
  if (m.ffn.kind != FfnKind::None) {
    if (post) dx = norm_backward(dx, w.ln2_gain, c.ln2, gw.ln2_gain, gw.ln2_bias);
    const Matrix d_in = ffn_backward(m.ffn.kind, w, dx, c.ffn, gw);
    dx += pre ? norm_backward(d_in, w.ln2_gain, c.ln2, gw.ln2_gain, gw.ln2_bias) : d_in;
  }
  if (post) dx = norm_backward(dx, w.ln1_gain, c.ln1, gw.ln1_gain, gw.ln1_bias);
  const Matrix d_in = attention_backward(layer, dx, c.attention, g.weights, heads);
  dx += pre ? norm_backward(d_in, w.ln1_gain, c.ln1, gw.ln1_gain, gw.ln1_bias) : d_in;
  return dx;
}

struct Forward {
  std::vector<LayerCache> layers;
  NormCache final_norm;
  Matrix final;          // (N, d_model): what the unembedding reads
  Matrix probabilities;  // (N, V)
  double loss = 0.0;
  int counted = 0;  // positions with a target
};

Forward forward(const Model& m, const std::vector<int>& ids, const std::vector<int>& targets) {
  const Eigen::Index n = static_cast<Eigen::Index>(ids.size());
  Forward f;
  Matrix x(n, m.d_model);
  for (Eigen::Index i = 0; i < n; ++i) x.row(i) = m.embedding->row(ids[static_cast<std::size_t>(i)]);
  if (m.positions == Positions::Learned) x += m.W_P->topRows(n);
  if (m.positions == Positions::Sinusoidal) x += sinusoidal_positions(0, static_cast<int>(n), m.d_model, m.rope_base);
  f.layers.resize(m.layers.size());
  for (std::size_t l = 0; l < m.layers.size(); ++l) x = layer_forward(m, m.layers[l], std::move(x), f.layers[l]);
  f.final = m.norm == Norm::Pre ? norm_forward(x, *m.final_gain, *m.final_bias, f.final_norm) : x;
  f.probabilities = softmax_rows(f.final * *m.unembedding);
  for (Eigen::Index i = 0; i < n; ++i) {
    const int t = targets[static_cast<std::size_t>(i)];
    if (t == kNoTarget) continue;
    f.loss -= std::log(f.probabilities(i, t));
    ++f.counted;
  }
  if (f.counted > 0) f.loss /= f.counted;
  return f;
}

void check_inputs(const Model& m, const std::vector<int>& ids, const std::vector<int>& targets,
                  bool need_target = true) {
  check_trainable(m);
  check_token_count(m, static_cast<std::int64_t>(ids.size()), "tokens");
  if (targets.size() != ids.size())
    throw InputError("targets", "expected one per token (" + std::to_string(ids.size()) + ") but found " +
                                    std::to_string(targets.size()));
  const int vocab = static_cast<int>(m.vocab.size());
  bool any = false;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    check_range(ids[i], 0, vocab - 1, "tokens[" + std::to_string(i) + "]");
    if (targets[i] != kNoTarget) check_range(targets[i], 0, vocab - 1, "targets[" + std::to_string(i) + "]");
    any = any || targets[i] != kNoTarget;
  }
  if (!any && need_target) throw InputError("targets", "expected at least one position with a target but found none");
}

// The model's configuration without its weights: the gradient fills in the ones training changes.
Model without_weights(const Model& m) {
  Model g = m;
  g.embedding.reset();
  g.W_P.reset();
  g.final_gain.reset();
  g.final_bias.reset();
  g.unembedding.reset();
  for (ModelLayer& l : g.layers) {
    l.weights = Weights{};
    l.own = LayerWeights{};
  }
  return g;
}

LossGradient unchecked_loss_gradient(const Model& m, const std::vector<int>& ids, const std::vector<int>& targets,
                                     std::vector<HeadGradients>* layers = nullptr, int only_layer = -1) {
  const Forward f = forward(m, ids, targets);
  if (layers) layers->assign(m.layers.size(), HeadGradients{});
  LossGradient r{f.loss, without_weights(m)};
  Model& g = r.gradient;
  // d loss / d logits: (p - onehot(target)) / counted on the rows with a target.
  Matrix d_logits = f.probabilities;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Eigen::Index row = static_cast<Eigen::Index>(i);
    if (targets[i] == kNoTarget) d_logits.row(row).setZero();
    else d_logits(row, targets[i]) -= 1.0;
  }
  d_logits /= f.counted;
  g.unembedding = f.final.transpose() * d_logits;
  Matrix dx = d_logits * m.unembedding->transpose();
  if (m.norm == Norm::Pre) dx = norm_backward(dx, m.final_gain, f.final_norm, g.final_gain, g.final_bias);
  for (std::size_t l = m.layers.size(); l-- > 0;)
    dx = layer_backward(m, m.layers[l], std::move(dx), f.layers[l], g.layers[l],
                        layers && (only_layer < 0 || static_cast<int>(l) == only_layer) ? &(*layers)[l] : nullptr);
  Matrix d_embedding = Matrix::Zero(m.embedding->rows(), m.d_model);
  for (std::size_t i = 0; i < ids.size(); ++i) d_embedding.row(ids[i]) += dx.row(static_cast<Eigen::Index>(i));
  g.embedding = std::move(d_embedding);
  if (m.positions == Positions::Learned) {
    Matrix d_positions = Matrix::Zero(m.W_P->rows(), m.d_model);
    d_positions.topRows(dx.rows()) = dx;
    g.W_P = std::move(d_positions);
  }
  return r;
}

// The indexer's weights (sparse) are not trained: its top-k selection is a step function of them, so the loss has no
// slope there. DeepSeek-V3.2 trains its indexer with a loss of its own, which this model does not have.
bool indexer_weight(WeightId id) { return id == WeightId::W_QI || id == WeightId::W_KI || id == WeightId::W_wI; }

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace

std::vector<int> next_token_targets(const std::vector<int>& ids) {
  std::vector<int> t(ids.begin() + (ids.empty() ? 0 : 1), ids.end());
  t.push_back(kNoTarget);
  return t;
}

// What training computes the gradient of: LayerNorm at epsilon 1e-5, the FFN kinds relu, gelu and swiglu, and an
// unembedding of its own. The models of real checkpoints are run, not trained.
void check_trainable(const Model& m) {
  const auto refuse = [](const char* field, const std::string& what) {
    throw InputError(field, what +
                                ": training does not support it (it trains layer_norm models at norm_eps 1e-5 with "
                                "an ffn of relu, gelu or swiglu and an unembedding of their own)");
  };
  if (m.norm_function != NormFunction::LayerNorm) refuse("norm_function", "rms_norm");
  if (m.norm_eps != kLayerNormEps) refuse("norm_eps", "an epsilon of " + general_number(m.norm_eps));
  if (m.ffn.kind == FfnKind::GeluTanh) refuse("ffn.kind", "gelu_tanh");
  if (m.tied_unembedding) refuse("tied_unembedding", "a tied unembedding");
  for (std::size_t l = 0; l < m.layers.size(); ++l)
    if (m.layers[l].attention.mask == MaskKind::Custom)  // a model file cannot give one; a program might
      throw InputError("layers[" + std::to_string(l) + "].attention.mask",
                       "a custom mask: training does not support it (a model's masks are none, causal or "
                       "sliding_window)");
}

std::vector<TrainedWeight> trained_weights(Model& m) {
  std::vector<TrainedWeight> w;
  const auto add = [&w](std::string field, SharedMatrix& slot) {
    if (slot) w.push_back({std::move(field), &slot});
  };
  add("embedding", m.embedding);
  add("W_P", m.W_P);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const std::string at = "layers[" + std::to_string(l) + "].weights.";
    for (const LayerWeightField& f : kLayerWeightFields) add(at + f.name, m.layers[l].own.*f.slot);
    for (WeightId id : kAllWeights)
      if (!indexer_weight(id)) add(at + weight_name(id), weight_slot(m.layers[l].weights, id));
  }
  add("final_gain", m.final_gain);
  add("final_bias", m.final_bias);
  add("unembedding", m.unembedding);
  return w;
}

double model_loss(const Model& resolved, const std::vector<int>& ids, const std::vector<int>& targets) {
  check_inputs(resolved, ids, targets);
  return forward(resolved, ids, targets).loss;
}

LossGradient loss_gradient(const Model& resolved, const std::vector<int>& ids, const std::vector<int>& targets) {
  note_engine_entry();
  check_inputs(resolved, ids, targets);
  return unchecked_loss_gradient(resolved, ids, targets);
}

LossGradient batch_loss_gradient(const Model& resolved, const std::vector<Sequence>& batch) {
  note_engine_entry();
  if (batch.empty()) throw InputError("batch", "expected at least one sequence but found none");
  std::vector<int> counts;
  int total = 0;
  for (const Sequence& s : batch) {
    counts.push_back(
        static_cast<int>(std::count_if(s.targets.begin(), s.targets.end(), [](int t) { return t != kNoTarget; })));
    total += counts.back();
  }
  if (total == 0) throw InputError("batch", "expected at least one position with a target but found none");
  for (std::size_t b = 0; b < batch.size(); ++b)  // refusals in the calling thread, before any work
    if (counts[b] > 0) check_inputs(resolved, batch[b].ids, batch[b].targets);
  // Each sequence's gradient on whichever thread, then summed in the batch's order: the same bits at any thread
  // count. A chunk of sequences at a time, so the memory holds as many gradients as threads, not the whole batch.
  LossGradient sum;
  const int n = static_cast<int>(batch.size());
  const int chunk = 4 * std::max(1, max_threads());
  std::vector<LossGradient> each(static_cast<std::size_t>(chunk));
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(chunk));
  for (int first = 0; first < n; first += chunk) {
    const int count = std::min(chunk, n - first);
#pragma omp parallel for schedule(dynamic)
    for (int k = 0; k < count; ++k) {
      const std::size_t b = static_cast<std::size_t>(first + k);
      try {  // an exception must not leave an OpenMP region
        if (counts[b] > 0)
          each[static_cast<std::size_t>(k)] = unchecked_loss_gradient(resolved, batch[b].ids, batch[b].targets);
      } catch (...) {
        failed[static_cast<std::size_t>(k)] = std::current_exception();
      }
    }
    for (int k = 0; k < count; ++k) {
      if (failed[static_cast<std::size_t>(k)]) std::rethrow_exception(failed[static_cast<std::size_t>(k)]);
      const std::size_t b = static_cast<std::size_t>(first + k);
      if (counts[b] == 0) continue;
      LossGradient& one = each[static_cast<std::size_t>(k)];
      const double share = static_cast<double>(counts[b]) / total;  // each sequence's mean, weighted by its targets
      sum.loss += share * one.loss;
      if (sum.gradient.layers.empty()) {
        sum.gradient = std::move(one.gradient);
        for (const TrainedWeight& w : trained_weights(sum.gradient)) *w.slot = **w.slot * share;
        continue;
      }
      std::vector<TrainedWeight> into = trained_weights(sum.gradient), from = trained_weights(one.gradient);
      for (std::size_t i = 0; i < into.size(); ++i) *into[i].slot = **into[i].slot + **from[i].slot * share;
    }
  }
  return sum;
}

Matrix next_token_probabilities(const Model& resolved, const std::vector<int>& ids) {
  note_engine_entry();
  check_inputs(resolved, ids, std::vector<int>(ids.size(), kNoTarget), false);
  return forward(resolved, ids, std::vector<int>(ids.size(), kNoTarget)).probabilities;
}

Matrix softmax_jacobian(const Matrix& p) {
  Matrix j = -p.transpose() * p;  // (n, n)
  j.diagonal() += p.row(0).transpose();
  return j;
}

std::vector<HeadGradients> attention_gradients(const Model& resolved, const std::vector<int>& ids,
                                               const std::vector<int>& targets, int only_layer) {
  note_engine_entry();
  check_inputs(resolved, ids, targets);
  std::vector<HeadGradients> layers;
  unchecked_loss_gradient(resolved, ids, targets, &layers, only_layer);
  return layers;
}

std::vector<std::vector<Matrix>> attention_patterns(const Model& resolved, const std::vector<int>& ids) {
  note_engine_entry();
  check_inputs(resolved, ids, std::vector<int>(ids.size(), kNoTarget), false);
  Forward f = forward(resolved, ids, std::vector<int>(ids.size(), kNoTarget));
  std::vector<std::vector<Matrix>> patterns;
  for (LayerCache& c : f.layers) patterns.push_back(std::move(c.attention.weights));
  return patterns;
}

}  // namespace attn
