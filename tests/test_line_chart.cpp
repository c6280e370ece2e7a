// Where a line chart writes a series' end label, with the window's fonts: right of every line's end, named or not,
// off a run's curves that end mid-plot.
#include <imgui.h>

#include <limits>

#include "headless_frame.h"
#include "helpers.h"
#include "ui/logic/layout_check.h"
#include "ui/widgets/line_chart.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

using namespace attn;
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

// A 600x300 chart of one flat line at 0.5 from step 0 to 50 of 100, named "evaluation" at its end, and an unnamed
// line at 0.2 from step 0 to `batch_end`: the left edge of that name.
float end_label_left(double batch_end) {
  BeginHeadlessFrame();
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({700, 400});
  ImGui::Begin("chart");
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->Flags &= ~ImDrawListFlags_AntiAliasedLinesUseTex;  // lines of the white pixel only
  const std::vector<Series> series{{"evaluation", {0, 50}, {0.5, 0.5}, IM_COL32(230, 159, 0, 255), {}, "evaluation"},
                                   {"batch", {0, batch_end}, {0.2, 0.2}, IM_COL32(86, 180, 233, 255), {}, ""}};
  LineChartOptions o;
  o.x = {0, 100, AxisScale::Linear, NumberUnit::Plain, ""};
  o.y = {0, 1, AxisScale::Linear, NumberUnit::Plain, ""};
  o.size = {600, 300};
  o.flags = LineChartFlags_NoLegend | LineChartFlags_NoHover;
  LineChart("c", series, o);
  // The plot spans y from half a line under the top to the x labels; 0.5 is about 140 px down.
  const float left =
      glyphs_left(*ImGui::GetWindowDrawList(), origin.x + 100, origin.y + 100, origin.y + 180) - origin.x;
  ImGui::End();
  EndHeadlessFrame();
  return left;
}

}  // namespace

TEST_CASE("end labels: right of every line's end, named or not, never across an empty plot") {
  BeginHeadlessFrame();
  const float name_w = TextWidth("evaluation");
  EndHeadlessFrame();
  // The plot ends where the column of names begins, 600 - (name + 8 + 2): 100 steps over that width.
  const float plot_right = 600 - name_w - 10;
  const float at_50 = end_label_left(50), at_80 = end_label_left(80), at_100 = end_label_left(100);
  // Right of the batch line's end where it runs past the evaluation's: 30 steps further right at 80 than at 50;
  // where the batch line stops short, right of the evaluation's.
  CHECK(at_80 - at_50 == doctest::Approx((at_100 - at_50) * 30 / 50).epsilon(0.02));
  CHECK(end_label_left(0) == at_50);
  CHECK(at_100 == doctest::Approx(plot_right + 8).epsilon(0.005));
  CHECK(at_50 < plot_right / 2 + 60);  // beside the evaluation's end halfway along, not across at the plot's right
  CHECK(at_50 > 250);
}

TEST_CASE("LineChartOverhead: the chart's height beyond its plot, as drawn, with and without its titles") {
  BeginHeadlessFrame();
  const float h = ImGui::GetTextLineHeight();
  LineChartOptions o;
  o.x = {0, 1, AxisScale::Linear, NumberUnit::Plain, ""};
  o.y = {0, 1, AxisScale::Linear, NumberUnit::Plain, ""};
  // Half a line over the plot for the top tick label, the tick, its gap and the x labels under it.
  CHECK(LineChartOverhead(o, 600) == doctest::Approx(1.5f * h + kChartTickLength + kChartLabelGap));
  const float bare = LineChartOverhead(o, 600);
  o.x.title = "steps";
  CHECK(LineChartOverhead(o, 600) == doctest::Approx(bare + h + 4));
  o.title = "Loss";
  o.y.title = "nats";
  const float inline_y = LineChartOverhead(o, 600);
  CHECK(inline_y == doctest::Approx(bare + h + 4 + title_font_size() + 6));
  CHECK(LineChartOverhead(o, 60) == doctest::Approx(inline_y + h + 2));  // the y title on a row of its own
  // And as drawn: a page chart 300 px high plots in 300 minus that.
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({700, 400});
  ImGui::Begin("overhead");
  o.size = {600, 300};
  o.flags = LineChartFlags_PageChart | LineChartFlags_NoLegend | LineChartFlags_NoHover;
  SetLayoutCheck(true);
  TakeChartPlots();
  LineChart("c", std::vector<Series>{{"a", {0, 1}, {0, 1}, IM_COL32(86, 180, 233, 255), {}, ""}}, o);
  const std::vector<ChartPlot> plots = TakeChartPlots();
  TakeLayoutReports();
  SetLayoutCheck(false);
  ImGui::End();
  EndHeadlessFrame();
  REQUIRE(plots.size() == 1);
  CHECK(plots[0].plot.y1 - plots[0].plot.y0 == doctest::Approx(300 - inline_y));
}
