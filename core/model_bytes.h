#pragma once
// What a model costs in memory, from its shapes alone, before anything is computed: a forward pass (run, the Model
// view) and a training step with its backward pass and the optimiser's state (train, the Train view). Each command and
// view holds these to the memory budget (trace_bytes.h counts one scenario's trace the same way).
#include <cstdint>
#include <string>

#include "core/model.h"

namespace attn {

// run_model(m, tokens, o) at its peak: the weights (parameter_count x 8, drawn or given), the embedded stream and
// every layer's stream matrices (residual_in, attention.x, attention.output, after_attention, the FFN's in and out,
// residual_out: N x d_model each), each kept layer's whole trace (predicted_trace_bytes without the scores, which are
// made only when asked for) and its FFN's hidden activation (N x d_ff), the trace of the one layer not kept that is
// being computed (without any head's scores or weights; with an overview, one head's weights at a time), the
// overviews, and the output (final, logits and
// probabilities) when every layer runs. `m` need not be resolved.
std::int64_t predicted_model_run_bytes(const Model& m, std::int64_t tokens, const ModelRunOptions& o);

// What one sequence of `tokens` leaves for the backward pass (model_gradient.cpp's caches: every layer's norms, its
// attention's projections, mask and every head's (N, N) weights, its FFN's), plus what the backward pass makes at
// once (d logits, one head's d weights and d scores and the projections' gradients).
std::int64_t predicted_activation_bytes(const Model& m, std::int64_t tokens);

// attention_gradients on one sequence (run --json's d_weights and d_scores): the weights, the activations, the
// model's gradient and every layer's d weights and d scores, (N, N) per head each (only_layer >= 0: that layer's).
std::int64_t predicted_attention_gradient_bytes(const Model& m, std::int64_t tokens, int only_layer = -1);

// A training run of `batch` sequences of `seq_len` tokens at its peak: the model and its copy from before the last
// step, AdamW's two moments and their copy (7 x the weights with the batch's summed gradient), and for every sequence
// of the batch its activations and its gradient, as if all were computed at once (the threads take a few at a time,
// so this is an upper bound).
std::int64_t predicted_training_bytes(const Model& m, std::int64_t batch, std::int64_t seq_len);

// The front of a refusal, to which the caller adds "needs X but the memory budget is Y" in its units:
// "running 64 layers on 4,096 tokens", "training 64 layers on batches of 2 sequences of 4,096 tokens".
std::string model_run_what(const Model& m, std::int64_t tokens);
std::string training_what(const Model& m, std::int64_t batch, std::int64_t seq_len);

}  // namespace attn
