#include "core/adamw.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/model_gradient.h"

namespace attn {

double global_norm(Model& gradient) {
  double sum = 0.0;
  for (const TrainedWeight& w : trained_weights(gradient)) sum += (*w.slot)->squaredNorm();
  return std::sqrt(sum);
}

namespace {

// adamw_step with the gradient's norm known already.
void step_with_norm(Model& model, Model& gradient, double norm, AdamWState& state, const AdamWConfig& c) {
  std::vector<TrainedWeight> weights = trained_weights(model), grads = trained_weights(gradient);
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
}

std::string number_text(double v) { return std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf"; }

}  // namespace

double scheduled_lr(double lr, const LrSchedule& s, int step) {
  if (step <= s.warmup) return lr * step / s.warmup;
  if (s.decay_until <= s.warmup) return lr;
  if (step >= s.decay_until) return s.min_lr;
  const double progress = static_cast<double>(step - s.warmup) / (s.decay_until - s.warmup);
  return s.min_lr + (lr - s.min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

double adamw_step(Model& model, Model gradient, AdamWState& state, const AdamWConfig& c) {
  const double norm = global_norm(gradient);
  step_with_norm(model, gradient, norm, state, c);
  return norm;
}

TrainState start_training(Model resolved) {
  TrainState t{std::move(resolved), {}, {}, {}};
  t.before = t.model;
  return t;
}

StepResult train_step(TrainState& t, const std::vector<Sequence>& batch, const AdamWConfig& c) {
  LossGradient g = batch_loss_gradient(t.model, batch);
  StepResult r{g.loss, global_norm(g.gradient), {}};
  std::string what;
  if (!std::isfinite(r.loss)) what = "the loss is " + number_text(r.loss);
  else if (!std::isfinite(r.grad_norm)) what = "the gradient's norm is " + number_text(r.grad_norm);
  if (!what.empty()) {
    const int last_good = t.adam_before.step;
    r.diverged = "step " + std::to_string(t.adam.step + 1) + ": " + what +
                 "; training stopped with the weights after step " + std::to_string(last_good) +
                 ", the last whose loss was a number (try a lower learning rate)";
    t.model = t.before;
    t.adam = t.adam_before;
    return r;
  }
  t.before = t.model;  // pointers: the step replaces every weight rather than changing it
  t.adam_before = t.adam;
  step_with_norm(t.model, g.gradient, r.grad_norm, t.adam, c);
  return r;
}

}  // namespace attn
