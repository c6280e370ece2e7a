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

TEST_CASE("a flowing term beside one with the same rows leaves out their labels") {
  BeginHeadlessFrame();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({1000, 700});
  ImGui::Begin("pairs");
  // The Decode view's cache at "dog": K and V of two KV heads, 3 tokens of 2 dimensions at 3 decimals.
  Matrix k(3, 2), v(3, 2);
  k << 1.25, 0.0, -1.06, 0.42, 0.55, -0.54;
  v << -0.11, -1.03, -0.97, 0.35, -0.38, 0.06;
  const std::vector<std::string> tokens = {"the", "lazy", "dog"}, same_words = tokens;
  const HeatmapFlags vectors = HeatmapFlags_NoTooltip | HeatmapFlags_NoLegend | HeatmapFlags_NoColumnLabels;
  // Read along one list of tokens, or each pair along its own (the same words: they are written again).
  const auto pairs = [&](const std::vector<std::string>* second) {
    return std::vector<Term>{{.name = "K0", .m = &k, .rows = &tokens, .flags = vectors},
                             {.name = "V0", .m = &v, .rows = &tokens, .flags = vectors, .joined = true},
                             {.name = "K1", .m = &k, .rows = second, .flags = vectors},
                             {.name = "V1", .m = &v, .rows = second, .flags = vectors, .joined = true}};
  };
  const std::vector<Term> shared = pairs(&tokens), own = pairs(&same_words);
  const std::string ops[] = {"", "  ", ""};
  const float cell = 1.2f * ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
  const float one_line = line + 3 * cell + ImGui::GetStyle().ItemSpacing.y;  // the titles, 3 rows, the spacing
  // Both pairs need about 570 px with the labels written once, 610 with K1's again.
  CHECK(EquationFlowHeight(shared, ops, cell, 590) == doctest::Approx(one_line));
  CHECK(EquationFlowHeight(own, ops, cell, 590) == doctest::Approx(2 * one_line));
  CHECK(EquationFlowHeight(own, ops, cell, 620) == doctest::Approx(one_line));
  CHECK(EquationFlowHeight(shared, ops, cell, 350) == doctest::Approx(2 * one_line));
  ImGui::End();
  EndHeadlessFrame();
}
