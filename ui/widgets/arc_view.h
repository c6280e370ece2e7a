#pragma once
// ui::ArcView: attention weights as lines from each query (left) to each key (right), thickness and
// opacity following the weight. The same numbers as the heatmap, read as "who looks at whom". A long
// sequence shows the strongest arcs of every k-th query (arc_select.h); the one under the pointer shows all.
#include <string>
#include <vector>

#include <imgui.h>

#include "core/matrix.h"
#include "ui/widgets/arc_select.h"

namespace attn::ui {

struct ArcViewOptions {
  const std::vector<std::string>* queries = nullptr;
  const std::vector<std::string>* keys = nullptr;
  ImVec2 size = {0, 0};        // 0: available width, a height from the number of tokens
  float max_thickness = 9.0f;  // pixels for a weight of 1
};

// Returns the query row under the pointer (its lines are drawn on top), or -1.
int ArcView(const char* id, const Matrix& weights, const ArcViewOptions& opts);

}  // namespace attn::ui
