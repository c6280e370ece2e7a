// Which arcs the arc view draws (ui/widgets/arc_select).
#include "helpers.h"
#include "ui/widgets/arc_select.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("arc view budget: a long sequence draws every k-th query's strongest keys, about 200 arcs in all") {
  const ArcBudget few = arc_budget(3, 300);
  CHECK(few.every == 1);
  CHECK(few.per_query == kArcsPerQuery);
  const ArcBudget hundred = arc_budget(100, 300);  // 100 rows: 2 arcs each
  CHECK(hundred.every == 1);
  CHECK(hundred.per_query == 2);
  const ArcBudget forty = arc_budget(40, 300);  // 40 rows: 5 arcs each
  CHECK(forty.per_query == 5);
  const ArcBudget long_one = arc_budget(1024, 300);  // every 7th query: 147 rows of 1
  CHECK(long_one.every == 7);
  CHECK(long_one.per_query == 1);
  CHECK(arc_budget(2048, 1000).per_query == 1);  // 410 rows: one each, never none
}

TEST_CASE("arcs of a row: weights above 0.002, the strongest first chosen, every key when asked for all") {
  const Matrix w = mat({{0.5, 0.001, 0.2, 0.25, 0.049}, {0, 0, 1, 0, 0}});
  auto keys = [](std::vector<std::pair<double, int>> arcs) {
    std::vector<int> k;
    for (const auto& a : arcs) k.push_back(a.second);
    std::sort(k.begin(), k.end());
    return k;
  };
  CHECK(keys(strongest_arcs(w, 0, 2)) == std::vector<int>{0, 3});
  CHECK(keys(strongest_arcs(w, 0, 3)) == std::vector<int>{0, 2, 3});
  CHECK(keys(strongest_arcs(w, 0, -1)) == std::vector<int>{0, 2, 3, 4});  // 0.001 is too light to draw
  CHECK(keys(strongest_arcs(w, 1, 8)) == std::vector<int>{2});
  CHECK(strongest_arcs(w, 0, 2)[0].first + strongest_arcs(w, 0, 2)[1].first == 0.75);
}
