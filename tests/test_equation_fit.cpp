// An equation's cells shrink toward the smallest readable size before it scrolls: whether it fits a height, with the
// fonts of the window.
#include <imgui.h>

#include "headless_frame.h"
#include "helpers.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/theme.h"

using namespace attn;
using namespace attn::ui;

TEST_CASE("a flowing equation fits where its cells can shrink to 1.2 font heights, and not below") {
  BeginHeadlessFrame();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({1000, 700});
  ImGui::Begin("fit");
  // X [4x8] · W [8x2] = q [4x2] of 3-decimal numbers: in 1000 pixels they flow, as multi_head page 1's projection.
  Matrix x(4, 8), wq(8, 2), q(4, 2);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = 0.123 * static_cast<double>(i % 7) - 0.357;
  for (Eigen::Index i = 0; i < wq.size(); ++i) wq(i) = -0.481 + 0.097 * static_cast<double>(i);
  q = x * wq;
  const Term terms[] = {{.name = "X", .m = &x}, {.name = "W", .m = &wq}, {.name = "q", .m = &q}};
  const std::string ops[] = {"\u00B7", "="};
  const float width = ImGui::GetContentRegionAvail().x, font = ImGui::GetFontSize();
  CHECK(font == 18.0f);
  const float readable = EquationFlowHeight(terms, ops, 1.8f * font, width);
  const float smallest = EquationFlowHeight(terms, ops, 1.2f * font, width);
  REQUIRE(smallest < readable);
  // The 8 rows of W make the line's height: 0.6 font heights less a row, 8 rows.
  CHECK(readable - smallest == doctest::Approx(8 * 0.6f * font));
  CHECK(EquationFits(terms, ops, readable + 1));
  CHECK(EquationFits(terms, ops, (readable + smallest) / 2));  // smaller cells, no scrolling
  CHECK(EquationFits(terms, ops, smallest + 1));
  // Far below: cells under a line of text whether fitted or flowing, so a page must focus (or the view scrolls).
  CHECK_FALSE(EquationFits(terms, ops, smallest / 2));
  ImGui::End();
  EndHeadlessFrame();
}
