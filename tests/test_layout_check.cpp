// The layout check's logic on hand-made frames: glyph runs cut off or drawn over each other, and lesson quotes
// the screen does not show.
#include <doctest/doctest.h>

#include "ui/logic/layout_check.h"

using namespace attn::ui;

namespace {

// `text` as one line of 8x16 glyphs from (x, y), clipped to `clip`; a space draws no glyph.
void write(DrawnText& w, const std::string& text, float x, float y, TextRect clip = {0, 0, 1000, 1000}) {
  for (char c : text) {
    if (c != ' ') w.glyphs.push_back({static_cast<char32_t>(c), {x, y, x + 8, y + 16}, clip, y, false, x, x + 8});
    x += 8;
  }
}

}  // namespace

TEST_CASE("quoted decimals: cells, not column names or approximations -- a typographic minus as '-'") {
  const std::vector<std::string> q =
      quoted_decimals("gives 0.748 and \u22121.077; column h0.1, W_0.5, e \u2248 2.7, -0.3 and 12");
  CHECK(q == std::vector<std::string>{"0.748", "-1.077", "-0.3"});
}

TEST_CASE("a quote is on screen when the frame draws it in full more often than the text says it") {
  DrawnText lesson{"Lesson", false, true, {}}, pipeline{"Pipeline", false, true, {}};
  write(lesson, "head 0 gives 0.748 and 0.252", 10, 10);
  write(pipeline, "0.748", 300, 50);
  write(pipeline, "0.252", 300, 90, {0, 0, 1000, 100});  // cut off at the bottom: scrolled half out of view
  const std::string text = "Head 0 gives 0.748 and 0.252.";
  CHECK(quotes_off_screen({lesson, pipeline}, text) ==
        std::vector<std::string>{"Lesson: the text quotes 0.252, not on screen"});
  write(pipeline, "0.252", 400, 50);
  CHECK(quotes_off_screen({lesson, pipeline}, text).empty());
  // Quoted twice, shown once besides the text: still missing.
  CHECK(quotes_off_screen({lesson, pipeline}, text + " Again 0.748, and 0.748.") ==
        std::vector<std::string>{"Lesson: the text quotes 0.748, not on screen"});
  CHECK(quotes_off_screen({lesson, pipeline}, "").empty());
}

TEST_CASE("text problems: a run cut by its clip rectangle, and a run drawn over another") {
  DrawnText w{"Memory", false, false, {}};
  write(w, "24 GB", 10, 10);
  write(w, "80 GB", 20, 18);                     // half a line lower, over the first
  write(w, "table", 10, 100, {0, 0, 30, 1000});  // 40 px wide in a 30 px column
  CHECK(text_problems({w}) ==
        std::vector<std::string>{"Memory: \"24 GB\" drawn over \"80 GB\"", "Memory: text cut off: \"table\""});
  w.scrolls_x = true;  // cut at a scrolling edge: reachable, not lost
  CHECK(text_problems({w}) == std::vector<std::string>{"Memory: \"24 GB\" drawn over \"80 GB\""});
}
