#pragma once
// The gradient of a model's cross-entropy with respect to its weights, written for this model (no framework): what
// training (issue 16) steps with. Row vectors throughout, as the forward pass in model.h.
//
// Supported so far: every norm (none, pre, post) and feed-forward kind (none, relu, gelu, swiglu); no or learned
// positions; every layer mha with W_O, the softmax kernel, scaled or not, a causal mask or none. A model beyond that
// is refused by check_trainable (InputError naming the field) until its backward pass is written.
#include <vector>

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

void check_trainable(const Model& m);

// The weights training changes, each with its path in the model file, in one fixed order (the optimiser's state
// and a gradient's weights line up with a model's through it). Only those present are listed.
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

// What one layer's backward pass sends into each head's softmax: d loss / d weights (the attention weights) and
// d loss / d scores (what softmax read: scaled, masked), one (N, N) matrix per head each. Row i of d scores is
// row i of d weights times softmax's Jacobian diag(p) - p pᵀ: a saturated row passes almost nothing back.
struct HeadGradients {
  std::vector<Matrix> d_weights, d_scores;
};
// Softmax's Jacobian at a row of weights p (1, n): d p_i / d s_j = p_i (δ_ij - p_j), that is diag(p) - pᵀ p (n, n).
Matrix softmax_jacobian(const Matrix& p);
// Every layer's, for the loss over `targets` (as loss_gradient).
std::vector<HeadGradients> attention_gradients(const Model& resolved, const std::vector<int>& ids,
                                               const std::vector<int>& targets);

// Each position's probabilities over the vocabulary for the next token: (N, V).
Matrix next_token_probabilities(const Model& resolved, const std::vector<int>& ids);
// Every layer's attention weights on `ids`, one (N, N) matrix per head: what the head scores read, from the same
// forward pass training uses.
std::vector<std::vector<Matrix>> attention_patterns(const Model& resolved, const std::vector<int>& ids);

}  // namespace attn
