#include "ui/widgets/bar_chart.h"

#include "ui/widgets/picture_export.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ui/logic/layout_check.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

constexpr float kGap = 8.0f;

bool on_axis(double v, AxisScale s) { return std::isfinite(v) && (s == AxisScale::Linear || v > 0); }

// From 0 (or below the smallest positive value on a log axis) to the largest bar or reference line.
Axis value_axis(std::span<const Bar> bars, const BarChartOptions& opts) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto take = [&](double v) {
    if (!on_axis(v, opts.scale)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const Bar& b : bars) take(b.value);
  for (const ReferenceLine& r : opts.references) take(r.y);
  if (opts.axis_reach > 0) take(opts.axis_reach);
  if (hi < lo) return nice_axis(opts.scale == AxisScale::Linear ? 0 : 1, 10, opts.scale, opts.unit, "");
  if (opts.scale == AxisScale::Linear)
    return nice_axis(std::min(lo, 0.0), std::max(hi, 0.0), opts.scale, opts.unit, "");
  return nice_axis(lo / 4, hi, opts.scale, opts.unit, "");  // the shortest bar still two octaves long
}

// Black or white on the bar, whichever has the higher WCAG contrast with its fill: one of the two always reads at
// 4.5:1 (white on an orange or a pale green bar did not).
ImU32 text_on(ImU32 fill) {
  const ImU32 dark = IM_COL32(0, 0, 0, 255), light = IM_COL32(255, 255, 255, 255);
  const ImU32 opaque = fill | IM_COL32_A_MASK;
  return contrast_ratio(dark, opaque) >= contrast_ratio(light, opaque) ? dark : light;
}

struct RefLabel {
  float x;  // the line
  Box box;  // its label
  const ReferenceLine* ref;
};

constexpr float kLeaderRise = 10.0f;  // from a label moved aside down to its line

// Reference labels in one row under `top`, each centred over its line where it can be; lines closer than their labels
// are wide (24, 80 and 141 GB on a log axis) get their labels spread apart along the row in their order, each tied to
// its line by a short slanted leader, so every line keeps its name.
std::vector<RefLabel> place_reference_labels(std::span<const ReferenceLine> refs, const Axis& axis, float plot_x0,
                                             float plot_x1, float left, float right, float top) {
  const float h = ImGui::GetTextLineHeight(), gap = ImGui::CalcTextSize("0").x;
  std::vector<RefLabel> out;
  std::vector<float> want;
  float widest = 0;
  for (const ReferenceLine& r : refs) {
    if (!on_axis(r.y, axis.scale) || r.y < axis.lo || r.y > axis.hi) continue;
    const float x = plot_x0 + (plot_x1 - plot_x0) * static_cast<float>(axis_fraction(r.y, axis));
    out.push_back({x, {}, &r});
    want.push_back(x);
    widest = std::max(widest, TextWidth(r.label));
  }
  // Centres a label's width (and a character) apart, kept inside the widget.
  const std::vector<float> at = spread_labels(want, widest + gap, left + widest / 2, right - widest / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float w = TextWidth(out[i].ref->label);
    out[i].box = {at[i] - w / 2, top, at[i] + w / 2, top + h};
  }
  return out;
}

float header_height(const std::vector<RefLabel>& labels, float top) {
  float bottom = top;
  for (const RefLabel& l : labels) bottom = std::max(bottom, l.box.y1);
  return labels.empty() ? 0 : bottom - top + kLeaderRise + 2;
}

// Text on a backdrop of the window's colour, so a reference line behind it breaks instead of striking it.
void text_on_backdrop(ImDrawList* dl, ImVec2 at, ImU32 colour, const std::string& s) {
  const ImVec2 size = ImGui::CalcTextSize(s.c_str());
  dl->AddRectFilled({at.x - 2, at.y}, {at.x + size.x + 2, at.y + size.y}, ImGui::GetColorU32(ImGuiCol_WindowBg));
  dl->AddText(at, colour, s.c_str());
}

// Whether a label from x, w wide, would lie on one of the vertical lines at `lines` (with a few pixels' margin).
bool on_a_line(float x, float w, std::span<const float> lines) { return clear_of_lines(x, w, lines, 4) != x; }

// The value beyond the bar's end (inside it when there is no room, or when a reference line runs where it would be
// outside), then the note, shortened to fit; text that would still lie on a reference line moves on past it.
// Bars run right from `base`, or left for negative values, and their text follows them.
void draw_value_and_note(ImDrawList* dl, const Bar& b, float base, float end, float y, float left, float right,
                         NumberUnit unit, std::span<const float> lines) {
  const std::string value = format_value(b.value, unit);
  const float w = TextWidth(value);
  const bool rightward = end >= base;
  float outside = rightward ? end + 6 : end - 6 - w;
  const float inside = rightward ? end - 6 - w : end + 6;
  const bool fits_inside = std::abs(end - base) >= w + 12;
  const bool outside_fits = rightward ? outside + w <= right : outside >= left;
  bool in_bar = !outside_fits && fits_inside;
  if (rightward && outside_fits && on_a_line(outside, w, lines)) {
    if (fits_inside && !on_a_line(inside, w, lines)) in_bar = true;
    else if (const float moved = clear_of_lines(outside, w, lines, 4); moved + w <= right) outside = moved;
  }
  float note_x = 0;
  if (in_bar) {
    dl->AddText({inside, y}, text_on(b.colour), value.c_str());
    note_x = rightward ? end + 6 : 0;
  } else if (outside_fits) {
    text_on_backdrop(dl, {outside, y}, ImGui::GetColorU32(ImGuiCol_Text), value);
    note_x = rightward ? outside + w + kGap : 0;
  }
  if (b.note.empty() || note_x == 0) return;  // a negative bar's note is in its tooltip
  const float note_w = TextWidth(b.note), moved = clear_of_lines(note_x, note_w, lines, 4);
  if (moved + note_w <= right) note_x = moved;
  const std::string note = FitText(b.note, right - note_x);
  if (!note.empty()) text_on_backdrop(dl, {note_x, y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), note);
}

// The widest plot that still leaves each bar room for its value and note after its end, but never
// less than half of what there is (notes are shortened then), and room for the last tick label.
float plot_width(std::span<const Bar> bars, const Axis& axis, NumberUnit unit, float avail) {
  float width = avail - TextWidth(format_unit(axis.hi, unit)) / 2;
  for (const Bar& b : bars) {
    const float f =
        on_axis(b.value, axis.scale) ? static_cast<float>(std::clamp(axis_fraction(b.value, axis), 0.0, 1.0)) : 0;
    const float after =
        6 + TextWidth(format_value(b.value, unit)) + (b.note.empty() ? 0 : kGap + TextWidth(b.note)) + 2;
    if (f > 0) width = std::min(width, (avail - after) / f);
  }
  return std::max(width, avail / 2);
}

void bar_tooltip(const Bar& b, NumberUnit unit) {
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(b.label.c_str());
  ImGui::TextUnformatted(format_exact(b.value, unit).c_str());
  if (!b.note.empty()) ImGui::TextDisabled("%s", b.note.c_str());
  ImGui::EndTooltip();
}

}  // namespace

float BarChartHeight(std::size_t bars) {
  const float h = ImGui::GetTextLineHeight();
  return static_cast<float>(std::max<std::size_t>(bars, 1)) * (h + kBarRowPad) + kChartTickLength + kChartLabelGap + h;
}

void BarChart(const char* id, std::span<const Bar> bars, const BarChartOptions& opts) {
  ImGui::PushID(id);
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = opts.size.x > 0 ? opts.size.x : std::max(ImGui::GetContentRegionAvail().x, 200.0f);
  const float right = origin.x + width;
  const Axis axis = value_axis(bars, opts);

  // Left to right: labels (right-aligned), bars, each bar's value and note.
  float label_w = 0;
  for (const Bar& b : bars) label_w = std::max(label_w, TextWidth(b.label));
  const float x0 = origin.x + label_w + kGap;
  const float x1 = x0 + plot_width(bars, axis, opts.unit, right - x0);

  // Top to bottom: title, reference labels, one row per bar, the value axis.
  const float title_h = opts.title.empty() ? 0 : title_font_size() + 6;
  const std::vector<RefLabel> refs =
      place_reference_labels(opts.references, axis, x0, x1, origin.x, right, origin.y + title_h);
  const float bars_top = origin.y + title_h + header_height(refs, origin.y + title_h);
  const float axis_h = kChartTickLength + kChartLabelGap + h;
  const float n = static_cast<float>(std::max<std::size_t>(bars.size(), 1));
  float row_h = opts.size.y > 0 ? std::max(h + 4, (origin.y + opts.size.y - axis_h - bars_top) / n) : h + kBarRowPad;
  if (opts.max_height > 0)
    row_h = std::max(h + 4, std::min(row_h, (origin.y + opts.max_height - axis_h - bars_top) / n));
  const float bars_bottom = bars_top + row_h * n;
  const ImVec2 size{width, bars_bottom + axis_h - origin.y};

  ImGui::InvisibleButton("##bars", {std::max(size.x, 1.0f), std::max(size.y, 1.0f)});
  PictureMenu(opts.title.empty() ? id : opts.title.c_str(), origin, {origin.x + size.x, origin.y + size.y});
  const bool hovered = ImGui::IsItemHovered();
  if (x1 - x0 < 20) {  // too narrow to say anything
    ImGui::PopID();
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, {right, origin.y + size.y}, true);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  if (!opts.title.empty()) dl->AddText(title_font(), title_font_size(), origin, text, opts.title.c_str());
  DrawBottomAxis(dl, axis, axis_ticks(axis, BottomAxisTickBudget(axis, x1 - x0)), {x0, bars_top}, {x1, bars_bottom},
                 origin.x, right);

  // Bars, then the reference lines over them, then all text over both.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const auto px = [&](double v) {
    return x0 + (x1 - x0) * static_cast<float>(std::clamp(axis_fraction(v, axis), 0.0, 1.0));
  };
  const float base = px(opts.scale == AxisScale::Linear ? 0.0 : axis.lo);
  const auto row_mid = [&](std::size_t i) { return bars_top + row_h * (static_cast<float>(i) + 0.5f); };
  const float bar_h = std::min(row_h - 4, h + 4);
  int hovered_row = -1;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const float mid = row_mid(i);
    if (hovered && mouse.y >= mid - row_h / 2 && mouse.y < mid + row_h / 2) hovered_row = static_cast<int>(i);
    if (!on_axis(bars[i].value, opts.scale)) continue;
    const float end = px(bars[i].value);
    dl->AddRectFilled({std::min(base, end), mid - bar_h / 2}, {std::max(base, end), mid + bar_h / 2}, bars[i].colour,
                      2.0f);
  }
  dl->AddLine({base, bars_top}, {base, bars_bottom}, kChartFrame, 1.0f);
  dl->AddLine({x0, bars_bottom}, {x1, bars_bottom}, kChartFrame, 1.0f);
  std::vector<float> ref_x;
  for (const RefLabel& r : refs) {
    ref_x.push_back(r.x);
    const float mid = (r.box.x0 + r.box.x1) / 2, foot = r.box.y1 + kLeaderRise;
    dl->AddLine({mid, r.box.y1 + 1}, {r.x, foot}, ChartReferenceColour(), 1.5f);  // straight down when not moved
    AddDashedLine(dl, {r.x, foot}, {r.x, bars_bottom}, ChartReferenceColour(), kChartReferenceWidth);
    dl->AddText({r.box.x0, r.box.y0}, text, r.ref->label.c_str());
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const float y = row_mid(i) - h / 2;
    dl->AddText({x0 - kGap - TextWidth(b.label), y}, text, b.label.c_str());
    if (on_axis(b.value, opts.scale)) draw_value_and_note(dl, b, base, px(b.value), y, x0, right, opts.unit, ref_x);
  }
  if (hovered_row >= 0) {  // a light veil over the whole row, text backdrops included
    const float mid = row_mid(static_cast<std::size_t>(hovered_row));
    dl->AddRectFilled({origin.x, mid - row_h / 2}, {right, mid + row_h / 2}, IM_COL32(255, 255, 255, 18));
    bar_tooltip(bars[static_cast<std::size_t>(hovered_row)], opts.unit);
  }
  dl->PopClipRect();
  ImGui::PopID();
}

}  // namespace attn::ui
