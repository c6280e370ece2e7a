#include "ui/widgets/arc_select.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace attn::ui {

ArcBudget arc_budget(int n_q, float height) {
  ArcBudget b;
  b.every = std::max(1, static_cast<int>(std::ceil(2.0f * static_cast<float>(n_q) / std::max(height, 1.0f))));
  const int rows = (n_q + b.every - 1) / b.every;
  b.per_query = std::clamp(kArcsDrawn / std::max(1, rows), 1, kArcsPerQuery);
  return b;
}

std::vector<std::pair<double, int>> strongest_arcs(const Matrix& weights, int row, int count) {
  std::vector<std::pair<double, int>> arcs;
  for (int j = 0; j < static_cast<int>(weights.cols()); ++j)
    if (weights(row, j) > kArcMinWeight) arcs.emplace_back(weights(row, j), j);
  if (count >= 0 && arcs.size() > static_cast<std::size_t>(count)) {
    std::nth_element(arcs.begin(), arcs.begin() + count, arcs.end(), std::greater<>());
    arcs.resize(static_cast<std::size_t>(count));
  }
  return arcs;
}

}  // namespace attn::ui
