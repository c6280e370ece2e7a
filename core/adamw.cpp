#include "core/adamw.h"

#include <algorithm>
#include <cmath>

#include "core/model_gradient.h"

namespace attn {

double global_norm(Model& gradient) {
  double sum = 0.0;
  for (const TrainedWeight& w : trained_weights(gradient)) sum += (*w.slot)->squaredNorm();
  return std::sqrt(sum);
}

double adamw_step(Model& model, Model gradient, AdamWState& state, const AdamWConfig& c) {
  std::vector<TrainedWeight> weights = trained_weights(model), grads = trained_weights(gradient);
  const double norm = global_norm(gradient);
  const double clip = c.clip > 0 ? std::min(1.0, c.clip / (norm + 1e-6)) : 1.0;  // as clip_grad_norm_
  if (state.step == 0) {
    for (const TrainedWeight& w : weights) {
      state.m.push_back(Matrix::Zero((*w.slot)->rows(), (*w.slot)->cols()));
      state.v.push_back(Matrix::Zero((*w.slot)->rows(), (*w.slot)->cols()));
    }
  }
  ++state.step;
  const double bias1 = 1.0 - std::pow(c.beta1, state.step), bias2 = 1.0 - std::pow(c.beta2, state.step);
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const Matrix g = **grads[k].slot * clip;
    Matrix& m = state.m[k];
    Matrix& v = state.v[k];
    // In torch.optim.AdamW's order of operations, so that the two agree to the last bits.
    m += (1.0 - c.beta1) * (g - m);
    v = c.beta2 * v + (1.0 - c.beta2) * g.cwiseProduct(g);
    Matrix w = **weights[k].slot * (1.0 - c.lr * c.weight_decay);  // decoupled decay, before the Adam step
    const Eigen::ArrayXXd denom = v.array().sqrt() / std::sqrt(bias2) + c.eps;
    w.array() -= (c.lr / bias1) * (m.array() / denom);
    *weights[k].slot = std::move(w);
  }
  return norm;
}

}  // namespace attn
