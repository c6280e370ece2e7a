#include "ui/widgets/vector_plot.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <imgui_internal.h>

#include "ui/logic/colormap.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/line_chart.h"

namespace attn::ui {
namespace {

// Where labels went: a new one moves up or down until it overlaps none of them; one that finds no room is left out
// (the labels that matter are placed first).
struct Labels {
  ImRect inside;
  std::vector<ImRect> taken;
  bool place(ImVec2& at, ImVec2 size) {
    const ImVec2 first = at;
    for (int tries = 0; tries < 7; ++tries) {
      at.x = std::clamp(at.x, inside.Min.x, inside.Max.x - size.x);
      at.y = std::clamp(at.y, inside.Min.y, inside.Max.y - size.y);
      const ImRect r{at, {at.x + size.x, at.y + size.y}};
      if (std::none_of(taken.begin(), taken.end(), [&](const ImRect& o) { return o.Overlaps(r); })) {
        taken.push_back(r);
        return true;
      }
      // Alternately below and above the first place, a line further each time.
      at = first;
      at.y += (tries % 2 == 0 ? 1.0f : -1.0f) * static_cast<float>(tries / 2 + 1) * (size.y + 2);
    }
    return false;
  }
  void draw(ImDrawList* dl, ImVec2 at, ImU32 colour, const std::string& text) {
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    if (!place(at, size)) return;
    // On the page's colour: an arrow or arc passing under a label would cut through its letters.
    const ImU32 page = ImGui::GetColorU32(ImGuiCol_WindowBg);
    dl->AddRectFilled({at.x - 2, at.y}, {at.x + size.x + 2, at.y + size.y}, page, 2.0f);
    // A faded arrow's label is still read: its colour, as it shows on the page, made legible there.
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(colour), p = ImGui::ColorConvertU32ToFloat4(page);
    const Rgb shown{c.x * c.w + p.x * (1 - c.w), c.y * c.w + p.y * (1 - c.w), c.z * c.w + p.z * (1 - c.w)};
    dl->AddText(at, pack(legible_on(shown, {p.x, p.y, p.z}, 4.5)), text.c_str());
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

void axes(ImDrawList* dl, const Frame& f, const VectorPlotOptions& o, Labels& labels) {
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.5f), axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int across = static_cast<int>(std::floor(f.x_extent / f.extent * 4.0 + 1e-9));
  for (int i = -across; i <= across; ++i) {  // quarters of the extent, as far as the plot is wide
    const double v = f.extent * i / 4.0;
    dl->AddLine(f.at(v, -f.extent), f.at(v, f.extent), i == 0 ? axis : grid, i == 0 ? 1.5f : 1.0f);
    if (std::abs(i) <= 4)
      dl->AddLine(f.at(-f.x_extent, v), f.at(f.x_extent, v), i == 0 ? axis : grid, i == 0 ? 1.5f : 1.0f);
  }
  const ImVec2 x_end = f.at(f.x_extent, 0), y_end = f.at(0, f.extent);
  const ImVec2 xs = ImGui::CalcTextSize(o.x_label);
  labels.draw(dl, {x_end.x - xs.x - 2, x_end.y + 2}, axis, o.x_label);
  labels.draw(dl, {y_end.x + 4, y_end.y}, axis, o.y_label);
}

// The arrow itself; returns where its label would go (beyond the tip, centred on its line, so a label never
// covers its own arrow), or nothing for an arrow too short to draw.
std::optional<ImVec2> arrow(ImDrawList* dl, const Frame& f, const PlotArrow& a) {
  const ImVec2 o = f.at(0, 0), tip = f.at(a.x, a.y);
  const float length = std::hypot(tip.x - o.x, tip.y - o.y);
  if (length < 1.0f) return std::nullopt;
  const ImVec2 u{(tip.x - o.x) / length, (tip.y - o.y) / length}, n{-u.y, u.x};
  const float head = std::min(length * 0.4f, 8.0f + 2.0f * a.thickness);
  const ImVec2 base{tip.x - u.x * head, tip.y - u.y * head};
  static constexpr float kDash[] = {7.0f, 7.0f};
  const ImVec2 shaft[] = {o, base};
  if (a.dashed) AddPatternedPolyline(dl, shaft, a.colour, a.thickness, kDash);
  else dl->AddLine(o, base, a.colour, a.thickness);
  const float w = head * 0.45f;
  dl->AddTriangleFilled(tip, {base.x + n.x * w, base.y + n.y * w}, {base.x - n.x * w, base.y - n.y * w}, a.colour);
  const ImVec2 ts = ImGui::CalcTextSize(a.label.c_str());
  return ImVec2{tip.x + u.x * (ts.x * 0.5f + 6) - ts.x * 0.5f, tip.y + u.y * (ts.y * 0.5f + 4) - ts.y * 0.5f};
}

// The arc; returns where its label would go, just outside the arc's middle.
ImVec2 arc(ImDrawList* dl, const Frame& f, const PlotArc& a) {
  const ImVec2 o = f.at(0, 0);
  const float r = a.radius * f.half;
  // Screen y points down: an angle counter-clockwise in the data is clockwise on screen.
  dl->PathArcTo(o, r, static_cast<float>(-a.from), static_cast<float>(-a.to), 32);
  dl->PathStroke(a.colour, 0, 2.0f);
  const double mid = (a.from + a.to) / 2;
  const ImVec2 ts = ImGui::CalcTextSize(a.label.c_str());
  return {o.x + static_cast<float>(std::cos(mid)) * (r + 6 + ts.x * 0.5f) - ts.x * 0.5f,
          o.y - static_cast<float>(std::sin(mid)) * (r + 4 + ts.y * 0.5f) - ts.y * 0.5f};
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

}  // namespace

void VectorPlot(const char* id, std::span<const PlotArrow> arrows, std::span<const PlotArc> arcs,
                const VectorPlotOptions& opts) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float side = opts.size > 0 ? opts.size : std::max(80.0f, std::min(avail.x, avail.y));
  const float width = std::max(side, opts.width);
  const ImVec2 origin = ImGui::GetCursorScreenPos(), end{origin.x + width, origin.y + side};
  ImGui::InvisibleButton(id, {width, side});
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, end, true);
  const float margin = ImGui::GetFontSize() * 1.2f;  // room for the labels beyond the longest arrow
  const double extent = opts.extent > 0 ? opts.extent : 1.0;
  const float half = side / 2 - margin;
  const Frame f{{origin.x + width / 2, origin.y + side / 2}, half, extent, extent * (width / 2 - margin) / half};
  Labels labels{{origin, end}, {}};
  axes(dl, f, opts, labels);
  std::vector<std::optional<ImVec2>> arrow_labels;
  std::vector<ImVec2> arc_labels;
  for (const PlotArc& a : arcs) arc_labels.push_back(arc(dl, f, a));
  arrow_labels.resize(arrows.size());
  const std::vector<std::size_t> order = drawing_order(f, arrows);
  for (std::size_t i : order) arrow_labels[i] = arrow(dl, f, arrows[i]);
  report_hidden(id, f, arrows, order);
  // Labels after every line, the last arrows' (the ones that matter, drawn on top) placed first.
  for (std::size_t i = arrows.size(); i-- > 0;)
    if (arrow_labels[i] && !arrows[i].label.empty())
      labels.draw(dl, *arrow_labels[i], arrows[i].colour, arrows[i].label);
  for (std::size_t i = 0; i < arcs.size(); ++i)
    if (!arcs[i].label.empty()) labels.draw(dl, arc_labels[i], arcs[i].colour, arcs[i].label);
  dl->PopClipRect();
}

}  // namespace attn::ui
