#pragma once
// ui::BarChart: one horizontal bar per value, labelled on the left, the value at the bar's end, an
// optional grey note after it, vertical reference lines (a GPU's memory) and the exact value on hover.
// Ticks and number formats come from ui/logic/chart_axes.h.
#include <cstddef>
#include <span>
#include <string>

#include <imgui.h>

#include "ui/logic/chart_axes.h"
#include "ui/widgets/line_chart.h"

namespace attn::ui {

struct Bar {
  std::string label;  // left of the bar
  double value;       // in the chart's unit
  ImU32 colour;
  std::string note;  // grey, after the value: "sliding window 4k"; may be empty
};

struct BarChartOptions {
  AxisScale scale = AxisScale::Linear;  // linear bars start at 0, log bars at the axis' lower end
  NumberUnit unit = NumberUnit::Bytes;
  ImVec2 size = {0, 0};  // 0: the available width; height as the bars need (a given height spaces them out)
  float max_height = 0;  // past 0: the rows close up (to a line and a little) to stay within it
  std::string title;
  std::span<const ReferenceLine> references;  // vertical lines at these values, labelled above the bars
  double axis_reach = 0;  // the value axis reaches at least this far: charts side by side share one scale
};

void BarChart(const char* id, std::span<const Bar> bars, const BarChartOptions& opts);

// A bar's row past a line of text, where the chart's height is the bars' own.
inline constexpr float kBarRowPad = 12.0f;
// How tall BarChart draws `bars` bars as they need (no title, references, size or max_height): what a panel keeps in
// sight for a chart below something it sizes.
float BarChartHeight(std::size_t bars);

}  // namespace attn::ui
