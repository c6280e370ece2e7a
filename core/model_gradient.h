#pragma once
// The gradient of a model's cross-entropy with respect to its weights, written for this model (no framework): what
// training steps with. Row vectors throughout, as the forward pass in model.h.
//
// Every model a file can give: every norm (none, pre, post) and feed-forward kind (none, relu, gelu, swiglu), every
// kind of positions, and each layer's attention as attention_gradient.h computes it (every variant, RoPE and MLA's
// decoupled RoPE, masks none, causal and sliding_window, both kernels, with or without W_O). A sparse layer trains
// everything but its indexer (see trained_weights).
#include <vector>

#include "core/attention_gradient.h"
#include "core/model.h"

namespace attn {

// A position whose target is this is left out of the loss.
inline constexpr int kNoTarget = -1;
// Next-token prediction: position i's target is ids[i + 1]; the last position has none.
std::vector<int> next_token_targets(const std::vector<int>& ids);

struct LossGradient {
  double loss = 0.0;  // the mean over positions with a target of -log p(target | the tokens up to there)
  Model gradient;     // the model's configuration, each trained weight holding d loss / d weight (no other weights)
};

// Refuses (InputError naming the field) what a program may build but training does not support: a custom mask.
void check_trainable(const Model& m);

// The weights training changes, each with its path in the model file, in one fixed order (the optimiser's state
// and a gradient's weights line up with a model's through it). Only those present are listed; a sparse layer's
// indexer (W_QI, W_KI, W_wI) is not: it keeps the weights it has.
struct TrainedWeight {
  std::string field;
  SharedMatrix* slot;
};
std::vector<TrainedWeight> trained_weights(Model& m);

// One sequence of a batch: token ids and, per position, its target (next_token_targets for a language model).
struct Sequence {
  std::vector<int> ids, targets;
};
// `resolved`: every weight present (resolve_model). `targets`: one per token, a vocabulary index or kNoTarget, at
// least one of them a target.
double model_loss(const Model& resolved, const std::vector<int>& ids, const std::vector<int>& targets);
LossGradient loss_gradient(const Model& resolved, const std::vector<int>& ids, const std::vector<int>& targets);
// A batch: the mean over every position with a target in all its sequences (as PyTorch's cross_entropy over the
// flattened batch), and its gradient.
// The sequences' gradients are computed in parallel and summed in the batch's order: the same bits at any thread count.
LossGradient batch_loss_gradient(const Model& resolved, const std::vector<Sequence>& batch);

// Softmax's Jacobian at a row of weights p (1, n): d p_i / d s_j = p_i (δ_ij - p_j), that is diag(p) - pᵀ p (n, n).
Matrix softmax_jacobian(const Matrix& p);
// Every layer's, for the loss over `targets` (as loss_gradient). only_layer >= 0: that layer's alone (the others
// empty), so that a deep model's (N, N) matrices are held for one layer.
std::vector<HeadGradients> attention_gradients(const Model& resolved, const std::vector<int>& ids,
                                               const std::vector<int>& targets, int only_layer = -1);

// Each position's probabilities over the vocabulary for the next token: (N, V).
Matrix next_token_probabilities(const Model& resolved, const std::vector<int>& ids);
// Every layer's attention weights on `ids`, one (N, N) matrix per head: what the head scores read, from the same
// forward pass training uses.
std::vector<std::vector<Matrix>> attention_patterns(const Model& resolved, const std::vector<int>& ids);

}  // namespace attn
