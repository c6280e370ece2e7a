// Focus: which rows and columns a lesson page's matrices keep when they cannot all be drawn readable, the elided ones
// as one slot per run; and the matrix and labels drawn from those slots.
#include <filesystem>
#include <string>
#include <vector>

#include "helpers.h"
#include "ui/logic/focus.h"
#include "ui/logic/lessons.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {
using Slots = std::vector<int>;
constexpr int E = kElided;

std::filesystem::path focus_scenarios() { return std::filesystem::path(ATTN_ASSETS_DIR) / "scenarios"; }
Lesson focus_multi_head() {
  return load_lesson_file(std::filesystem::path(ATTN_ASSETS_DIR) / "lessons" / "4_multi_head.json", focus_scenarios());
}

}  // namespace

TEST_CASE("focus_axis: everything when it fits or nothing is named") {
  const int three[] = {3};
  CHECK(focus_axis(4, three, 4) == Slots{0, 1, 2, 3});
  CHECK(focus_axis(4, three, 9) == Slots{0, 1, 2, 3});
  CHECK(focus_axis(4, {}, 1) == Slots{0, 1, 2, 3});
  const int outside[] = {7, -2};  // ignored: nothing left named
  CHECK(focus_axis(3, outside, 1) == Slots{0, 1, 2});
}

TEST_CASE("focus_axis: the named, then their nearest neighbours while a slot per gap still fits") {
  const int sleeps[] = {3};
  CHECK(focus_axis(4, sleeps, 2) == Slots{E, 3});
  CHECK(focus_axis(4, sleeps, 3) == Slots{E, 2, 3});
  const int first[] = {0};
  CHECK(focus_axis(8, first, 2) == Slots{0, E});
  CHECK(focus_axis(8, first, 4) == Slots{0, 1, 2, E});
  CHECK(focus_axis(8, first, 7) == Slots{0, 1, 2, 3, 4, 5, E});
  // Neighbours on both sides, elided runs at both ends.
  CHECK(focus_axis(8, sleeps, 5) == Slots{E, 2, 3, 4, E});
  // On a tie the lower neighbour first; an end reached needs no slot for its run.
  const int middle[] = {2};
  CHECK(focus_axis(5, middle, 4) == Slots{0, 1, 2, E});
  CHECK(focus_axis(5, middle, 3) == Slots{E, 2, E});
}

TEST_CASE("focus_axis: the named are kept past the slots, repeats once, in order") {
  const int two[] = {5, 1};
  CHECK(focus_axis(8, two, 2) == Slots{E, 1, E, 5, E});
  const int twice[] = {3, 3};
  CHECK(focus_axis(4, twice, 2) == Slots{E, 3});
  const int ends[] = {0, 7};
  CHECK(focus_axis(8, ends, 3) == Slots{0, E, 7});
}

TEST_CASE("a focused matrix copies what is kept, zero where elided, and its labels are the real ones") {
  const Matrix m = mat({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  const int rows[] = {E, 2}, cols[] = {0, E};
  check_matrix(focused_matrix(m, rows, cols), mat({{0, 0}, {7, 0}}), 0.0, "focused");
  const std::vector<std::string> tokens{"the", "lazy", "dog"};
  CHECK(focused_labels(&tokens, rows, "\u22EE") == std::vector<std::string>{"\u22EE", "dog"});
  CHECK(focused_labels(nullptr, cols, "\u22EF") == std::vector<std::string>{"0", "\u22EF"});
  const int slots[] = {E, 2, 3};
  CHECK(focused_index(slots, 2) == 1);
  CHECK(focused_index(slots, 3) == 2);
  CHECK(focused_index(slots, 0) == -1);
  CHECK(focused_index(slots, -1) == -1);
}

TEST_CASE("the concat step with W_O offers concat, W_O and output to focus on, other steps nothing") {
  const Lesson heads = focus_multi_head();
  const LessonPage& page = heads.pages[4];
  const Trace t = compute_trace(lesson_page_scenario(page, focus_scenarios()));
  const std::vector<FocusOperand> o = focus_operands(t, Step::Concat);
  REQUIRE(o.size() == 3);
  CHECK(o[0].name == "concat");
  CHECK((o[0].rows == 4 && o[0].cols == 8));
  CHECK(o[1].name == "W_O");
  CHECK((o[1].rows == 8 && o[1].cols == 8));
  CHECK(o[2].name == "output");
  CHECK((o[2].rows == 4 && o[2].cols == 8));
  CHECK(focus_operands(t, Step::Softmax).empty());
  // The page names row "sleeps" of concat, column 0 of W_O and of the output (read in the order of their names).
  CHECK(page.focus == std::vector<FocusTerm>{{"W_O", {{}, {0}}}, {"concat", {{3}, {}}}, {"output", {{}, {0}}}});
  for (std::size_t i = 0; i < heads.pages.size(); ++i)
    if (i != 4 && i != 5) CHECK(heads.pages[i].focus.empty());
}

TEST_CASE("the output step with W_O offers each head's contribution and the output to focus on") {
  const Lesson heads = focus_multi_head();
  const LessonPage& page = heads.pages[5];
  const Trace t = compute_trace(lesson_page_scenario(page, focus_scenarios()));
  const std::vector<FocusOperand> o = focus_operands(t, Step::Output);
  REQUIRE(o.size() == 5);
  const char* names[] = {"head 0", "head 1", "head 2", "head 3", "output"};
  for (std::size_t i = 0; i < o.size(); ++i) {
    CHECK(o[i].name == names[i]);
    CHECK((o[i].rows == 4 && o[i].cols == 8));
  }
  CHECK(focus_operands(t, Step::HeadOutputs).empty());
  // The page names the outlined cell, row "sleeps" and column 0, in every head's term and in the output.
  const FocusAxes cell{{3}, {0}};
  CHECK(page.focus == std::vector<FocusTerm>{
                          {"head 0", cell}, {"head 1", cell}, {"head 2", cell}, {"head 3", cell}, {"output", cell}});
  // Without W_O there is no sum over heads to focus on.
  Scenario s = lesson_page_scenario(page, focus_scenarios());
  s.attention.output_projection = false;
  CHECK(focus_operands(compute_trace(s), Step::Output).empty());
}
