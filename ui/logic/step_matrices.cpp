#include "ui/logic/step_matrices.h"

#include <algorithm>

namespace attn::ui {

StepMatrix step_result(const Trace& t, Step asked, int head) {
  const Step step = applying_step(asked, t.attention);  // a step the trace lacks shows the one before it
  const HeadTrace& h = t.heads.at(static_cast<std::size_t>(head));
  const std::string n = std::to_string(head);
  switch (step) {
    case Step::Inputs: return {&t.x, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "X"};
    case Step::Positions: return {&t.input(), &t.tokens, nullptr, ColourMap::Diverging, nullptr, "X + P"};
    case Step::Rope: return {&h.q_rope, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "RoPE(q)"};
    case Step::Selection:
      return {&t.indexer->scores, &t.tokens, &t.context_tokens, ColourMap::Diverging, &*h.mask, "I"};
    case Step::Projections: return {&h.q, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "q_" + n};
    case Step::Scores: return {&h.scores(), &t.tokens, &t.context_tokens, ColourMap::Diverging, nullptr, "scores"};
    case Step::Scale: return {&h.scaled(), &t.tokens, &t.context_tokens, ColourMap::Diverging, nullptr, "scaled"};
    case Step::Mask: return {&h.masked(), &t.tokens, &t.context_tokens, ColourMap::Diverging, &*h.mask, "masked"};
    case Step::Softmax: return {&h.weights(), &t.tokens, &t.context_tokens, ColourMap::Sequential, &*h.mask, "weights"};
    case Step::WeightedSum: return {&h.output, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "output_" + n};
    case Step::HeadOutputs: return {&t.concat, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "concat"};
    case Step::Concat:
    case Step::Output: return {&t.output, &t.tokens, nullptr, ColourMap::Diverging, nullptr, "output"};
  }
  return {};
}

KnownRanges step_ranges(const Trace& t, int head) {
  KnownRanges known;
  if (head < 0 || head >= static_cast<int>(t.heads.size())) return known;
  for (const Step step : pipeline_steps(t.attention)) {
    const StepMatrix r = step_result(t, step, head);
    // Sequential results are drawn on [0, 1]; a small matrix's range costs the frame nothing.
    if (r.map == ColourMap::Sequential || r.m->size() < kKnownRangeCells) continue;
    const bool listed = std::any_of(known.begin(), known.end(), [&](const KnownRange& k) { return k.m == r.m; });
    if (!listed) known.push_back({r.m, r.map, r.visible, {}});
  }
  // Each matrix's scan on a thread of its own (at 2,048 tokens: four of 4M cells).
  const auto count = static_cast<std::ptrdiff_t>(known.size());
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic)
#endif
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    KnownRange& k = known[static_cast<std::size_t>(i)];
    k.range = auto_range(*k.m, k.map, k.visible);
  }
  return known;
}

}  // namespace attn::ui
