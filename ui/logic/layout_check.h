#pragma once
// The layout check (--check-layout): what a class in front of a projector could not read. Widgets report
// what they know went wrong (a cell drawn without its value, a label shortened, a lesson outline with no
// cell under it); the text of the finished frame is scanned for glyphs cut off by their clip rectangle
// and for text drawn over other text. No window is needed here: the ImGui side (layout_check_frame.h)
// turns a frame's draw data into the glyph lists below.
#include <cstdint>
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
  // Its colour and what lies under its middle (0xAABBGGRR as ImGui packs them; 0: not known), and its font's
  // size in pixels: contrast is judged on these.
  std::uint32_t colour = 0, background = 0;
  float font_px = 0;
};

// The glyphs one window drew, in drawing order, and whether the window scrolls (text cut off at a
// scrolling edge is reachable, not lost).
struct DrawnText {
  std::string window;
  bool scrolls_x = false, scrolls_y = false;
  std::vector<DrawnGlyph> glyphs;
};

// Something a page or view is about, as drawn: where its panel shows it without scrolling decides whether a
// class sees it. Text at a scrolling edge is reachable for a user with a mouse, never for a class.
enum class SightKind {
  Outlined,  // a cell outlined strongly (a lesson page's, the selected one): always in sight
  Result,    // what the step makes (the term after "="): always
  Verdict,   // a check line ("✔ The same numbers ... (largest difference 0)"): the point of a lesson page
  Operand,   // a term of the step's formula on a lesson page: with a term cut off, "output = head 0 + head 1"
             // reads as "output = head 0", which is false
  Matrix,    // a matrix by its name: in sight when the lesson text names it ("row sleeps of concat")
};
struct SightItem {
  std::string window;  // "Decode"
  std::string name;    // "concat", "the check line"; for Matrix the name the lesson text would use
  std::string what;    // how a finding quotes it: "matrix concat [4×8]", "\"✔ The same numbers…\""
  SightKind kind = SightKind::Matrix;
  TextRect box;      // where it was drawn
  TextRect visible;  // the part of its panel in sight at the scroll state as drawn
};
void NoteSightItem(SightItem item);  // ignored while the check is off
std::vector<SightItem> TakeSightItems();

// A chart's plot (inside its axes) as drawn: on a lesson page a class reads a chart only when it is big enough.
struct ChartPlot {
  std::string window;  // "Memory"
  std::string title;   // "KV cache, bf16, batch 1"
  TextRect plot;
};
void NoteChartPlot(ChartPlot chart);  // ignored while the check is off
std::vector<ChartPlot> TakeChartPlots();
// Each chart whose plot is narrower than a third of the window's width or lower than a third of its height:
// "Memory: chart \"KV cache\" plots in 400×200 px, under a third of the 1280×720 window (427×240)".
// Charts of one window over the same x range (plots with the same left and right edges) are panels of one figure
// stacked over one axis: the figure must be a third high, each panel half that.
std::vector<std::string> charts_too_small(const std::vector<ChartPlot>& charts, float window_w, float window_h);

// Whether `text` names `name` as a word of its own ("concat" in "row sleeps of concat", not in "concatenated").
bool text_names(const std::string& text, const std::string& name);
// Each item that must be in sight and is not, or only in part: "Decode: \"✔ The same…\" cut by the bottom edge
// (14 of 50 px hidden)", "Pipeline: matrix W_O [8×8], which the lesson names, below the bottom edge".
std::vector<std::string> items_out_of_sight(const std::vector<SightItem>& items, const std::string& lesson_text);

// Runs of glyphs (a label, a line of a paragraph) cut off by their clip rectangle, and runs of one window
// drawn over other runs of it, each as a sentence naming the window and the text.
std::vector<std::string> text_problems(const std::vector<DrawnText>& windows);

// The WCAG 2 contrast ratio of two opaque colours (0xAABBGGRR): 1 (the same) to 21 (black on white).
double contrast_ratio(std::uint32_t a, std::uint32_t b);
// `top` drawn over `bottom` with its alpha (both 0xAABBGGRR; the result is opaque when `bottom` is).
std::uint32_t blend_over(std::uint32_t top, std::uint32_t bottom);
// Text a projector washes out: a run of glyphs whose colour against what lies under it falls below 4.5:1 (3:1 for
// text of 24 px and more), naming the window, the text, both colours and the ratio. Glyphs on an unknown
// background are not judged.
std::vector<std::string> contrast_problems(const std::vector<DrawnText>& windows);
// The same for a line, arc, marker or cell border a widget drew (3:1), registered while the check is on:
// "Train: line head 0.3 #E69F00 on #FFFFFF: 2.0:1, needs 3:1".
void NoteLineContrast(std::string window, std::string what, std::uint32_t colour, std::uint32_t background);
std::vector<std::string> TakeLineContrastProblems();

// A straight stroke as drawn (screen pixels): an arrow's shaft, a chart line's piece, an axis.
struct DrawnStroke {
  std::string name;  // how a finding quotes it: "arrow \"q the 0\"", "the y axis"
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float width = 1;
  std::uint32_t colour = 0;  // 0xAABBGGRR
};
// Whether two strokes lie on each other: one within the other's width (and a pixel) over at least half the shorter.
bool lie_on_each_other(const DrawnStroke& a, const DrawnStroke& b);
// Strokes a reader cannot tell apart, given in drawing order: one lying under a later stroke as wide or wider, or of
// nearly its colour ("arrow \"q the 0\" lies under arrow \"q the 3 before turn\""); one lying on a ground (an axis,
// drawn first) of nearly its colour ("... lies on the y axis"). A thinner stroke on a wider one of another colour
// shows as a stripe: told apart.
std::vector<std::string> hidden_strokes(const std::vector<DrawnStroke>& strokes,
                                        const std::vector<DrawnStroke>& grounds = {});
// Registered while the check is on, judged where what is in sight is (a small window crowds any plot).
void NoteHiddenStroke(std::string window, std::string what);
std::vector<std::string> TakeHiddenStrokes();

// Each decimal the lesson text quotes that the frame does not show in full besides the text itself (a number
// scrolled out of view or drawn at other decimals): "Lesson: the text quotes 0.748, not on screen".
std::vector<std::string> quotes_off_screen(const std::vector<DrawnText>& windows, const std::string& lesson_text);

}  // namespace attn::ui
