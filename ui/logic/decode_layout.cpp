#include "ui/logic/decode_layout.h"

#include <algorithm>

namespace attn::ui {

namespace {

// Filled as text wraps: as many terms a line as fit.
std::vector<FlowBreak> greedy_breaks(std::span<const float> widths, std::span<const float> op_widths,
                                     std::span<const float> lead_widths, const std::vector<bool>& joined, float avail,
                                     std::span<const float> first_widths) {
  const std::size_t n = widths.size();
  const auto is_joined = [&](std::size_t i) { return i < joined.size() && joined[i]; };
  std::vector<FlowBreak> lines;
  for (std::size_t first = 0; first < n;) {
    float used = (first > 0 ? lead_widths[first - 1] : 0.0f) + (first_widths.empty() ? widths : first_widths)[first];
    std::size_t last = first + 1;
    for (; last < n; ++last) {
      const float more = op_widths[last - 1] + widths[last];
      if (used + more > avail) break;
      used += more;
    }
    if (last < n && is_joined(last)) {
      std::size_t start = last;  // the first term of the group the break would split
      while (start > first && is_joined(start)) --start;
      if (start > first) last = start;  // the whole group moves to the next line
      else
        while (last < n && is_joined(last)) ++last;  // the group is the line: it stays whole, wider than the line
    }
    lines.push_back({first, last});
    first = last;
  }
  return lines;
}

}  // namespace

std::vector<FlowBreak> flow_breaks(std::span<const float> widths, std::span<const float> op_widths,
                                   std::span<const float> lead_widths, const std::vector<bool>& joined, float avail,
                                   std::span<const float> first_widths) {
  const std::vector<FlowBreak> lines = greedy_breaks(widths, op_widths, lead_widths, joined, avail, first_widths);
  if (lines.size() < 2) return lines;
  // As even as that many lines allow: filled at the narrowest width that needs no more of them (four heads in two
  // lines of two, not three and one left alone under the first).
  float lo = 0.0f, hi = avail;
  for (int k = 0; k < 24; ++k) {
    const float mid = (lo + hi) / 2;
    (greedy_breaks(widths, op_widths, lead_widths, joined, mid, first_widths).size() <= lines.size() ? hi : lo) = mid;
  }
  return greedy_breaks(widths, op_widths, lead_widths, joined, hi, first_widths);
}

namespace {

// The height of the sections with `open` at candidate cell c, over the header.
float stack_height(const SectionFitInput& in, std::size_t c, const std::vector<bool>& open) {
  float h = in.top;
  for (std::size_t s = 0; s < in.folded_h.size(); ++s) h += open[s] ? in.open_h[c][s] : in.folded_h[s];
  return h;
}

// The largest candidate cell at which the sections with `open` fit, if any.
bool largest_fitting(const SectionFitInput& in, const std::vector<bool>& open, std::size_t& cell) {
  for (std::size_t c = 0; c < in.open_h.size(); ++c)
    if (stack_height(in, c, open) <= in.view_h) {
      cell = c;
      return true;
    }
  return false;
}

}  // namespace

SectionFit fit_sections(const SectionFitInput& in) {
  const std::size_t n = in.folded_h.size();
  SectionFit fit;
  if (in.open_h.empty() || n == 0) return fit;
  const std::size_t smallest = in.open_h.size() - 1;
  fit.open.assign(n, true);
  if (largest_fitting(in, fit.open, fit.cell)) return fit;
  if (in.focus < 0) {
    fit.cell = smallest;  // shrink before scrolling
    return fit;
  }
  const auto focus = static_cast<std::size_t>(std::min<int>(in.focus, static_cast<int>(n) - 1));
  std::vector<bool> required(n, false);
  std::vector<std::size_t> optional;  // the preferred, then the nearest the focus first
  const std::size_t last = in.focus_last < 0 ? n - 1 : std::clamp<std::size_t>(in.focus_last, focus, n - 1);
  for (std::size_t s = 0; s < n; ++s)
    required[s] = (s >= focus && s <= last) || (s < in.forced_open.size() && in.forced_open[s]);
  const auto preferred = static_cast<std::size_t>(in.preferred);
  if (in.preferred >= 0 && preferred < focus && !required[preferred]) optional.push_back(preferred);
  for (std::size_t s = focus; s-- > 0;)
    if (!required[s] && !(in.preferred >= 0 && s == preferred)) optional.push_back(s);
  for (std::size_t s = last + 1; s < n; ++s)
    if (!required[s]) optional.push_back(s);
  // Cells shrink before anything folds: a section opens where it fits at the smallest cell.
  fit.open = required;
  for (const std::size_t s : optional) {
    fit.open[s] = true;
    if (stack_height(in, smallest, fit.open) > in.view_h) fit.open[s] = false;
  }
  if (largest_fitting(in, fit.open, fit.cell)) return fit;
  fit.cell = smallest;
  float focus_top = in.top;
  for (std::size_t s = 0; s < focus; ++s) focus_top += fit.open[s] ? in.open_h[smallest][s] : in.folded_h[s];
  fit.scroll = std::clamp(stack_height(in, smallest, fit.open) - in.view_h, 0.0f, focus_top);
  return fit;
}

}  // namespace attn::ui
