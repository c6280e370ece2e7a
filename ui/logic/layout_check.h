#pragma once
// The layout check (--check-layout): what a class in front of a projector could not read. Widgets report
// what they know went wrong (a cell drawn without its value, a label shortened, a lesson outline with no
// cell under it); the text of the finished frame is scanned for glyphs cut off by their clip rectangle
// and for text drawn over other text. No window is needed here: the ImGui side (layout_check_frame.h)
// turns a frame's draw data into the glyph lists below.
#include <string>
#include <utility>
#include <vector>

namespace attn::ui {

// On only while checking, so the widgets' reports cost nothing otherwise.
void SetLayoutCheck(bool on);
bool LayoutCheckOn();
// "Pipeline: scores [3×3]: cell (1, 2) -0.037 shows nothing". Ignored while the check is off.
void ReportLayoutProblem(std::string where, std::string what);
// What was reported since the last call, emptied.
std::vector<std::string> TakeLayoutReports();
// The cells heatmaps outlined strongly (a lesson's highlighted cells must be among them); emptied by Take.
void NoteOutlinedCell(int row, int col);
std::vector<std::pair<int, int>> TakeOutlinedCells();

// The decimals a lesson's text quotes ("0.748"; "−1.077" as "-1.077"), in order: not one right after a letter or
// '_' (the column h0.1) or after "≈" (e ≈ 2.7), which name or approximate rather than quote a cell.
std::vector<std::string> quoted_decimals(const std::string& text);
// The lesson text on screen, noted by the lesson panel while the check is on; emptied by Take.
void NoteLessonText(std::string text);
std::string TakeLessonText();

struct TextRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// One glyph as drawn: its quad, the clip rectangle it was drawn under, and the top of its line of text.
struct DrawnGlyph {
  char32_t codepoint = 0;
  TextRect box, clip;
  float line_top = 0;
  bool cut = false;              // clipped at the right on the CPU already (its texture coordinates were shortened)
  float pen_x0 = 0, pen_x1 = 0;  // where the pen stood before and after it: a wider step between glyphs is a space
};

// The glyphs one window drew, in drawing order, and whether the window scrolls (text cut off at a
// scrolling edge is reachable, not lost).
struct DrawnText {
  std::string window;
  bool scrolls_x = false, scrolls_y = false;
  std::vector<DrawnGlyph> glyphs;
};

// Runs of glyphs (a label, a line of a paragraph) cut off by their clip rectangle, and runs of one window
// drawn over other runs of it, each as a sentence naming the window and the text.
std::vector<std::string> text_problems(const std::vector<DrawnText>& windows);

// Each decimal the lesson text quotes that the frame does not show in full besides the text itself (a number
// scrolled out of view or drawn at other decimals): "Lesson: the text quotes 0.748, not on screen".
std::vector<std::string> quotes_off_screen(const std::vector<DrawnText>& windows, const std::string& lesson_text);

}  // namespace attn::ui
