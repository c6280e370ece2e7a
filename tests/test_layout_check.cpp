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

TEST_CASE("a matrix is named by the lesson text as a word of its own") {
  CHECK(text_names("row \"sleeps\" of concat times column 0 of W_O", "concat"));
  CHECK(text_names("row \"sleeps\" of concat times column 0 of W_O", "W_O"));
  CHECK(text_names("(W_O) mixes them", "W_O"));
  CHECK(text_names("q k\u1D40 / \u221Ad", "q k\u1D40"));
  CHECK_FALSE(text_names("the concatenated heads", "concat"));
  CHECK_FALSE(text_names("W_OV is their product", "W_O"));
  CHECK_FALSE(text_names("anything", ""));
}

TEST_CASE("what a page is about must be in sight: outside its panel's visible part, or cut by an edge, is a finding") {
  const TextRect panel{0, 40, 1000, 500};
  const auto item = [&](SightKind kind, std::string name, TextRect box) {
    return SightItem{"Decode", name, kind == SightKind::Matrix ? "matrix " + name : "\"\u2714 The same\"",
                     kind,     box,  panel};
  };
  // The check line 14 px into the bottom edge, then wholly below it; a frame touching the edge is in sight.
  const std::string page = "the green line says so";
  CHECK(items_out_of_sight({item(SightKind::Verdict, "the check line", {10, 470, 800, 514})}, page) ==
        std::vector<std::string>{"Decode: \"\u2714 The same\" cut by the bottom edge (14 of 44 px hidden)"});
  CHECK(items_out_of_sight({item(SightKind::Verdict, "the check line", {10, 520, 800, 564})}, page) ==
        std::vector<std::string>{"Decode: \"\u2714 The same\" below the bottom edge"});
  CHECK(items_out_of_sight({item(SightKind::Verdict, "the check line", {-0.5f, 39.5f, 800, 500.5f})}, page).empty());
  // Without a lesson a view's check line may lie where its user scrolls; an outlined cell or a result may not.
  CHECK(items_out_of_sight({item(SightKind::Verdict, "the check line", {10, 520, 800, 564})}, "").empty());
  // A term of the step's formula cut off on a lesson page makes the formula say something else; in a view it scrolls.
  CHECK(items_out_of_sight({item(SightKind::Operand, "head 1", {10, 480, 300, 600})}, page) ==
        std::vector<std::string>{"Decode: \"\u2714 The same\" cut by the bottom edge (100 of 120 px hidden)"});
  CHECK(items_out_of_sight({item(SightKind::Operand, "head 1", {10, 480, 300, 600})}, "").empty());
  CHECK(items_out_of_sight({item(SightKind::Outlined, "output", {10, 0, 50, 30})}, "") ==
        std::vector<std::string>{"Decode: \"\u2714 The same\" above the top edge"});
  // A matrix counts only when the lesson names it, and one copy in sight is enough.
  const SightItem w_o = item(SightKind::Matrix, "W_O", {10, 400, 400, 740});
  CHECK(items_out_of_sight({w_o}, "a page about q").empty());
  CHECK(items_out_of_sight({w_o}, "column 0 of W_O") ==
        std::vector<std::string>{
            "Decode: matrix W_O, which the lesson names, cut by the bottom edge (240 of 340 px hidden)"});
  CHECK(items_out_of_sight({w_o, item(SightKind::Matrix, "W_O", {500, 50, 900, 390})}, "column 0 of W_O").empty());
  // A matrix titled by its symbol and a description is named by the symbol alone.
  const SightItem indexer = item(SightKind::Matrix, "I (indexer)", {10, 400, 400, 520});
  CHECK(items_out_of_sight({indexer}, "The left heatmap is I; the right one marks each query's top 2").size() == 1);
  CHECK(items_out_of_sight({indexer}, "In the indexer, each head").empty());
  CHECK(items_out_of_sight({item(SightKind::Result, "output", {900, 50, 1100, 200})}, "") ==
        std::vector<std::string>{"Decode: \"\u2714 The same\" cut by the right edge (100 of 200 px hidden)"});
}

TEST_CASE("contrast: WCAG 2 ratios, text under 4.5:1 (3:1 from 24 px) and lines under 3:1 are findings") {
  CHECK(contrast_ratio(0xFFFFFFFFu, 0xFF000000u) == doctest::Approx(21.0));
  // Amber (#E69F00) on white: 2.25:1; the deep orange #A04B00 on #F5F5F5: 5.5:1.
  CHECK(contrast_ratio(0xFF009FE6u, 0xFFFFFFFFu) == doctest::Approx(2.252).epsilon(0.001));
  CHECK(contrast_ratio(0xFF004BA0u, 0xFFF5F5F5u) == doctest::Approx(5.5).epsilon(0.01));
  CHECK(blend_over(0x80FFFFFFu, 0xFF000000u) == 0xFF808080u);
  DrawnText w{"Train", false, false, {}};
  write(w, "head 0.3", 10, 10);
  for (DrawnGlyph& g : w.glyphs) g.colour = 0xFF42E4F0u, g.background = 0xFFFFFFFFu, g.font_px = 16;
  write(w, "head 1.0", 10, 40);
  for (std::size_t i = 7; i < w.glyphs.size(); ++i)
    w.glyphs[i].colour = 0xFF000000u, w.glyphs[i].background = 0xFFFFFFFFu, w.glyphs[i].font_px = 16;
  CHECK(contrast_problems({w}) ==
        std::vector<std::string>{"Train: text \"head 0.3\" #F0E442 on #FFFFFF: contrast 1.3:1, needs 4.5:1"});
  for (DrawnGlyph& g : w.glyphs) g.font_px = 24;  // large text needs 3:1, which the yellow still misses
  CHECK(contrast_problems({w}) ==
        std::vector<std::string>{"Train: text \"head 0.3\" #F0E442 on #FFFFFF: contrast 1.3:1, needs 3.0:1"});
  for (DrawnGlyph& g : w.glyphs) g.background = 0;  // on a picture: not judged
  CHECK(contrast_problems({w}).empty());
  SetLayoutCheck(true);
  NoteLineContrast("Memory", "line MQA", 0xFF4FA159u, 0xFFF5F7F7u);
  NoteLineContrast("Memory", "line MHA", 0xFF5957E1u, 0xFF31282Au);
  SetLayoutCheck(false);
  CHECK(TakeLineContrastProblems() ==
        std::vector<std::string>{"Memory: line MQA #59A14F on #F7F7F5: contrast 2.9:1, needs 3.0:1"});
}

TEST_CASE("covering: a stroke under a later one as wide, or of its colour, or on an axis of its colour, is a finding") {
  const std::uint32_t blue = 0xFFE9B456u, orange = 0xFF009FE6u, grey = 0xFF808080u;
  const DrawnStroke q0{"arrow \"q the 0\"", 100, 100, 95, 30, 1.5f, blue};
  const DrawnStroke before{"arrow \"q the 3 before turn\"", 100, 100, 95, 30, 2.0f, blue};
  CHECK(hidden_strokes({q0, before}) ==
        std::vector<std::string>{"arrow \"q the 0\" lies under arrow \"q the 3 before turn\""});
  // A thin stroke of another colour over a wide one shows as a stripe; the same colour does not.
  const DrawnStroke k0{"arrow \"k the 0\"", 100, 100, 95, 30, 3.5f, orange};
  CHECK(hidden_strokes({q0, k0}) == std::vector<std::string>{"arrow \"q the 0\" lies under arrow \"k the 0\""});
  CHECK(hidden_strokes({k0, q0}).empty());
  CHECK(hidden_strokes({before, q0}) ==
        std::vector<std::string>{"arrow \"q the 3 before turn\" lies under arrow \"q the 0\""});
  // 3 px off at the tip: within 1.75 px of the axis over 58% of its length; 5 px off: 35%, told apart.
  const DrawnStroke axis{"the y axis", 100, 200, 100, 0, 1.5f, grey};
  const DrawnStroke upright{"a grey line", 100, 100, 97, 30, 1.5f, 0xFF858585u};
  CHECK(hidden_strokes({upright}, {axis}) == std::vector<std::string>{"a grey line lies on the y axis"});
  const DrawnStroke off{"a grey line", 100, 100, 95, 30, 1.5f, 0xFF858585u};
  CHECK(hidden_strokes({off}, {axis}).empty());
  CHECK(hidden_strokes({DrawnStroke{"arrow \"q cat\"", 100, 100, 97, 30, 1.5f, blue}}, {axis}).empty());
  CHECK(hidden_strokes({DrawnStroke{"a darker line", 100, 100, 97, 30, 1.5f, 0xFF606060u}}, {axis}).empty());
  // Crossing, or parallel 4 px apart: told apart. A short stroke along a long one lies on it.
  CHECK_FALSE(lie_on_each_other(q0, {"", 60, 60, 140, 60, 3.5f, orange}));
  CHECK_FALSE(lie_on_each_other(q0, {"", 104, 100, 99, 30, 1.5f, blue}));
  CHECK(lie_on_each_other(q0, {"", 100, 100, 97.5f, 65, 1.5f, blue}));
}

TEST_CASE("a lesson page's chart needs a third of the window each way: smaller plots are findings") {
  const std::vector<ChartPlot> charts{{"Memory", "KV cache, bf16, batch 1", {100, 50, 527, 290}},  // 427 x 240
                                      {"Cost", "Attention FLOPs", {0, 0, 400, 300}},
                                      {"Train", "Loss", {0, 0, 500, 200}}};
  CHECK(
      charts_too_small(charts, 1280, 720) ==
      std::vector<std::string>{
          "Cost: chart \"Attention FLOPs\" plots in 400\u00D7300 px, under a third of the 1280\u00D7720 window "
          "(427\u00D7240)",
          "Train: chart \"Loss\" plots in 500\u00D7200 px, under a third of the 1280\u00D7720 window (427\u00D7240)"});
  CHECK(charts_too_small(charts, 900, 600).empty());
  // Two panels stacked over one x range read as one figure: 130 + 130 px make the third of 720; 110 is under half.
  const std::vector<ChartPlot> stacked{{"Train", "Loss", {50, 100, 750, 230}},
                                       {"Train", "Scores", {50, 300, 750, 430}}};
  CHECK(charts_too_small(stacked, 1280, 720).empty());
  const std::vector<ChartPlot> uneven{{"Train", "Loss", {50, 100, 750, 250}}, {"Train", "Scores", {50, 300, 750, 410}}};
  CHECK(charts_too_small(uneven, 1280, 720) ==
        std::vector<std::string>{"Train: chart \"Scores\" plots in 700\u00D7110 px, under a third of the 1280\u00D7720 "
                                 "window (427\u00D7240)"});
  const std::vector<ChartPlot> apart{{"Train", "Loss", {50, 100, 750, 230}}, {"Train", "Scores", {60, 300, 750, 430}}};
  CHECK(charts_too_small(apart, 1280, 720).size() == 2);  // not over one x range: each judged alone
  SetLayoutCheck(false);
  NoteChartPlot(charts[0]);
  CHECK(TakeChartPlots().empty());  // nothing kept while the check is off
  SetLayoutCheck(true);
  NoteChartPlot(charts[0]);
  CHECK(TakeChartPlots().size() == 1);
  CHECK(TakeChartPlots().empty());
  SetLayoutCheck(false);
}
