#include "ui/logic/layout_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <utility>

namespace attn::ui {
namespace {

bool g_on = false;
std::vector<std::string>& reports() {
  static std::vector<std::string> r;
  return r;
}
std::string& lesson_text() {
  static std::string text;
  return text;
}
std::vector<std::pair<int, int>>& outlined() {
  static std::vector<std::pair<int, int>> cells;
  return cells;
}

// A run: glyphs drawn one after another on one line under one clip rectangle (a label, a line of a paragraph).
struct Run {
  std::string text;
  std::vector<TextRect> visible;  // each glyph's part inside its clip rectangle
  TextRect box;                   // around every glyph, visible or not
  bool cut_x = false, cut_y = false;
};

void append_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool same_clip(const TextRect& a, const TextRect& b) {
  return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
}

TextRect intersect(const TextRect& a, const TextRect& b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

// More than a pixel of overlap both ways: glyphs of neighbouring labels may touch, never cover each other.
bool overlaps(const TextRect& a, const TextRect& b) {
  const TextRect i = intersect(a, b);
  return i.x1 - i.x0 > 1.0f && i.y1 - i.y0 > 1.0f;
}

std::vector<Run> runs_of(const DrawnText& w) {
  std::vector<Run> runs;
  const DrawnGlyph* prev = nullptr;
  float height = 0;  // from the line's top to the lowest glyph bottom so far: a stand-in for the font size
  for (const DrawnGlyph& g : w.glyphs) {
    const float gap = prev ? g.box.x0 - prev->box.x1 : 0.0f;
    // Measured with this glyph too: a run that starts with a flat "-" has no height of its own yet.
    const float h = std::max(height, g.box.y1 - g.line_top);
    const bool joins = prev && std::abs(g.line_top - prev->line_top) <= 1.0f && same_clip(g.clip, prev->clip) &&
                       g.box.x0 >= prev->box.x0 - 1.0f && gap <= 2.5f * std::max(h, 1.0f);
    if (!joins) {
      runs.push_back({});
      runs.back().box = g.box;
      height = 0;
    }
    Run& r = runs.back();
    if (joins && g.pen_x0 > prev->pen_x1 + 0.5f) r.text += ' ';  // spaces draw no glyph, but move the pen
    append_utf8(r.text, g.codepoint);
    height = std::max(height, g.box.y1 - g.line_top);
    r.box = {std::min(r.box.x0, g.box.x0), std::min(r.box.y0, g.box.y0), std::max(r.box.x1, g.box.x1),
             std::max(r.box.y1, g.box.y1)};
    const TextRect v = intersect(g.box, g.clip);
    if (v.x1 > v.x0 && v.y1 > v.y0) r.visible.push_back(v);
    r.cut_x = r.cut_x || g.cut || g.box.x0 < g.clip.x0 - 1.0f || g.box.x1 > g.clip.x1 + 1.0f;
    r.cut_y = r.cut_y || g.box.y0 < g.clip.y0 - 1.0f || g.box.y1 > g.clip.y1 + 1.0f;
    prev = &g;
  }
  return runs;
}

bool runs_overlap(const Run& a, const Run& b) {
  if (!overlaps(a.box, b.box)) return false;
  for (const TextRect& x : a.visible)
    for (const TextRect& y : b.visible)
      if (overlaps(x, y)) return true;
  return false;
}

}  // namespace

void SetLayoutCheck(bool on) { g_on = on; }
bool LayoutCheckOn() { return g_on; }

void ReportLayoutProblem(std::string where, std::string what) {
  if (g_on) reports().push_back(std::move(where) + ": " + std::move(what));
}

std::vector<std::string> TakeLayoutReports() { return std::exchange(reports(), {}); }

void NoteOutlinedCell(int row, int col) {
  if (g_on) outlined().emplace_back(row, col);
}
std::vector<std::pair<int, int>> TakeOutlinedCells() { return std::exchange(outlined(), {}); }

void NoteLessonText(std::string text) {
  if (g_on) lesson_text() = std::move(text);
}
std::string TakeLessonText() { return std::exchange(lesson_text(), {}); }

std::vector<std::string> quoted_decimals(const std::string& text) {
  static const std::regex number("(\u2212|-)?[0-9]+\\.[0-9]+");
  static const std::string minus = "\u2212", approx = "\u2248";
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    const std::size_t at = static_cast<std::size_t>(it->position());
    const std::string before = text.substr(at >= 4 ? at - 4 : 0, at >= 4 ? 4 : at);
    if ((at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) ||
        before.find(approx) != std::string::npos)
      continue;
    std::string quoted = it->str();
    if (quoted.starts_with(minus)) quoted = "-" + quoted.substr(minus.size());
    out.push_back(std::move(quoted));
  }
  return out;
}

std::vector<std::string> quotes_off_screen(const std::vector<DrawnText>& windows, const std::string& lesson_text) {
  // Numbers drawn in full anywhere, the lesson's own text included: a quote is on screen when the frame shows
  // it more often than the text says it.
  std::map<std::string, int> drawn, quoted;
  for (const DrawnText& w : windows)
    for (const Run& r : runs_of(w))
      if (!r.cut_x && !r.cut_y)
        for (const std::string& n : quoted_decimals(r.text)) ++drawn[n];
  for (const std::string& n : quoted_decimals(lesson_text)) ++quoted[n];
  std::vector<std::string> found;
  for (const auto& [n, times] : quoted)
    if (drawn[n] <= times) found.push_back("Lesson: the text quotes " + n + ", not on screen");
  return found;
}

std::vector<std::string> text_problems(const std::vector<DrawnText>& windows) {
  std::set<std::string> found;  // sorted, each once
  for (const DrawnText& w : windows) {
    const std::vector<Run> runs = runs_of(w);
    for (const Run& r : runs)
      if ((r.cut_x && !w.scrolls_x) || (r.cut_y && !w.scrolls_y))
        found.insert(w.window + ": text cut off: \"" + r.text + "\"");
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t j = i + 1; j < runs.size(); ++j)
        if (runs_overlap(runs[i], runs[j]))
          found.insert(w.window + ": \"" + runs[i].text + "\" drawn over \"" + runs[j].text + "\"");
  }
  return {found.begin(), found.end()};
}

}  // namespace attn::ui
