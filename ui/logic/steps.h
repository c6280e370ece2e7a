#pragma once
// The pipeline as the stepper shows it, in order. Step numbers are what --step N means.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace attn::ui {

enum class Step {
  Inputs,       // X, one row per token
  Projections,  // Q = X W_Q, K = X W_K, V = X W_V
  Scores,       // q k^T
  Scale,        // scores / sqrt(d)
  Mask,         // hidden scores set to -inf (softmax) or zeroed after the kernel (linear)
  Softmax,      // weights, each row sums to 1
  WeightedSum,  // weights v
  HeadOutputs,  // every head's output side by side
  Concat,       // [output_0 ... output_H-1] W_O
  Output,       // the final output, the sum of the heads' contributions
};

inline constexpr int kStepCount = 10;

struct StepInfo {
  Step step;
  std::string_view name;   // for --step NAME and --dump-state: "scores"
  std::string_view title;  // for the screen: "Scores  Q K^T"
  std::string_view label;  // for a thumbnail: "Q K^T"
};

std::span<const StepInfo> all_steps();
const StepInfo& step_info(Step s);
int step_index(Step s);
Step step_at(int index);  // clamped to the valid range
// "3", "scores" -> Step; nullopt for anything else.
std::optional<Step> parse_step(std::string_view text);
// "inputs, projections, ..., output": every step's name, for messages.
std::string step_names(std::string_view separator = ", ");

}  // namespace attn::ui
