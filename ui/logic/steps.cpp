#include "ui/logic/steps.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "core/text_format.h"

namespace attn::ui {
namespace {

constexpr std::array<StepInfo, kStepKinds> kSteps{{
    {Step::Inputs, "inputs", "Inputs  X", "X"},
    {Step::Positions, "positions", "Positions  X + P", "X + P"},
    {Step::Projections, "projections", "Projections  Q, K, V", "Q K V"},
    {Step::Rope, "rope", "RoPE  turn q and k", "RoPE"},
    {Step::Scores, "scores", "Scores  Q K\u1D40", "Q K\u1D40"},
    {Step::Scale, "scale", "Scale  by 1/\u221Ad", "\u00F7 \u221Ad"},
    {Step::Mask, "mask", "Mask", "mask"},
    {Step::Selection, "selection", "Selection  top-k keys", "top-k"},
    {Step::Softmax, "softmax", "Softmax  (weights)", "softmax"},
    {Step::WeightedSum, "weighted_sum", "Weighted sum  A V", "A V"},
    {Step::HeadOutputs, "head_outputs", "Per-head outputs", "heads"},
    {Step::Concat, "concat", "Concat and W_O", "concat"},
    {Step::Output, "output", "Output", "output"},
}};

}  // namespace

std::span<const StepInfo> all_steps() { return kSteps; }

const StepInfo& step_info(Step s) { return kSteps[static_cast<std::size_t>(s)]; }

bool step_applies(Step s, const AttentionConfig& a) {
  switch (s) {
    case Step::Positions: return a.positions == Positions::Sinusoidal || a.positions == Positions::Learned;
    case Step::Rope: return a.positions == Positions::Rope;
    case Step::Selection: return a.sparse.has_value();
    default: return true;
  }
}

std::vector<Step> pipeline_steps(const AttentionConfig& a) {
  std::vector<Step> steps;
  for (const StepInfo& i : kSteps)
    if (step_applies(i.step, a)) steps.push_back(i.step);
  return steps;
}

int step_count(const AttentionConfig& a) { return static_cast<int>(pipeline_steps(a).size()); }

Step applying_step(Step s, const AttentionConfig& a) {
  int i = static_cast<int>(s);
  while (i > 0 && !step_applies(static_cast<Step>(i), a)) --i;
  return static_cast<Step>(i);
}

int step_index(Step s, const AttentionConfig& a) {
  const std::vector<Step> steps = pipeline_steps(a);
  return static_cast<int>(std::find(steps.begin(), steps.end(), applying_step(s, a)) - steps.begin());
}

Step step_at(int index, const AttentionConfig& a) {
  const std::vector<Step> steps = pipeline_steps(a);
  return steps[static_cast<std::size_t>(std::clamp(index, 0, static_cast<int>(steps.size()) - 1))];
}

std::string step_names(const AttentionConfig& a, std::string_view separator) {
  std::vector<std::string_view> names;
  for (Step s : pipeline_steps(a)) names.push_back(step_info(s).name);
  return join(names, separator);
}

std::optional<Step> parse_step(std::string_view text, const AttentionConfig& a) {
  int n = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (n >= 0 && n < step_count(a)) return step_at(n, a);
    return std::nullopt;
  }
  for (const StepInfo& s : kSteps)
    if (s.name == text && step_applies(s.step, a)) return s.step;
  return std::nullopt;
}

}  // namespace attn::ui
