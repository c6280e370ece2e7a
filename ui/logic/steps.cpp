#include "ui/logic/steps.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

#include "core/text_format.h"

namespace attn::ui {
namespace {

constexpr std::array<StepInfo, kStepCount> kSteps{{
    {Step::Inputs, "inputs", "Inputs  X", "X"},
    {Step::Projections, "projections", "Projections  Q, K, V", "Q K V"},
    {Step::Scores, "scores", "Scores  Q K\u1D40", "Q K\u1D40"},
    {Step::Scale, "scale", "Scale  by 1/\u221Ad", "\u00F7 \u221Ad"},
    {Step::Mask, "mask", "Mask", "mask"},
    {Step::Softmax, "softmax", "Softmax  (weights)", "softmax"},
    {Step::WeightedSum, "weighted_sum", "Weighted sum  A V", "A V"},
    {Step::HeadOutputs, "head_outputs", "Per-head outputs", "heads"},
    {Step::Concat, "concat", "Concat and W_O", "concat"},
    {Step::Output, "output", "Output", "output"},
}};

}  // namespace

std::span<const StepInfo> all_steps() { return kSteps; }

const StepInfo& step_info(Step s) { return kSteps[static_cast<std::size_t>(s)]; }

int step_index(Step s) { return static_cast<int>(s); }

Step step_at(int index) { return static_cast<Step>(std::clamp(index, 0, kStepCount - 1)); }

std::string step_names(std::string_view separator) {
  std::vector<std::string_view> names;
  for (const StepInfo& i : all_steps()) names.push_back(i.name);
  return join(names, separator);
}

std::optional<Step> parse_step(std::string_view text) {
  int n = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (n >= 0 && n < kStepCount) return static_cast<Step>(n);
    return std::nullopt;
  }
  for (const StepInfo& s : kSteps)
    if (s.name == text) return s.step;
  return std::nullopt;
}

}  // namespace attn::ui
