#pragma once
// AdamW (Loshchilov and Hutter, "Decoupled Weight Decay Regularization"), as torch.optim.AdamW computes it, and
// gradient clipping by the global norm: how training steps a model's weights (model_gradient.h).
#include <string>
#include <vector>

#include "core/matrix.h"
#include "core/model.h"

namespace attn {

struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled: every trained weight shrinks by lr * weight_decay per step
  double clip = 0.0;          // > 0: the gradient's global norm is clipped to this before the step
};

// The learning rate over a run: a linear warm-up, then optionally a cosine decay.
struct LrSchedule {
  int warmup = 0;       // steps 1..warmup use lr * step / warmup
  int decay_until = 0;  // > warmup: cosine from lr after the warm-up down to min_lr at this step, min_lr after it
  double min_lr = 0.0;
};
// The learning rate of step `step` (from 1): min_lr + (lr - min_lr) * (1 + cos(pi * (step - warmup) / (decay_until -
// warmup))) / 2 while decaying.
double scheduled_lr(double lr, const LrSchedule& s, int step);

// The moments of every trained weight (in trained_weights order) and the steps taken.
struct AdamWState {
  std::vector<Matrix> m, v;
  int step = 0;
};

// The gradient's global norm: the square root of the sum of every weight's squared entries.
double global_norm(Model& gradient);
// One step: `model`'s trained weights move against `gradient` (clipped first when config.clip > 0, as
// torch.nn.utils.clip_grad_norm_: scaled by min(1, clip / (norm + 1e-6))). Returns the norm before clipping.
double adamw_step(Model& model, Model gradient, AdamWState& state, const AdamWConfig& config);

struct Sequence;  // model_gradient.h

// A training run: the model and its optimiser, and both as they were before the last step (their loss was finite).
struct TrainState {
  Model model;
  AdamWState adam;
  Model before;  // shares the weights it has in common with model (SharedMatrix)
  AdamWState adam_before;
};
TrainState start_training(Model resolved);

// One training step: the batch's loss and gradient, then AdamW. When the loss or the gradient is not all finite
// numbers (a learning rate too high), training goes back to the last weights whose loss was finite (those before the
// previous step) and `diverged` says what happened: training stops there, never with NaN or infinity in the weights.
struct StepResult {
  double loss = 0.0, grad_norm = 0.0;
  std::string diverged;  // empty: the step was taken
};
StepResult train_step(TrainState& t, const std::vector<Sequence>& batch, const AdamWConfig& config);

}  // namespace attn
