#pragma once
// ui::LineChart: series against one x and one y axis (linear or log, each with a unit), horizontal
// reference lines such as a GPU's memory, and where each series crosses them. In the manner of
// ImPlot's PlotLine: one call per frame, options in a small struct. Each line has a dash pattern or marker of its
// own and may carry its name at its right end. Ticks, number formats and label
// placement come from ui/logic/chart_axes.h; this file measures text and draws.
#include <span>
#include <string>
#include <vector>

#include <imgui.h>

#include "ui/logic/chart_axes.h"
#include "ui/logic/line_style.h"

namespace attn::ui {

struct Series {
  std::string name;
  std::vector<double> x, y;  // same length, x ascending
  ImU32 colour;
  LineStyle style = {};   // dash and marker: colour is never a line's only cue (series_style gives distinct ones)
  std::string end_label;  // written right of the line's last point, nudged clear of the other labels; "": none
};

struct ReferenceLine {
  double y;           // in the y axis' unit (a bar chart reads it along its value axis)
  std::string label;  // "80 GB"
};

enum LineChartFlags_ {
  LineChartFlags_None = 0,
  LineChartFlags_NoLegend = 1 << 0,  // no box naming the series (a single series, or named elsewhere)
  LineChartFlags_NoHover = 1 << 1,   // no cursor line and tooltip (thumbnails, captures)
  // What a lesson page shows the class: the layout check wants its plot a third of the window each way.
  LineChartFlags_PageChart = 1 << 2,
  // Lines lying on each other drawn as a stripe, the one drawn first widest (stripe_widths): for a few lines that
  // coincide in part, such as the Cost view's while the projections dominate (many lines at one value would make a
  // broad band).
  LineChartFlags_Stripes = 1 << 3,
  // The marks are things to open: the hand cursor over one, and LineChart says which was hovered and clicked.
  LineChartFlags_MarksOpen = 1 << 4,
};
using LineChartFlags = int;

// A dot at (x, y) with its label beside it, such as where a series meets a reference line (the caller
// computes the exact point: a chart only knows its samples).
struct ChartMark {
  double x, y;
  std::string label;
  ImU32 colour;
};

// Text in the plot, its left end at x and its top just under y (a note under a line's flat part), wrapped at the plot's
// width and moved left as needed to stay inside it; left out (a layout check finding) where it would cross a line or
// a label.
struct ChartNote {
  double x, y;
  std::string text;
};

struct LineChartOptions {
  Axis x, y;                                  // ranges as given: see nice_axis to widen data ranges
  std::span<const ReferenceLine> references;  // horizontal lines, each labelled on itself inside the plot
  // A mark with a label is labelled where the label has clear room, nearer its own dot than any other (the layout
  // check reports one that finds none); one with an empty label is a dot only. The caller lists every value beside
  // the chart too (the memory view's table) and labels the ones a lesson page quotes.
  std::span<const ChartMark> marks;
  ImVec2 size = {0, 0};  // 0: the available width; height available, or 0.6 x width
  LineChartFlags flags = LineChartFlags_None;
  std::string title;          // drawn in title_font() above the plot
  float y_label_width = 0;    // at least this room for the y labels: charts stacked over one x axis line up
  float end_label_width = 0;  // the same for the end labels right of the lines: their right edges
  // x values with a labelled tick whatever the axis' own ticks (lengths a lesson page quotes), their labels kept first.
  std::span<const double> x_pins;
  std::span<const double> y_pins;  // the same for y values (the Cost page's FLOPs at the length it quotes)
  std::span<const ChartNote> notes;
};

// With LineChartFlags_MarksOpen, the index in opts.marks of the mark under the mouse and of the one clicked (-1: none).
struct LineChartHits {
  int hovered_mark = -1, clicked_mark = -1;
};
LineChartHits LineChart(const char* id, std::span<const Series> series, const LineChartOptions& opts);
// The height a chart of `width` takes beyond its plot (its title, axis labels and titles): what to add to the plot
// height a page needs.
float LineChartOverhead(const LineChartOptions& opts, float width);

// The smallest and largest positive y over all series (what a log axis can show); {1, 1} when none.
std::pair<double, double> positive_extent(std::span<const Series> series);

// Pieces ui::BarChart and ui::VectorPlot draw the same way.
// A polyline drawn and left blank by turns for the lengths of `pattern` (pixels, starting drawn); the pattern carries
// on across corners, so a polyline reads as one evenly patterned line.
void AddPatternedPolyline(ImDrawList* dl, std::span<const ImVec2> pts, ImU32 colour, float thickness,
                          std::span<const float> pattern);
void AddDashedLine(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness);  // 6 px dashes, 4 px gaps
// How many labelled ticks a horizontal axis `width` pixels wide has room for.
int BottomAxisTickBudget(const Axis& a, float width);
// Gridlines over [plot_min, plot_max], tick marks and labels below it; a label that would leave
// [left, right] or touch the previous one is dropped.
void DrawBottomAxis(ImDrawList* dl, const Axis& a, std::span<const Tick> ticks, ImVec2 plot_min, ImVec2 plot_max,
                    float left, float right);
inline constexpr float kChartTickLength = 5.0f;                         // tick marks outside the plot
inline constexpr float kChartLabelGap = 4.0f;                           // between a tick mark and its label
inline constexpr ImU32 kChartFrame = IM_COL32(140, 142, 150, 255);      // plot frame, axis lines, ticks
inline constexpr ImU32 kChartReference = IM_COL32(210, 210, 216, 255);  // dashed reference lines, on a dark page
// kChartReference made dark enough on a light page to stand out clearly (4.5:1, over the 3:1 of every chart line:
// pale grey dashes on white were faint from the back of a room).
ImU32 ChartReferenceColour();
inline constexpr float kChartReferenceWidth = 2.0f;  // dashed reference lines

}  // namespace attn::ui
