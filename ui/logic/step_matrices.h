#pragma once
// The matrix each step produces, for thumbnails and headline views: which matrix, its labels, how it is
// coloured, and which of its cells are hidden.
#include <string>
#include <vector>

#include "core/attention.h"
#include "ui/logic/colour_map.h"
#include "ui/logic/steps.h"

namespace attn::ui {

struct StepMatrix {
  const Matrix* m = nullptr;
  const std::vector<std::string>* rows = nullptr;
  const std::vector<std::string>* cols = nullptr;
  ColourMap map = ColourMap::Diverging;
  const Matrix* visible = nullptr;
  std::string name;  // "scores", "weights", "output_0"
};

StepMatrix step_result(const Trace& t, Step step, int head);

// The colour range of every large step result of head `head` that is coloured by its values (the strip's
// thumbnails, the step shown): made with the trace, off the frame.
inline constexpr Eigen::Index kKnownRangeCells = 4096;  // smaller ones: the heatmap's own scan is cheap
KnownRanges step_ranges(const Trace& t, int head);

}  // namespace attn::ui
