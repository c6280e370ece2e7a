#include "ui/widgets/line_chart.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ui/logic/colour_map.h"
#include "ui/logic/layout_check.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/picture_export.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

constexpr float kPad = 8.0f;               // inside the legend and around labels in the plot
constexpr float kLegendSwatch = 26.0f;     // the stroke of a series in the legend
constexpr float kLineWidth = 2.5f;         // series: thick enough to tell colours apart from afar
constexpr float kMarkerRadius = 4.5f;      // crossing dots
constexpr float kLineMarkerRadius = 4.0f;  // a series' markers

struct Palette {
  ImU32 text, frame, grid, reference, panel;
};

Palette palette() {
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  // Gridlines: there when looked for, quiet otherwise (a shade of the text over either page).
  const ImVec4 text = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  return {ImGui::GetColorU32(ImGuiCol_Text), kChartFrame, ImGui::GetColorU32(ImVec4(text.x, text.y, text.z, 0.11f)),
          ChartReferenceColour(), ImGui::GetColorU32(ImVec4(bg.x, bg.y, bg.z, 0.88f))};
}

Box box_of(ImVec2 min, ImVec2 max) { return {min.x, min.y, max.x, max.y}; }

// Screen coordinates of axis values inside the plot rectangle.
struct Plot {
  ImVec2 min, max;
  const Axis* x;
  const Axis* y;
  float px(double v) const { return min.x + (max.x - min.x) * static_cast<float>(axis_fraction(v, *x)); }
  float py(double v) const { return max.y - (max.y - min.y) * static_cast<float>(axis_fraction(v, *y)); }
  bool holds_x(double v) const { return in_range(v, *x); }
  bool holds_y(double v) const { return in_range(v, *y); }
  static bool in_range(double v, const Axis& a) {
    return v >= a.lo && v <= a.hi && (a.scale == AxisScale::Linear || v > 0);
  }
};

bool drawable(double v, const Axis& a) { return std::isfinite(v) && (a.scale == AxisScale::Linear || v > 0); }

// Only the points that change a pixel (column_envelope): a software GL draws every segment it is given.
std::vector<ImVec2> thinned(const std::vector<ImVec2>& run) {
  const float scale = ImGui::GetIO().DisplayFramebufferScale.x;  // columns of the framebuffer's pixels
  std::vector<float> xs, ys;
  for (const ImVec2& v : run) xs.push_back(v.x * scale), ys.push_back(v.y);
  std::vector<ImVec2> kept;
  for (const std::size_t i : column_envelope(xs, ys)) kept.push_back(run[i]);
  return kept;
}

// The series as screen polylines, split where a point cannot be shown (NaN, or <= 0 on a log axis); every point.
std::vector<std::vector<ImVec2>> polylines(const Series& s, const Plot& p) {
  std::vector<std::vector<ImVec2>> runs(1);
  for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    if (drawable(s.x[i], *p.x) && drawable(s.y[i], *p.y)) runs.back().push_back({p.px(s.x[i]), p.py(s.y[i])});
    else if (!runs.back().empty()) runs.emplace_back();
  }
  if (runs.back().empty()) runs.pop_back();
  return runs;
}

// A series' stroke width: dots are drawn wider than the rest, or a dotted line reads fainter than 3:1 from afar.
float stroke_width(LineDash dash, float width) { return dash == LineDash::Dotted ? width + 1.5f : width; }

// Dashes carry on across corners, so a dashed polyline reads as one evenly dashed line; a solid one is one polyline.
// `scale` stretches the pattern (a line widened into a stripe keeps its dashes' proportions, not square blocks).
void styled_polyline(ImDrawList* dl, const std::vector<ImVec2>& pts, ImU32 colour, float thickness, LineDash dash,
                     float scale = 1.0f) {
  std::vector<float> pattern = dash_lengths(dash);
  for (float& l : pattern) l *= scale;
  if (pattern.empty()) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), colour, ImDrawFlags_None, thickness);
  else AddPatternedPolyline(dl, pts, colour, thickness, pattern);
}

// A marker's shape, filled, centred at `at`, ringed in the panel's colour so it stands out where lines cross.
void draw_marker(ImDrawList* dl, ImVec2 at, LineMarker m, ImU32 colour, ImU32 ring) {
  const float r = kLineMarkerRadius;
  const auto shape = [&](float grow, ImU32 col) {
    const float q = r + grow;
    switch (m) {
      case LineMarker::Circle: dl->AddCircleFilled(at, q, col); break;
      case LineMarker::Square:
        dl->AddRectFilled({at.x - q * 0.85f, at.y - q * 0.85f}, {at.x + q * 0.85f, at.y + q * 0.85f}, col);
        break;
      case LineMarker::Triangle:
        dl->AddTriangleFilled({at.x, at.y - q * 1.2f}, {at.x + q * 1.1f, at.y + q * 0.8f},
                              {at.x - q * 1.1f, at.y + q * 0.8f}, col);
        break;
      case LineMarker::Diamond:
        dl->AddQuadFilled({at.x, at.y - q * 1.2f}, {at.x + q, at.y}, {at.x, at.y + q * 1.2f}, {at.x - q, at.y}, col);
        break;
      case LineMarker::None: break;
    }
  };
  shape(1.5f, ring);
  shape(0.0f, colour);
}

// Markers on points at least this far apart: a marker every sample of a 3,000-step curve would be a thick line.
constexpr float kMarkerSpacing = 34.0f;

// One drawn run of a series, with each segment's width (stripe_widths).
struct Run {
  const Series* series;
  std::vector<ImVec2> points;
  std::vector<float> widths;
};

// Every series' runs in drawing order; with `stripes`, those lying on later ones widened into a stripe around them.
std::vector<Run> series_runs(std::span<const Series> series, const Plot& p, bool stripes) {
  std::vector<Run> runs;
  std::vector<PixelLine> lines;
  for (const Series& s : series)
    for (const std::vector<ImVec2>& all : polylines(s, p)) {
      runs.push_back({&s, thinned(all), {}});
      lines.emplace_back();
      for (const ImVec2& v : runs.back().points) lines.back().x.push_back(v.x), lines.back().y.push_back(v.y);
    }
  const std::vector<std::vector<float>> widths =
      stripes ? stripe_widths(lines, kLineWidth, 4.0f) : std::vector<std::vector<float>>{};
  for (std::size_t i = 0; i < runs.size(); ++i)
    runs[i].widths = stripes ? widths[i] : std::vector<float>(runs[i].points.size() - 1, kLineWidth);
  return runs;
}

// A run as polylines of equal width, so the dashes carry on across corners.
void draw_run(ImDrawList* dl, const Run& r) {
  const Series& s = *r.series;
  if (r.points.size() == 1) dl->AddCircleFilled(r.points[0], kLineWidth * 1.2f, s.colour);  // a point alone is data
  for (std::size_t k = 0; k < r.widths.size();) {
    std::size_t end = k;
    while (end + 1 < r.widths.size() && r.widths[end + 1] == r.widths[k]) ++end;
    const std::vector<ImVec2> piece(r.points.begin() + static_cast<std::ptrdiff_t>(k),
                                    r.points.begin() + static_cast<std::ptrdiff_t>(end) + 2);
    // Widened under other lines it keeps its own pattern: a line changing from solid to dashed where the lines part
    // looked like a change in the data.
    styled_polyline(dl, piece, s.colour, stroke_width(s.style.dash, r.widths[k]), s.style.dash,
                    std::max(1.0f, r.widths[k] / kLineWidth * 0.6f));
    k = end + 1;
  }
}

// What a lesson page's chart shows must be seen: a line hidden under another is reported (layout_check's rule).
void report_hidden_lines(const std::vector<Run>& runs) {
  std::vector<DrawnStroke> strokes;
  for (const Run& r : runs)
    for (std::size_t k = 0; k < r.widths.size(); ++k)
      strokes.push_back({"line \"" + r.series->name + "\"", r.points[k].x, r.points[k].y, r.points[k + 1].x,
                         r.points[k + 1].y, r.widths[k], r.series->colour});
  std::vector<std::string> found = hidden_strokes(strokes);
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());  // once per pair of lines
  for (const std::string& f : found) ReportHiddenHere("chart: " + f);
}

void draw_series(ImDrawList* dl, std::span<const Series> series, const Plot& p, LineChartFlags flags,
                 const Palette& c) {
  if (LayoutCheckOn())
    for (const Series& s : series)
      ReportLineContrastHere("line " + s.name, s.colour, ImGui::GetColorU32(ImGuiCol_WindowBg));
  const std::vector<Run> runs = series_runs(series, p, flags & LineChartFlags_Stripes);
  // A margin of the page's colour under every line first: a gridline or reference line under a dashed line would fill
  // its gaps and merge with it (the scenario's sparse line lying on the 100 GFLOP gridline).
  for (const Run& r : runs)
    for (std::size_t k = 0; k < r.widths.size(); ++k)
      dl->AddLine(r.points[k], r.points[k + 1], c.panel | IM_COL32_A_MASK,
                  stroke_width(r.series->style.dash, r.widths[k]) + 3.0f);
  for (const Run& r : runs) draw_run(dl, r);
  // Only a chart that resolves lines lying on each other is held to it: the Train view's heads, flat together early in
  // a run, share one end label ("layer 0") instead.
  const LineChartFlags judged = LineChartFlags_PageChart | LineChartFlags_Stripes;
  if ((flags & judged) == judged && LayoutCheckOn()) report_hidden_lines(runs);
}

// The series' markers over every line (a marker under another line would hide its shape), on points in the plot.
void draw_series_markers(ImDrawList* dl, const Series& s, const Plot& p, const Palette& c) {
  if (s.style.marker == LineMarker::None) return;
  for (const std::vector<ImVec2>& run : polylines(s, p)) {
    std::vector<float> xs;
    for (const ImVec2& v : run) xs.push_back(v.x);
    for (const std::size_t i : marker_points(xs, kMarkerSpacing))
      if (run[i].y >= p.min.y - 0.5f && run[i].y <= p.max.y + 0.5f && run[i].x >= p.min.x - 0.5f &&
          run[i].x <= p.max.x + 0.5f)
        draw_marker(dl, run[i], s.style.marker, s.colour, c.panel | IM_COL32_A_MASK);
  }
}

// A short stroke of the series' line and marker, as in the legend.
void draw_swatch(ImDrawList* dl, const Series& s, ImVec2 a, ImVec2 b, const Palette& c) {
  styled_polyline(dl, {a, b}, s.colour, stroke_width(s.style.dash, kLineWidth), s.style.dash);
  if (s.style.marker != LineMarker::None)
    draw_marker(dl, {(a.x + b.x) / 2, (a.y + b.y) / 2}, s.style.marker, s.colour, c.panel | IM_COL32_A_MASK);
}

// Major gridlines and tick marks left of the plot, labels right-aligned; labels that would touch the
// one above them, or leave the widget, are dropped.
void draw_left_axis(ImDrawList* dl, std::span<const Tick> ticks, const Plot& p, float top, float bottom,
                    const std::vector<Box>& taken, const Palette& c) {
  const float h = ImGui::GetTextLineHeight();
  std::vector<std::vector<Box>> boxes;
  std::vector<const Tick*> labelled;
  for (const Tick& t : ticks) {
    if (!p.holds_y(t.value)) continue;
    const float y = p.py(t.value);
    if (t.major) dl->AddLine({p.min.x, y}, {p.max.x, y}, c.grid, 1.0f);
    dl->AddLine({p.min.x - (t.major ? kChartTickLength : kChartTickLength * 0.6f), y}, {p.min.x, y}, c.frame, 1.0f);
    if (t.label.empty()) continue;
    const float right = p.min.x - kChartTickLength - kChartLabelGap;
    boxes.push_back({{right - TextWidth(t.label), y - h / 2, right, y + h / 2}});
    labelled.push_back(&t);
  }
  // Pinned labels (values the page quotes) are placed first; a regular one beside them gives way.
  std::vector<std::size_t> order(labelled.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return labelled[i]->pinned; });
  std::vector<std::vector<Box>> ordered;
  for (const std::size_t i : order) ordered.push_back(boxes[i]);
  const std::vector<int> kept = place_labels(ordered, taken, {-1e9f, top, 1e9f, bottom}, 2.0f);
  for (std::size_t k = 0; k < order.size(); ++k)
    if (kept[k] == 0) dl->AddText({ordered[k][0].x0, ordered[k][0].y0}, c.text, labelled[order[k]]->label.c_str());
}

// Where reference labels go inside the plot: their lines' y, spread a line of text apart (lines closer than that, such
// as 80 and 141 GB, get their labels moved apart in their order), in a column at the left or right end.
constexpr float kReferenceLeader = 14.0f;  // how far a leader runs along the plot to its line

struct ReferenceColumn {
  std::vector<const ReferenceLine*> shown;
  std::vector<float> want, at;
  std::vector<Box> boxes;
};

ReferenceColumn reference_column(std::span<const ReferenceLine> refs, const Plot& p, bool right_end) {
  const float h = ImGui::GetTextLineHeight();
  ReferenceColumn col;
  for (const ReferenceLine& r : refs)
    if (p.holds_y(r.y)) {
      col.shown.push_back(&r);
      col.want.push_back(p.py(r.y));
    }
  col.at = spread_labels(col.want, h + 2, p.min.y + 2, p.max.y - 2);
  float w = 0;
  for (const ReferenceLine* r : col.shown) w = std::max(w, TextWidth(r->label));
  for (std::size_t i = 0; i < col.shown.size(); ++i) {
    const float tw = TextWidth(col.shown[i]->label);
    // Right-aligned at the left end (next to the leaders), left-aligned at the right end.
    const float x0 = right_end ? p.max.x - kPad - w : p.min.x + kPad + w - tw;
    col.boxes.push_back({x0 - 2, col.at[i] - h / 2, x0 + tw + 2, col.at[i] + h / 2});
  }
  return col;
}

bool column_clear(const ReferenceColumn& col, const std::vector<std::vector<Box>>& lines) {
  for (const Box& b : col.boxes)
    for (const std::vector<Box>& l : lines)
      for (const Box& o : l)
        if (overlaps(b, o, 1.0f)) return false;
  return true;
}

// Each reference line named inside the plot, at whichever end of it no series crosses (the left, where caches are
// small, first): the y axis keeps its regular ticks, and a label moved off its line to clear a neighbour's is tied
// back by a short leader. Returns the labels' boxes.
std::vector<Box> draw_reference_labels(ImDrawList* dl, std::span<const ReferenceLine> refs, const Plot& p,
                                       const std::vector<std::vector<Box>>& lines, const Palette& c) {
  ReferenceColumn col = reference_column(refs, p, false);
  bool right_end = false;
  if (!column_clear(col, lines)) {
    ReferenceColumn right = reference_column(refs, p, true);
    if (column_clear(right, lines)) col = std::move(right), right_end = true;
    else ReportHere("chart: the reference lines' labels lie on a series at both ends of the plot");
  }
  const float h = ImGui::GetTextLineHeight();
  for (std::size_t i = 0; i < col.shown.size(); ++i) {
    const Box& b = col.boxes[i];
    if (std::abs(col.at[i] - col.want[i]) > 0.5f) {  // from the label's inner side to its line
      const float from = right_end ? b.x0 : b.x1;
      dl->AddLine({from, col.at[i]}, {right_end ? from - kReferenceLeader : from + kReferenceLeader, col.want[i]},
                  c.reference, 1.5f);
    }
    dl->AddRectFilled({b.x0, b.y0}, {b.x1, b.y1}, c.panel | IM_COL32_A_MASK, 3.0f);  // breaks the lines behind it
    dl->AddText({b.x0 + 2, col.at[i] - h / 2}, c.text, col.shown[i]->label.c_str());
  }
  return col.boxes;
}

// The legend's size: a short stroke of each series beside its name.
ImVec2 legend_size(std::span<const Series> series) {
  float names = 0;
  for (const Series& s : series) names = std::max(names, TextWidth(s.name));
  return {kPad + kLegendSwatch + 6 + names + kPad,
          kPad + ImGui::GetTextLineHeight() * static_cast<float>(series.size())};
}

// The box naming each series, in the first corner of the plot (top-left, top-right, bottom-right, bottom-left) clear
// of the labels already drawn (the reference lines' names lie at the plot's left) and of the lines; else the first
// clear of the labels. Returns where it is.
Box draw_series_legend(ImDrawList* dl, std::span<const Series> series, const Plot& p, std::span<const Box> taken,
                       const std::vector<std::vector<Box>>& lines, const Palette& c) {
  const ImVec2 size = legend_size(series);
  const ImVec2 corners[] = {{p.min.x + kPad, p.min.y + kPad},
                            {p.max.x - kPad - size.x, p.min.y + kPad},
                            {p.max.x - kPad - size.x, p.max.y - kPad - size.y},
                            {p.min.x + kPad, p.max.y - kPad - size.y}};
  const auto clear_of = [&](ImVec2 corner, std::span<const Box> boxes) {
    const Box legend = box_of(corner, {corner.x + size.x, corner.y + size.y});
    return std::none_of(boxes.begin(), boxes.end(), [&](const Box& b) { return overlaps(legend, b, 1.0f); });
  };
  const auto clear_of_lines = [&](ImVec2 corner) {
    return std::all_of(lines.begin(), lines.end(), [&](const std::vector<Box>& l) { return clear_of(corner, l); });
  };
  const auto first = [&](auto&& clear) { return std::find_if(std::begin(corners), std::end(corners), clear); };
  const ImVec2* found = first([&](ImVec2 k) { return clear_of(k, taken) && clear_of_lines(k); });
  if (found == std::end(corners)) found = first([&](ImVec2 k) { return clear_of(k, taken); });
  const ImVec2 at = found == std::end(corners) ? corners[0] : *found;
  const ImVec2 end{at.x + size.x, at.y + size.y};
  dl->AddRectFilled(at, end, c.panel, 3.0f);
  dl->AddRect(at, end, c.frame, 3.0f);
  const float h = ImGui::GetTextLineHeight();
  for (std::size_t i = 0; i < series.size(); ++i) {
    const float y = at.y + kPad / 2 + h * static_cast<float>(i);
    draw_swatch(dl, series[i], {at.x + kPad, y + h / 2}, {at.x + kPad + kLegendSwatch, y + h / 2}, c);
    dl->AddText({at.x + kPad + kLegendSwatch + 6, y}, c.text, series[i].name.c_str());
  }
  return box_of(at, end);
}

// Places around a dot, nearest first and the clear side of a rising line first (above-left, below-right),
// then one, two and three (or up to `levels` - 1) label heights further out, with a leader back to the dot.
std::vector<LabelSpot> label_spots(ImVec2 at, ImVec2 size, int levels = 4) {
  const float d = kMarkerRadius + 3, w = size.x, h = size.y, r = kMarkerRadius + 2;
  std::vector<LabelSpot> spots;
  for (int level = 0; level < levels; ++level) {  // up to three label heights out: a crowded corner still has room
    const float out = (h + 3) * static_cast<float>(level), up = at.y - d - out, down = at.y + d + out;
    const auto leader = [&](float x0, float x1, bool above) -> std::optional<Box> {
      if (level == 0) return std::nullopt;
      return above ? Box{x0, up, x1, at.y - r} : Box{x0, at.y + r, x1, down};
    };
    spots.push_back({{at.x - d - w, up - h, at.x - d, up}, leader(at.x - d, at.x, true)});
    spots.push_back({{at.x + d, down, at.x + d + w, down + h}, leader(at.x, at.x + d, false)});
    spots.push_back({{at.x + d, up - h, at.x + d + w, up}, leader(at.x, at.x + d, true)});
    spots.push_back({{at.x - d - w, down, at.x - d, down + h}, leader(at.x - d, at.x, false)});
    spots.push_back({{at.x - w / 2, up - h, at.x + w / 2, up}, leader(at.x - 1, at.x + 1, true)});
    spots.push_back({{at.x - w / 2, down, at.x + w / 2, down + h}, leader(at.x - 1, at.x + 1, false)});
  }
  return spots;
}

// Where the label box is from a point: 0 inside it.
float distance(const Box& b, ImVec2 at) {
  return std::hypot(std::max({b.x0 - at.x, 0.0f, at.x - b.x1}), std::max({b.y0 - at.y, 0.0f, at.y - b.y1}));
}

// A label reads as its dot's only if no other dot is as near it: "9,155" right beside another dot names that one.
std::vector<LabelSpot> unambiguous(std::vector<LabelSpot> spots, const std::vector<ImVec2>& dots, std::size_t own) {
  std::erase_if(spots, [&](const LabelSpot& s) {
    const float mine = distance(s.label, dots[own]);
    for (std::size_t j = 0; j < dots.size(); ++j)
      if (j != own && distance(s.label, dots[j]) < mine + kMarkerRadius + 4) return true;
    return false;
  });
  return spots;
}

// The spots whose label or leader would lie on a line the dot is not on: a number on a line reads as that line's.
// The lines through the dot (its series, its reference line) are only kept clear where possible (`own`).
// A leader may cross a reference line (the first `crossable` lines, horizontal and dashed: a thin leader across one
// reads as crossing it); lines 7 px apart (80 and 141 GB) leave a dot on the middle one no other way out.
std::vector<LabelSpot> off_other_lines(std::vector<LabelSpot> spots, ImVec2 dot, const std::vector<Box>& lines,
                                       std::size_t crossable, std::vector<Box>& own) {
  const Box at{dot.x - 2, dot.y - 2, dot.x + 2, dot.y + 2};
  std::vector<Box> others;
  std::vector<bool> may_cross;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (overlaps(lines[i], at, 0)) own.push_back(lines[i]);
    else others.push_back(lines[i]), may_cross.push_back(i < crossable);
  std::erase_if(spots, [&](const LabelSpot& s) {
    for (std::size_t i = 0; i < others.size(); ++i)
      if (overlaps(s.label, others[i], 1.0f) || (s.leader && !may_cross[i] && overlaps(*s.leader, others[i], 0.0f)))
        return true;
    return false;
  });
  return spots;
}

// Mark labels clear of the legend, the dots, each other and every line they are not about (and where possible the
// lines they are); one that finds no clear room is left out (the caller lists every value beside the chart, and the
// tooltip has it).
void draw_chart_marks(ImDrawList* dl, std::span<const ChartMark> marks, std::span<const ReferenceLine> refs,
                      const Plot& p, const std::vector<std::vector<Box>>& series_lines, std::vector<Box> fixed,
                      const Palette& c) {
  const float pad = 3.0f;
  std::vector<ImVec2> dots;
  std::vector<const ChartMark*> shown;
  for (const ChartMark& m : marks)
    if (p.holds_x(m.x) && p.holds_y(m.y)) {
      dots.push_back({p.px(m.x), p.py(m.y)});
      shown.push_back(&m);
    }
  for (const ImVec2& d : dots)
    fixed.push_back({d.x - kMarkerRadius, d.y - kMarkerRadius, d.x + kMarkerRadius, d.y + kMarkerRadius});
  std::vector<Box> lines;
  for (const ReferenceLine& r : refs)
    if (p.holds_y(r.y)) lines.push_back({p.min.x, p.py(r.y) - 1, p.max.x, p.py(r.y) + 1});
  const std::size_t reference_boxes = lines.size();  // the reference lines first
  for (const std::vector<Box>& l : series_lines) lines.insert(lines.end(), l.begin(), l.end());
  std::vector<std::vector<LabelSpot>> spots;
  std::vector<Box> own;  // the lines through some dot: kept clear where possible
  for (std::size_t i = 0; i < shown.size(); ++i) {
    spots.emplace_back();
    if (shown[i]->label.empty()) continue;  // a dot only: its number is in the table
    const ImVec2 t = ImGui::CalcTextSize(shown[i]->label.c_str());
    const std::vector<LabelSpot> near = unambiguous(label_spots(dots[i], {t.x + 2 * pad, t.y}), dots, i);
    spots.back() = off_other_lines(near, dots[i], lines, reference_boxes, own);
    // A dot hemmed in by lines and dots (a crossing the page quotes, among the others): a label out on a leader,
    // which says whose it is, and the leader may cross a line; the label itself still lies on none.
    if (spots.back().empty()) {
      std::vector<LabelSpot> out = label_spots(dots[i], {t.x + 2 * pad, t.y}, 7);  // and further out
      std::erase_if(out, [](const LabelSpot& s) { return !s.leader; });
      spots.back() = off_other_lines(out, dots[i], lines, lines.size(), own);
    }
  }
  const std::vector<int> chosen = place_labels_best(spots, fixed, own, box_of(p.min, p.max), 1.0f);

  // Leaders under the dots, dots under the labels.
  for (std::size_t i = 0; i < shown.size(); ++i)
    if (chosen[i] >= 0 && spots[i][static_cast<std::size_t>(chosen[i])].leader) {
      const Box& b = spots[i][static_cast<std::size_t>(chosen[i])].label;
      const ImVec2 near{std::clamp(dots[i].x, b.x0, b.x1), std::clamp(dots[i].y, b.y0, b.y1)};
      dl->AddLine(dots[i], near, (shown[i]->colour & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 170), 1.0f);
    }
  for (std::size_t i = 0; i < shown.size(); ++i) {
    dl->AddCircleFilled(dots[i], kMarkerRadius + 1.5f, c.panel | IM_COL32_A_MASK);
    dl->AddCircleFilled(dots[i], kMarkerRadius, shown[i]->colour);
  }
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (chosen[i] < 0 && !shown[i]->label.empty())  // a number the page quotes must be on the chart
      ReportHere("chart: no clear room for the crossing's label \"" + shown[i]->label + "\"");
    if (chosen[i] < 0) continue;
    const Box& b = spots[i][static_cast<std::size_t>(chosen[i])].label;
    dl->AddRectFilled({b.x0, b.y0}, {b.x1, b.y1}, c.panel, 3.0f);
    dl->AddText({b.x0 + pad, b.y0}, shown[i]->colour, shown[i]->label.c_str());
  }
}

// The mark whose dot is nearest the mouse within a finger's width of it, or -1.
int mark_under(std::span<const ChartMark> marks, const Plot& p, ImVec2 mouse) {
  const float reach = kMarkerRadius + 5.0f;
  int nearest = -1;
  float best = reach * reach;
  for (std::size_t i = 0; i < marks.size(); ++i) {
    if (!p.holds_x(marks[i].x) || !p.holds_y(marks[i].y)) continue;
    const float dx = p.px(marks[i].x) - mouse.x, dy = p.py(marks[i].y) - mouse.y;
    if (dx * dx + dy * dy <= best) {
      best = dx * dx + dy * dy;
      nearest = static_cast<int>(i);
    }
  }
  return nearest;
}

// Every series as boxes along its drawn line: what a label in the plot keeps clear of.
std::vector<std::vector<Box>> series_boxes(std::span<const Series> series, const Plot& p) {
  std::vector<std::vector<Box>> out;
  for (const Series& s : series) {
    out.emplace_back();
    for (const std::vector<ImVec2>& run : polylines(s, p)) {
      std::vector<float> xs, ys;
      for (const ImVec2& v : run) xs.push_back(v.x), ys.push_back(v.y);
      for (const Box& b : polyline_boxes(xs, ys, kLineWidth / 2 + 1, 6.0f))
        if (b.x1 >= p.min.x && b.x0 <= p.max.x && b.y1 >= p.min.y && b.y0 <= p.max.y) out.back().push_back(b);
    }
  }
  return out;
}

// Notes in clear space under their points; each drawn takes its room from the labels placed after it.
void draw_notes(ImDrawList* dl, std::span<const ChartNote> notes, const Plot& p,
                const std::vector<std::vector<Box>>& lines, std::vector<Box>& taken, const Palette& c) {
  for (const ChartNote& n : notes) {
    if (!p.holds_y(n.y)) continue;
    // Wrapped at the plot's width when it must be, at spaces only (ImGui's wrap splits "24.2" after its point).
    const std::vector<std::string> rows = WrapAtSpaces(n.text, p.max.x - p.min.x - 2 * kPad);
    float w = 0;
    for (const std::string& r : rows) w = std::max(w, TextWidth(r));
    const float h = ImGui::GetTextLineHeight(), top = p.py(n.y) + 10;  // under the widest stripe
    const float x = std::max(p.min.x + kPad, std::min(p.holds_x(n.x) ? p.px(n.x) : p.min.x, p.max.x - kPad - w));
    const Box b{x, top, x + w, top + h * static_cast<float>(rows.size())};
    bool clear = b.x0 >= p.min.x && b.x1 <= p.max.x && b.y1 <= p.max.y;
    for (const std::vector<Box>& l : lines)
      for (const Box& o : l) clear = clear && !overlaps(b, o, 1.0f);
    for (const Box& o : taken) clear = clear && !overlaps(b, o, 1.0f);
    if (!clear) {  // what the note explains goes unexplained: the layout check says so
      ReportHere("chart: no clear room for the note \"" + n.text + "\"");
      continue;
    }
    dl->AddRectFilled({b.x0 - 2, b.y0}, {b.x1 + 2, b.y1}, c.panel | IM_COL32_A_MASK, 3.0f);  // over the gridlines
    for (std::size_t i = 0; i < rows.size(); ++i)
      dl->AddText({b.x0, b.y0 + h * static_cast<float>(i)}, c.text, rows[i].c_str());
    taken.push_back(b);
  }
}

// Where a series' line ends in the plot: its last point within the x range, moved into the plot's height.
std::optional<ImVec2> line_end(const Series& s, const Plot& p) {
  const std::vector<std::vector<ImVec2>> runs = polylines(s, p);
  for (auto r = runs.rbegin(); r != runs.rend(); ++r)
    for (auto v = r->rbegin(); v != r->rend(); ++v)
      if (v->x >= p.min.x - 0.5f && v->x <= p.max.x + 0.5f) return ImVec2{v->x, std::clamp(v->y, p.min.y, p.max.y)};
  return std::nullopt;
}

// A label in the column right of the lines: a reference line's or a series' end label.
struct SideLabel {
  float want;    // the y of what it names
  float from_x;  // where its leader starts
  const std::string* text;
  ImU32 text_colour, leader_colour;
};

// Text in its line's colour where that reads (4.5:1 on the page), else in the text colour.
ImU32 label_colour(ImU32 line, const Palette& c) {
  return contrast_ratio(line | IM_COL32_A_MASK, ImGui::GetColorU32(ImGuiCol_WindowBg) | IM_COL32_A_MASK) >= 4.5
             ? line
             : c.text;
}

// The series' end labels in one column right of every line's end, named or not (a run still training: the noisy
// batch curve runs past the last evaluation), spread apart where they are close (never over each other nor the x
// axis' labels) and tied back by short leaders, which keep the labels' order and so never cross. Right of the lines
// rather than of the plot: a run at step 0 is a dot at the left edge, and leaders across the whole plot read as
// flat lines of data. Reference lines are named on themselves (draw_reference_labels). Returns the boxes of the
// labels drawn.
std::vector<Box> draw_side_labels(ImDrawList* dl, std::span<const Series> series, const Plot& p, float top,
                                  const Palette& c) {
  const float h = ImGui::GetTextLineHeight();
  std::vector<SideLabel> labels;
  float column = p.min.x;  // right of every line's end: nothing of a line lies there
  for (const Series& s : series)
    if (const std::optional<ImVec2> e = line_end(s, p)) {
      column = std::max(column, e->x);
      if (!s.end_label.empty()) labels.push_back({e->y, e->x, &s.end_label, label_colour(s.colour, c), c.reference});
    }
  std::vector<float> want;
  for (const SideLabel& l : labels) want.push_back(l.want);
  // From under the title (the y axis' title is at the left) to just above the x axis' labels.
  const std::vector<float> at = spread_labels(want, h, top, p.max.y + kChartTickLength);
  std::vector<Box> boxes;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const float x = column + kPad;
    // Thin, grey and dotted: a leader fanning out to a label spread far from its line must not read as a line of
    // data (in the line's colour, one from a score of 0 to a label at 0.9 looked like the score leaping).
    styled_polyline(dl, {{labels[i].from_x, labels[i].want}, {x - 2, at[i]}}, labels[i].leader_colour, 1.0f,
                    LineDash::Dotted);
    const Box b{x, at[i] - h / 2, x + TextWidth(*labels[i].text), at[i] + h / 2};
    if (x < p.max.x) dl->AddRectFilled({b.x0 - 2, b.y0}, {b.x1 + 2, b.y1}, c.panel, 3.0f);  // over the gridlines
    dl->AddText({b.x0, b.y0}, labels[i].text_colour, labels[i].text->c_str());
    boxes.push_back(b);
  }
  return boxes;
}

float side_label_width(std::span<const Series> series) {
  float w = 0;
  for (const Series& s : series)
    if (!s.end_label.empty()) w = std::max(w, TextWidth(s.end_label));
  return w > 0 ? w + kPad + 2 : 0;
}

void swatch_line(ImU32 colour, const std::string& text) {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled({at.x, at.y + h * 0.25f}, {at.x + h * 0.5f, at.y + h * 0.75f}, colour);
  ImGui::Dummy({h * 0.5f, h});
  ImGui::SameLine();
  ImGui::TextUnformatted(text.c_str());
}

// A cursor line at the mouse, a dot on each series, and every series' value there.
void draw_hover(ImDrawList* dl, std::span<const Series> series, const Plot& p, float mouse_x, const Palette& c) {
  const double x = axis_value((mouse_x - p.min.x) / (p.max.x - p.min.x), *p.x);
  dl->AddLine({mouse_x, p.min.y}, {mouse_x, p.max.y}, (c.text & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 110), 1.0f);
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(format_exact(x, p.x->unit).c_str());
  for (const Series& s : series) {
    const std::optional<double> y = interpolate_y(s.x, s.y, x, p.x->scale, p.y->scale);
    swatch_line(s.colour, s.name + ": " + (y ? format_exact(*y, p.y->unit) : std::string("\u2014")));
    if (y && p.holds_y(*y)) {
      dl->AddCircleFilled({mouse_x, p.py(*y)}, kMarkerRadius, s.colour);
      dl->AddCircle({mouse_x, p.py(*y)}, kMarkerRadius + 1, c.text, 0, 1.5f);
    }
  }
  ImGui::EndTooltip();
}

float title_height(const std::string& title) { return title.empty() ? 0 : title_font_size() + 6; }

void draw_title(ImDrawList* dl, const std::string& title, ImVec2 at, const Palette& c) {
  if (!title.empty()) dl->AddText(title_font(), title_font_size(), at, c.text, title.c_str());
}

ImVec2 chart_size(ImVec2 wanted) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float w = wanted.x > 0 ? wanted.x : std::max(avail.x, 200.0f);
  const float h = wanted.y > 0 ? wanted.y : (avail.y >= 200 ? avail.y : 0.6f * w);
  return {w, h};
}

}  // namespace

void AddPatternedPolyline(ImDrawList* dl, std::span<const ImVec2> pts, ImU32 colour, float thickness,
                          std::span<const float> pattern) {
  std::size_t piece = 0;
  float left = pattern[0];
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const ImVec2 a = pts[i - 1], b = pts[i];
    const float len = std::hypot(b.x - a.x, b.y - a.y);
    if (len <= 0) continue;
    const ImVec2 d{(b.x - a.x) / len, (b.y - a.y) / len};
    for (float pos = 0; pos < len;) {
      const float step = std::min(left, len - pos);
      if (piece % 2 == 0)
        dl->AddLine({a.x + d.x * pos, a.y + d.y * pos}, {a.x + d.x * (pos + step), a.y + d.y * (pos + step)}, colour,
                    thickness);
      pos += step;
      left -= step;
      if (left <= 0) {
        piece = (piece + 1) % pattern.size();
        left = pattern[piece];
      }
    }
  }
}

ImU32 ChartReferenceColour() {
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  const ImVec4 base = ImGui::ColorConvertU32ToFloat4(kChartReference);
  // 4.5:1, so a line drawn over a table's striped row or beside the data lines still reads.
  return pack(legible_on({base.x, base.y, base.z}, {bg.x, bg.y, bg.z}, 4.5));
}

void AddDashedLine(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour, float thickness) {
  const ImVec2 pts[] = {a, b};
  const float pattern[] = {6.0f, 4.0f};
  AddPatternedPolyline(dl, pts, colour, thickness, pattern);
}

int BottomAxisTickBudget(const Axis& a, float width) {
  // Room for the widest of the end labels and a third of that again between neighbours.
  const float label =
      std::max(TextWidth(format_unit(a.lo, a.unit)), TextWidth(format_unit(a.hi, a.unit))) + TextWidth("00");
  return std::clamp(static_cast<int>(width / (1.3f * label)), 2, 10);
}

void DrawBottomAxis(ImDrawList* dl, const Axis& a, std::span<const Tick> ticks, ImVec2 plot_min, ImVec2 plot_max,
                    float left, float right) {
  const Palette c = palette();
  const float y = plot_max.y + kChartTickLength + kChartLabelGap, h = ImGui::GetTextLineHeight();
  std::vector<std::vector<Box>> boxes;
  std::vector<const Tick*> labelled;
  for (const Tick& t : ticks) {
    if (!Plot::in_range(t.value, a)) continue;
    const float x = plot_min.x + (plot_max.x - plot_min.x) * static_cast<float>(axis_fraction(t.value, a));
    if (t.major) dl->AddLine({x, plot_min.y}, {x, plot_max.y}, c.grid, 1.0f);
    dl->AddLine({x, plot_max.y}, {x, plot_max.y + (t.major ? kChartTickLength : kChartTickLength * 0.6f)}, c.frame,
                1.0f);
    if (t.label.empty()) continue;
    // Centred under the tick, nudged inward at the widget's edges rather than cut off.
    const float w = TextWidth(t.label);
    const float x0 = std::clamp(x - w / 2, left, right - w);
    boxes.push_back({{x0, y, x0 + w, y + h}});
    labelled.push_back(&t);
  }
  // Pinned labels (values the page quotes) are placed first; a regular one beside them gives way.
  std::vector<std::size_t> order(labelled.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return labelled[i]->pinned; });
  std::vector<std::vector<Box>> ordered;
  for (const std::size_t i : order) ordered.push_back(boxes[i]);
  const std::vector<int> kept = place_labels(ordered, {}, {left, y, right, y + h}, ImGui::CalcTextSize("0").x);
  for (std::size_t k = 0; k < order.size(); ++k)
    if (kept[k] == 0) dl->AddText({ordered[k][0].x0, y}, c.text, labelled[order[k]]->label.c_str());
}

namespace {

// Top to bottom: title, y-axis title, plot (half a line of room for the top tick label), x labels, x title.
// The y axis' title after the chart's on its row where both fit (a line more for the plot), else on a row of its own.
struct ChartRows {
  float title_w;
  bool y_title_inline;
  float plot_top, plot_bottom;  // from the chart's top
};

ChartRows chart_rows(const LineChartOptions& opts, ImVec2 size) {
  const float h = ImGui::GetTextLineHeight();
  ChartRows r;
  r.title_w = opts.title.empty() ? 0 : title_font()->CalcTextSizeA(title_font_size(), 1e9f, 0, opts.title.c_str()).x;
  r.y_title_inline =
      !opts.title.empty() && !opts.y.title.empty() && r.title_w + 2 * h + TextWidth(opts.y.title) <= size.x;
  r.plot_top = title_height(opts.title) + (opts.y.title.empty() || r.y_title_inline ? 0 : h + 2) + h / 2;
  r.plot_bottom = size.y - kChartTickLength - kChartLabelGap - h - (opts.x.title.empty() ? 0 : h + 4);
  return r;
}

}  // namespace

float LineChartOverhead(const LineChartOptions& opts, float width) {
  const ChartRows r = chart_rows(opts, {width, 0});
  return r.plot_top - r.plot_bottom;
}

LineChartHits LineChart(const char* id, std::span<const Series> series, const LineChartOptions& opts) {
  ImGui::PushID(id);
  const Palette c = palette();
  const ImVec2 size = chart_size(opts.size);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end{origin.x + size.x, origin.y + size.y};
  const float h = ImGui::GetTextLineHeight();

  const ChartRows rows = chart_rows(opts, size);
  const float title_w = rows.title_w, title_y = origin.y, y_title_y = title_y + title_height(opts.title);
  const bool y_title_inline = rows.y_title_inline;
  const ImVec2 y_title_at =
      y_title_inline ? ImVec2{origin.x + title_w + 2 * h, y_title_y - h - 6} : ImVec2{origin.x, y_title_y};
  Plot p{{0, origin.y + rows.plot_top}, {0, origin.y + rows.plot_bottom}, &opts.x, &opts.y};
  const int y_budget = std::clamp(static_cast<int>((p.max.y - p.min.y) / (2.2f * h)), 2, 10);
  const std::vector<Tick> y_ticks = with_pinned_ticks(axis_ticks(opts.y, y_budget), opts.y_pins, opts.y.unit);
  float y_label_w = opts.y_label_width;
  for (const Tick& t : y_ticks) y_label_w = std::max(y_label_w, TextWidth(t.label));
  p.min.x = origin.x + y_label_w + kChartTickLength + kChartLabelGap;
  const float right_room =
      std::max({side_label_width(series), opts.end_label_width > 0 ? opts.end_label_width + kPad + 2 : 0,
                TextWidth(format_unit(opts.x.hi, opts.x.unit)) / 2 + 2});
  p.max.x = end.x - right_room;

  ImGui::InvisibleButton("##chart", {std::max(size.x, 1.0f), std::max(size.y, 1.0f)});
  PictureMenu(opts.title.empty() ? id : opts.title.c_str(), origin, {origin.x + size.x, origin.y + size.y});
  const bool hovered = ImGui::IsItemHovered() && !(opts.flags & LineChartFlags_NoHover);
  if (p.max.x - p.min.x < 20 || p.max.y - p.min.y < 20) {  // too small to say anything
    ImGui::PopID();
    return {};
  }
  if (opts.flags & LineChartFlags_PageChart) NoteChartPlotHere(opts.title.empty() ? id : opts.title, p.min, p.max);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, end, true);
  draw_title(dl, opts.title, {origin.x, title_y}, c);
  if (!opts.y.title.empty()) dl->AddText(y_title_at, c.text, opts.y.title.c_str());
  if (!opts.x.title.empty())
    dl->AddText({(p.min.x + p.max.x - TextWidth(opts.x.title)) / 2, end.y - h}, c.text, opts.x.title.c_str());

  const std::vector<Tick> x_ticks =
      with_pinned_ticks(axis_ticks(opts.x, BottomAxisTickBudget(opts.x, p.max.x - p.min.x)), opts.x_pins, opts.x.unit);
  DrawBottomAxis(dl, opts.x, x_ticks, p.min, p.max, origin.x, end.x);
  draw_left_axis(dl, y_ticks, p, origin.y, end.y, {}, c);
  for (const ReferenceLine& r : opts.references)  // under the series
    if (p.holds_y(r.y)) {
      AddDashedLine(dl, {p.min.x, p.py(r.y)}, {p.max.x, p.py(r.y)}, c.reference, kChartReferenceWidth);
      ReportLineContrastHere("reference line " + r.label, c.reference, ImGui::GetColorU32(ImGuiCol_WindowBg));
    }

  dl->PushClipRect(p.min, p.max, true);
  draw_series(dl, series, p, opts.flags, c);
  dl->PopClipRect();
  dl->AddRect({p.min.x - 0.5f, p.min.y - 0.5f}, {p.max.x + 0.5f, p.max.y + 0.5f}, c.frame);
  for (const Series& s : series) draw_series_markers(dl, s, p, c);
  const std::vector<std::vector<Box>> lines = series_boxes(series, p);
  std::vector<Box> taken = draw_side_labels(dl, series, p, y_title_y, c);
  const std::vector<Box> reference_labels = draw_reference_labels(dl, opts.references, p, lines, c);
  taken.insert(taken.end(), reference_labels.begin(), reference_labels.end());
  draw_notes(dl, opts.notes, p, lines, taken, c);

  if (!(opts.flags & LineChartFlags_NoLegend) && !series.empty())
    taken.push_back(draw_series_legend(dl, series, p, taken, lines, c));
  draw_chart_marks(dl, opts.marks, opts.references, p, lines, std::move(taken), c);

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  LineChartHits hits;
  if (hovered && (opts.flags & LineChartFlags_MarksOpen)) hits.hovered_mark = mark_under(opts.marks, p, mouse);
  if (hits.hovered_mark >= 0) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) hits.clicked_mark = hits.hovered_mark;
  }
  if (hovered && mouse.x >= p.min.x && mouse.x <= p.max.x && mouse.y >= p.min.y && mouse.y <= p.max.y)
    draw_hover(dl, series, p, mouse.x, c);
  dl->PopClipRect();
  ImGui::PopID();
  return hits;
}

std::pair<double, double> positive_extent(std::span<const Series> series) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Series& s : series)
    for (double y : s.y)
      if (y > 0) lo = std::min(lo, y), hi = std::max(hi, y);
  return hi > 0 ? std::pair{lo, hi} : std::pair{1.0, 1.0};
}

}  // namespace attn::ui
