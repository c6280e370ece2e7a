// Where a line chart writes a series' end label, with the window's fonts: right of the line's end, or with
// LineChartFlags_EndLabelsRight in the column right of the plot, off a run's curves that end mid-plot.
#include <imgui.h>

#include <limits>

#include "headless_frame.h"
#include "helpers.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/text.h"

using namespace attn::ui;

namespace {

// The left edge of the glyphs drawn in the band [top, bottom] right of `from_x` (text is the only thing drawn with
// the font atlas' glyphs rather than its white pixel).
float glyphs_left(const ImDrawList& dl, float from_x, float top, float bottom) {
  const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
  float left = std::numeric_limits<float>::infinity();
  for (const ImDrawVert& v : dl.VtxBuffer)
    if ((v.uv.x != white.x || v.uv.y != white.y) && v.pos.x > from_x && v.pos.y >= top && v.pos.y <= bottom)
      left = std::min(left, v.pos.x);
  return left;
}

// A 600x300 chart of one flat line at 0.5 from step 0 to 50 of 100, named "evaluation" at its end: the left edge of
// that name.
float end_label_left(LineChartFlags flags) {
  BeginHeadlessFrame();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({700, 400});
  ImGui::Begin("chart");
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->Flags &= ~ImDrawListFlags_AntiAliasedLinesUseTex;  // lines of the white pixel only
  const std::vector<Series> series{{"evaluation", {0, 50}, {0.5, 0.5}, IM_COL32(230, 159, 0, 255), {}, "evaluation"}};
  LineChartOptions o;
  o.x = {0, 100, AxisScale::Linear, AxisUnit::Plain, ""};
  o.y = {0, 1, AxisScale::Linear, AxisUnit::Plain, ""};
  o.size = {600, 300};
  o.flags = LineChartFlags_NoLegend | LineChartFlags_NoHover | flags;
  LineChart("c", series, o);
  // The plot spans y from half a line under the top to the x labels; 0.5 is about 140 px down.
  const float left =
      glyphs_left(*ImGui::GetWindowDrawList(), origin.x + 100, origin.y + 100, origin.y + 180) - origin.x;
  ImGui::End();
  EndHeadlessFrame();
  return left;
}

}  // namespace

TEST_CASE("end labels: right of a line ending mid-plot, or in the column right of the plot when asked") {
  BeginHeadlessFrame();
  const float name_w = TextWidth("evaluation");
  EndHeadlessFrame();
  // The plot ends where the column of names begins: 600 - (name + 8 + 2); the name starts 8 px right of that.
  const float column = 600 - name_w - 2;
  CHECK(end_label_left(LineChartFlags_EndLabelsRight) == doctest::Approx(column).epsilon(0.005));
  const float beside_line = end_label_left(LineChartFlags_None);
  CHECK(beside_line < column - 200);  // halfway along the plot, on the curve's level
  CHECK(beside_line > 250);
}
