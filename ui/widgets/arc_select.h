#pragma once
// Which arcs the arc view draws, without a window: a long sequence shows every k-th query and, of each,
// only its strongest keys, so the picture stays readable and a software renderer draws it in a few ms.
#include <utility>
#include <vector>

#include "core/matrix.h"

namespace attn::ui {

inline constexpr int kArcsPerQuery = 8;         // a query with more keys shows its strongest this many at most
inline constexpr int kArcsDrawn = 200;          // and fewer when many queries are drawn: about this many in all
inline constexpr double kArcMinWeight = 0.002;  // a lighter weight would be an invisible stroke
inline constexpr double kSeenWeight = 0.05;     // from here on a line must stand out from the page (3:1)

struct ArcBudget {
  int every = 1;      // every k-th query's arcs (more queries than pairs of pixel rows)
  int per_query = 1;  // the strongest this many of each
};
ArcBudget arc_budget(int n_q, float height);

// (weight, key) of row `row`'s arcs: weights above kArcMinWeight, the `count` largest (all with count < 0).
std::vector<std::pair<double, int>> strongest_arcs(const Matrix& weights, int row, int count);

}  // namespace attn::ui
