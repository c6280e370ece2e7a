#include "ui/widgets/vector_plot.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <imgui_internal.h>

#include "ui/logic/colour_map.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"

namespace attn::ui {
namespace {

// A stroke a label must keep clear of: an arrow, a piece of an arc, an axis, a leader line.
struct Obstacle {
  ImVec2 a, b;
  float half_width = 1;
  bool faint = false;  // a leader line may cross it: an axis, an arc, one of the other rows' thin arrows
};

// Whether the segment a-b passes through `r` (Liang-Barsky clipping).
bool crosses(ImVec2 a, ImVec2 b, const ImRect& r) {
  float t0 = 0, t1 = 1;
  const float d[2] = {b.x - a.x, b.y - a.y}, lo[2] = {r.Min.x - a.x, r.Min.y - a.y},
              hi[2] = {r.Max.x - a.x, r.Max.y - a.y};
  for (int k = 0; k < 2; ++k) {
    if (std::abs(d[k]) < 1e-6f) {
      if (lo[k] > 0 || hi[k] < 0) return false;
      continue;
    }
    float u = lo[k] / d[k], v = hi[k] / d[k];
    if (u > v) std::swap(u, v);
    t0 = std::max(t0, u);
    t1 = std::min(t1, v);
    if (t0 > t1) return false;
  }
  return true;
}

// A label to place: beside `anchor` (an arrow's tip, an arc's middle, an axis's end), first toward `toward`.
struct LabelJob {
  ImVec2 anchor, toward;
  ImU32 colour = 0;
  std::string text;
  bool required = false;       // no room for it is a layout finding; a faint arrow's label may be left out
  std::vector<ImVec2> also{};  // other anchors, tried after `anchor` at each distance (points further along an arc)
};

struct Spot {
  ImRect rect;
  ImVec2 anchor;
};

// Where labels went. Each label tries spots around its anchor, nearest and most in its direction first, and takes
// the first that overlaps no other label, arrow, arc or axis; one away from its anchor gets a leader line.
struct Labels {
  ImRect inside;
  std::vector<ImRect> taken;
  std::vector<Obstacle> strokes;
  static constexpr float kPad = 3.0f;
  static constexpr float kLeaderFrom = 16.0f;  // a label farther from its anchor than this gets a leader line

  bool clear(const ImRect& r) const {
    if (r.Min.x < inside.Min.x || r.Min.y < inside.Min.y || r.Max.x > inside.Max.x || r.Max.y > inside.Max.y)
      return false;
    ImRect roomy = r;
    roomy.Expand(kPad);
    if (std::any_of(taken.begin(), taken.end(), [&](const ImRect& o) { return o.Overlaps(roomy); })) return false;
    return std::none_of(strokes.begin(), strokes.end(), [&](const Obstacle& o) {
      ImRect around = roomy;
      around.Expand(o.half_width);
      return crosses(o.a, o.b, around);
    });
  }
  // A leader line may leave its anchor's own stroke but cross no other one (a faint arrow aside): it would seem to
  // point at the wrong arrow.
  bool leader_clear(ImVec2 anchor, const ImRect& r) const {
    const ImVec2 near{std::clamp(anchor.x, r.Min.x, r.Max.x), std::clamp(anchor.y, r.Min.y, r.Max.y)};
    const float length = std::hypot(near.x - anchor.x, near.y - anchor.y);
    if (length <= kLeaderFrom) return true;
    for (float t = 5.0f; t < length; t += 3.0f) {
      const float s = t / length;
      const ImVec2 p{anchor.x + (near.x - anchor.x) * s, anchor.y + (near.y - anchor.y) * s};
      const ImRect dot{{p.x - 0.5f, p.y - 0.5f}, {p.x + 0.5f, p.y + 0.5f}};
      if (std::any_of(taken.begin(), taken.end(), [&](const ImRect& o) { return o.Overlaps(dot); })) return false;
      if (std::any_of(strokes.begin(), strokes.end(), [&](const Obstacle& o) {
            if (o.faint) return false;
            ImRect around = dot;
            around.Expand(o.half_width);
            return crosses(o.a, o.b, around);
          }))
        return false;
    }
    return true;
  }
  std::optional<Spot> spot(const LabelJob& j, ImVec2 size) const {
    const float base = std::atan2(j.toward.y, j.toward.x);
    std::vector<ImVec2> anchors{j.anchor};
    anchors.insert(anchors.end(), j.also.begin(), j.also.end());
    // A faint arrow's label far from its tip, at the end of a long leader, would only add clutter: left out.
    const float farthest = j.required ? 1e9f : 95.0f;
    for (const float r : {3.0f, 6.0f, 10.0f, 14.0f, 19.0f, 25.0f, 32.0f, 40.0f, 50.0f, 62.0f, 76.0f, 92.0f, 110.0f,
                          130.0f, 155.0f, 185.0f}) {
      if (r > farthest) break;
      for (const ImVec2 at : anchors)
        for (int k = 0; k < 33; ++k) {  // 0, +1, -1, +2, -2 ... steps of 11.25 degrees from the direction
          const float turn = static_cast<float>((k + 1) / 2) * (k % 2 == 0 ? -1.0f : 1.0f) * 0.19635f;
          const ImVec2 d{std::cos(base + turn), std::sin(base + turn)};
          const ImVec2 c{at.x + d.x * (r + size.x * 0.5f), at.y + d.y * (r + size.y * 0.5f)};
          const ImRect rect{{c.x - size.x * 0.5f, c.y - size.y * 0.5f}, {c.x + size.x * 0.5f, c.y + size.y * 0.5f}};
          if (clear(rect) && leader_clear(at, rect)) return Spot{rect, at};
        }
    }
    return std::nullopt;
  }
  // Draws the label; false when it found no room.
  bool draw(ImDrawList* dl, const LabelJob& j) {
    const ImVec2 size = ImGui::CalcTextSize(j.text.c_str());
    const std::optional<Spot> found = spot(j, size);
    if (!found) return false;
    const ImRect* r = &found->rect;
    const ImVec2 at = found->anchor;
    taken.push_back(*r);
    const ImU32 page = ImGui::GetColorU32(ImGuiCol_WindowBg);
    // Read from the back of a room: the arrow's full colour (never its faded one), at 4.5:1 on the page.
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(j.colour), p = ImGui::ColorConvertU32ToFloat4(page);
    const ImU32 ink = pack(legible_on({c.x, c.y, c.z}, {p.x, p.y, p.z}, 4.5));
    const ImVec2 near{std::clamp(at.x, r->Min.x, r->Max.x), std::clamp(at.y, r->Min.y, r->Max.y)};
    if (std::hypot(near.x - at.x, near.y - at.y) > kLeaderFrom) {  // away from its anchor: a leader line
      dl->AddLine(at, near, ink, 1.5f);
      strokes.push_back({at, near, 1.0f});
    }
    // On the page's colour, so the grid does not run through the letters.
    dl->AddRectFilled({r->Min.x - 2, r->Min.y}, {r->Max.x + 2, r->Max.y}, page, 2.0f);
    dl->AddText(r->Min, ink, j.text.c_str());
    return true;
  }
};

struct Frame {
  ImVec2 centre;
  float half = 0;  // pixels from the centre to the extent
  double extent = 1;
  double x_extent = 1;  // data units from the centre to the left and right ends: past `extent` in a wide plot
  ImVec2 at(double x, double y) const {  // data to screen: y up
    const float s = half / static_cast<float>(extent);
    return {centre.x + static_cast<float>(x) * s, centre.y - static_cast<float>(y) * s};
  }
};

// As it shows on the page, at least 3:1 against it: a faded arrow is still a line the class must see.
ImU32 seen_stroke(ImU32 colour) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(colour), p = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  const Rgb shown{c.x * c.w + p.x * (1 - c.w), c.y * c.w + p.y * (1 - c.w), c.z * c.w + p.z * (1 - c.w)};
  return pack(legible_on(shown, {p.x, p.y, p.z}, 3.0));
}

// The grid, then the axes; the axes' names wait for the label placement (the last jobs).
void axes(ImDrawList* dl, const Frame& f, const VectorPlotOptions& o, Labels& labels, std::vector<LabelJob>& jobs) {
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.5f), axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int across = static_cast<int>(std::floor(f.x_extent / f.extent * 4.0 + 1e-9));
  for (int pass = 0; pass < 2; ++pass)         // the axes after the grid, so no grid line cuts them
    for (int i = -across; i <= across; ++i) {  // quarters of the extent, as far as the plot is wide
      if ((i == 0) != (pass == 1)) continue;
      const double v = f.extent * i / 4.0;
      dl->AddLine(f.at(v, -f.extent), f.at(v, f.extent), i == 0 ? axis : grid, i == 0 ? 1.5f : 1.0f);
      if (std::abs(i) <= 4)
        dl->AddLine(f.at(-f.x_extent, v), f.at(f.x_extent, v), i == 0 ? axis : grid, i == 0 ? 1.5f : 1.0f);
    }
  const ImVec2 left = f.at(-f.x_extent, 0), x_end = f.at(f.x_extent, 0), bottom = f.at(0, -f.extent),
               y_end = f.at(0, f.extent);
  labels.strokes.push_back({left, x_end, 1.0f, true});
  labels.strokes.push_back({bottom, y_end, 1.0f, true});
  jobs.push_back({x_end, {-0.3f, 1.0f}, axis, o.x_label, true});
  jobs.push_back({y_end, {1.0f, 0.3f}, axis, o.y_label, true});
}

// The arrow itself, and the job of its label: beyond the tip, along the arrow.
std::optional<LabelJob> arrow(ImDrawList* dl, const Frame& f, const PlotArrow& a, ImU32 colour) {
  const ImVec2 o = f.at(0, 0), tip = f.at(a.x, a.y);
  const float length = std::hypot(tip.x - o.x, tip.y - o.y);
  if (length < 1.0f) return std::nullopt;
  const ImVec2 u{(tip.x - o.x) / length, (tip.y - o.y) / length}, n{-u.y, u.x};
  const float head = std::min(length * 0.4f, 8.0f + 2.0f * a.thickness);
  const ImVec2 base{tip.x - u.x * head, tip.y - u.y * head};
  static constexpr float kDash[] = {10.0f, 6.0f};
  const ImVec2 shaft[] = {o, base};
  if (a.dashed) AddPatternedPolyline(dl, shaft, colour, a.thickness, kDash);
  else dl->AddLine(o, base, colour, a.thickness);
  const float w = head * 0.45f;
  dl->AddTriangleFilled(tip, {base.x + n.x * w, base.y + n.y * w}, {base.x - n.x * w, base.y - n.y * w}, colour);
  return LabelJob{tip, u, a.colour, a.label, a.thickness >= 2.0f};
}

// The arc, its pieces among the strokes labels keep clear of, and the job of its label: outside its middle.
LabelJob arc(ImDrawList* dl, const Frame& f, const PlotArc& a, Labels& labels) {
  const ImVec2 o = f.at(0, 0);
  const float r = a.radius * f.half;
  // Screen y points down: an angle counter-clockwise in the data is clockwise on screen.
  dl->PathArcTo(o, r, static_cast<float>(-a.from), static_cast<float>(-a.to), 32);
  const ImVector<ImVec2>& path = dl->_Path;
  for (int i = 1; i < path.Size; ++i) labels.strokes.push_back({path[i - 1], path[i], 1.5f, true});
  dl->PathStroke(seen_stroke(a.colour), 0, 2.5f);
  const auto point = [&](double share) {
    const double t = a.from + (a.to - a.from) * share;
    return ImVec2{o.x + static_cast<float>(std::cos(t)) * r, o.y - static_cast<float>(std::sin(t)) * r};
  };
  const double mid = (a.from + a.to) / 2;
  const ImVec2 d{static_cast<float>(std::cos(mid)), -static_cast<float>(std::sin(mid))};
  // A narrow angle among other arrows may leave no room off its middle: then off a point nearer one end.
  return {point(0.5), d, a.colour, a.label, true, {point(0.25), point(0.75), point(0.05), point(0.95)}};
}

DrawnStroke shaft(const Frame& f, const PlotArrow& a) {
  const ImVec2 o = f.at(0, 0), tip = f.at(a.x, a.y);
  return {a.label.empty() ? "an unlabelled arrow" : "arrow \"" + a.label + "\"",
          o.x,
          o.y,
          tip.x,
          tip.y,
          a.thickness,
          a.colour};
}

// The order to draw in: as given, except that an arrow lying under a later, wider one of another colour comes after
// all of them, a stripe along it (drawn first, it would vanish under the wider one).
std::vector<std::size_t> drawing_order(const Frame& f, std::span<const PlotArrow> arrows) {
  std::vector<std::size_t> order, stripes;
  for (std::size_t i = 0; i < arrows.size(); ++i) {
    const DrawnStroke s = shaft(f, arrows[i]);
    bool under = false;
    for (std::size_t j = i + 1; j < arrows.size() && !under; ++j)
      under = arrows[j].thickness > arrows[i].thickness + 0.5f &&
              (arrows[j].colour & 0xFFFFFFu) != (arrows[i].colour & 0xFFFFFFu) &&
              lie_on_each_other(s, shaft(f, arrows[j]));
    (under ? stripes : order).push_back(i);
  }
  order.insert(order.end(), stripes.begin(), stripes.end());
  return order;
}

// An arrow under another one, or on an axis of its colour, is lost to the class: the layout check reports it.
void report_hidden(const char* id, const Frame& f, std::span<const PlotArrow> arrows,
                   const std::vector<std::size_t>& order) {
  if (!LayoutCheckOn()) return;
  std::vector<DrawnStroke> shafts;
  for (std::size_t i : order) shafts.push_back(shaft(f, arrows[i]));
  const ImVec2 left = f.at(-f.x_extent, 0), right = f.at(f.x_extent, 0), bottom = f.at(0, -f.extent),
               top = f.at(0, f.extent);
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const std::vector<DrawnStroke> axes{{"the x axis", left.x, left.y, right.x, right.y, 1.5f, axis},
                                      {"the y axis", bottom.x, bottom.y, top.x, top.y, 1.5f, axis}};
  for (const std::string& found : hidden_strokes(shafts, axes))
    ReportHiddenHere(std::string("plot ") + id + ": " + found);
}

// Labels after every line: the axes' names, then the last arrows' (the ones that matter, drawn on top), the arcs',
// then the rest; a label that must be read and found no room is reported.
void place_labels(ImDrawList* dl, const char* id, Labels& labels, std::vector<LabelJob> first,
                  std::vector<LabelJob> arrow_jobs, std::vector<LabelJob> arc_jobs) {
  std::vector<LabelJob> order = std::move(first);
  const std::size_t chosen = std::min<std::size_t>(2, arrow_jobs.size());
  order.insert(order.end(), arrow_jobs.rbegin(), arrow_jobs.rbegin() + static_cast<std::ptrdiff_t>(chosen));
  order.insert(order.end(), arc_jobs.begin(), arc_jobs.end());
  order.insert(order.end(), arrow_jobs.rbegin() + static_cast<std::ptrdiff_t>(chosen), arrow_jobs.rend());
  for (const LabelJob& j : order)
    if (!j.text.empty() && !labels.draw(dl, j) && j.required)
      ReportHere(std::string("plot ") + id + ": no room for the label \"" + j.text + "\" clear of the lines");
}

}  // namespace

void VectorPlot(const char* id, std::span<const PlotArrow> arrows, std::span<const PlotArc> arcs,
                const VectorPlotOptions& opts) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = opts.size > 0 ? opts.size : std::max(80.0f, std::min(avail.x, avail.y));
  const float width = std::max(side, opts.width);
  const ImVec2 origin = ImGui::GetCursorScreenPos(), end{origin.x + width, origin.y + side};
  ImGui::InvisibleButton(id, {width, side});
  if (opts.page_plot) NoteChartPlotHere(std::string("plot ") + id, origin, end);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, end, true);
  const float margin = ImGui::GetFontSize() * 1.2f;  // room for the labels beyond the longest arrow
  const double extent = opts.extent > 0 ? opts.extent : 1.0;
  const float half = side / 2 - margin;
  const Frame f{{origin.x + width / 2, origin.y + side / 2}, half, extent, extent * (width / 2 - margin) / half};
  Labels labels{{origin, end}, {}, {}};
  std::vector<LabelJob> axis_jobs, arc_jobs;
  std::vector<std::optional<LabelJob>> arrow_jobs(arrows.size());
  axes(dl, f, opts, labels, axis_jobs);
  for (const PlotArc& a : arcs) arc_jobs.push_back(arc(dl, f, a, labels));
  const ImU32 page = ImGui::GetColorU32(ImGuiCol_WindowBg);
  for (const PlotArc& a : arcs)
    ReportLineContrastHere("arc \"" + a.label + "\" of plot " + id, seen_stroke(a.colour), page);
  const std::vector<std::size_t> order = drawing_order(f, arrows);
  for (std::size_t i : order) {
    const PlotArrow& a = arrows[i];
    const ImU32 colour = seen_stroke(a.colour);
    ReportLineContrastHere("arrow \"" + a.label + "\" of plot " + id, colour, page);
    arrow_jobs[i] = arrow(dl, f, a, colour);
    const DrawnStroke s = shaft(f, a);
    labels.strokes.push_back({{s.x0, s.y0}, {s.x1, s.y1}, a.thickness * 0.5f + 1.0f, a.thickness < 2.0f});
  }
  report_hidden(id, f, arrows, order);
  // Back in the arrows' order, so the last given (the ones that matter) are placed first.
  std::vector<LabelJob> given;
  for (const std::optional<LabelJob>& j : arrow_jobs)
    if (j) given.push_back(*j);
  place_labels(dl, id, labels, std::move(axis_jobs), std::move(given), std::move(arc_jobs));
  dl->PopClipRect();
}

}  // namespace attn::ui
