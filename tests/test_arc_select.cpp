// Which arcs the arc view draws (ui/widgets/arc_select).
#include <algorithm>

#include "headless_frame.h"
#include "helpers.h"
#include "ui/logic/layout_check.h"
#include "ui/widgets/arc_select.h"
#include "ui/widgets/arc_view.h"

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

// Every stroke the arc view draws on a black page for weights of 5% and more stands 3:1 off the page: a quarter of a
// query's weight drawn dark teal at half alpha (1.9:1) vanished on a projector.
TEST_CASE("arc view: lines of weight 0.05 and more keep 3:1 on a dark page") {
  BeginHeadlessFrame();
  apply_style(StyleTheme::Dark, true);
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({400, 300});
  ImGui::Begin("arcs");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->Flags &= ~ImDrawListFlags_AntiAliasedLinesUseTex;  // lines of the white pixel only: their colour is their own
  const int first = dl->VtxBuffer.Size;
  Matrix w(2, 3);
  w << 0.9, 0.05, 0.05, 0.234, 0.5, 0.266;
  const std::vector<std::string> names{"the", "cat", "sat"};
  ArcViewOptions o;
  o.queries = &names;
  o.keys = &names;
  o.size = {300, 200};
  ArcView("w", w, o);
  const ImU32 page = ImGui::GetColorU32(ImGuiCol_WindowBg);
  int judged = 0;
  double faintest = 21;
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    const ImU32 c = dl->VtxBuffer[i].col;
    if ((c >> IM_COL32_A_SHIFT) == 0) continue;  // an anti-aliased fringe
    faintest = std::min(faintest, contrast_ratio(blend_over(c, page), page));
    ++judged;
  }
  ImGui::End();
  EndHeadlessFrame();
  CHECK(judged > 100);
  CHECK(faintest >= 3.0);
}
