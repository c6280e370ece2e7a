#pragma once
// The pipeline as the stepper shows it, in order. A scenario shows the steps that apply to it: positions where
// they act (added to X, or q and k turned by RoPE) and the sparse selection only when the scenario has them, so
// plain attention keeps its ten steps, 0 = inputs ... 9 = output. Step numbers (--step N) count the steps shown.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace attn::ui {

enum class Step {
  Inputs,       // X, one row per token
  Positions,    // sinusoidal or learned positions: X + P
  Projections,  // Q = X W_Q, K = X W_K, V = X W_V
  Rope,         // rope: q and k turned pair by pair by their positions
  Scores,       // q k^T
  Scale,        // scores / sqrt(d)
  Mask,         // hidden scores set to -inf (softmax) or zeroed after the kernel (linear)
  Selection,    // sparse: the indexer's scores and each query's top_k keys
  Softmax,      // weights, each row sums to 1
  WeightedSum,  // weights v
  HeadOutputs,  // every head's output side by side
  Concat,       // [output_0 ... output_H-1] W_O
  Output,       // the final output, the sum of the heads' contributions
};

inline constexpr int kStepKinds = 13;

struct StepInfo {
  Step step;
  std::string_view name;   // for --step NAME and --dump-state: "scores"
  std::string_view title;  // for the screen: "Scores  Q K^T"
  std::string_view label;  // for a thumbnail: "Q K^T"
};

// Every kind of step, in pipeline order, whether or not a scenario has it.
std::span<const StepInfo> all_steps();
const StepInfo& step_info(Step s);

// Whether the scenario's configuration has this step, and the steps it has, in order.
bool step_applies(Step s, const AttentionConfig& a);
std::vector<Step> pipeline_steps(const AttentionConfig& a);
int step_count(const AttentionConfig& a);
// The step's number among pipeline_steps(a); a step that does not apply counts as the one before it.
int step_index(Step s, const AttentionConfig& a);
Step step_at(int index, const AttentionConfig& a);  // clamped to the valid range
// s, or the nearest step before it that applies (the scenario lost its positions: the RoPE step becomes projections).
Step applying_step(Step s, const AttentionConfig& a);

// "3" (a number among pipeline_steps(a)), "scores" (any step that applies) -> Step; nullopt for anything else.
std::optional<Step> parse_step(std::string_view text, const AttentionConfig& a);
// "inputs, projections, ..., output": the names of the steps of a, for messages.
std::string step_names(const AttentionConfig& a, std::string_view separator = ", ");

}  // namespace attn::ui
