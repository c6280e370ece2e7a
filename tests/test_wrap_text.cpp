// Text wrapped to a panel's width, with the window's fonts: at spaces, and a word wider than the panel (a model's id in
// the narrow Inputs panel) broken after its '/' or '-' rather than cut off at the edge.
#include <doctest/doctest.h>
#include <imgui.h>

#include "headless_frame.h"
#include "ui/widgets/text.h"

using attn::ui::WrapAtSpaces;

namespace {
float width_of(const char* s) { return ImGui::CalcTextSize(s).x; }
}  // namespace

TEST_CASE("text wraps at spaces, and a word wider than the line breaks after its last / or - that fits") {
  BeginHeadlessFrame();
  // At spaces: each line as many words as fit.
  const float two_words = width_of("layer 0 of");
  CHECK(WrapAtSpaces("layer 0 of gpt2", two_words) == std::vector<std::string>{"layer 0 of", "gpt2"});
  // One word wider than the line: after its '/' first, then after its '-'.
  const float line = width_of("HuggingFaceTB/S");
  CHECK(WrapAtSpaces("HuggingFaceTB/SmolLM2-135M, layer 0", line) ==
        std::vector<std::string>{"HuggingFaceTB/", "SmolLM2-135M,", "layer 0"});
  CHECK(WrapAtSpaces("lab-test/gpt2-real-width", width_of("lab-test/gpt2-re")) ==
        std::vector<std::string>{"lab-test/gpt2-", "real-width"});
  // No mark to break after: as many characters as fit, never inside a UTF-8 character.
  const std::vector<std::string> plain =
      WrapAtSpaces("\u00E9\u00E9\u00E9\u00E9\u00E9\u00E9", width_of("\u00E9\u00E9\u00E9"));
  CHECK(plain == std::vector<std::string>{"\u00E9\u00E9\u00E9", "\u00E9\u00E9\u00E9"});
  // Narrower than one character: one character a line rather than nothing.
  CHECK(WrapAtSpaces("ab", 1.0f) == std::vector<std::string>{"a", "b"});
  // A line break in the text stays one; every piece fits and they add up to the word.
  const float narrow = width_of("a/bbb");
  const std::vector<std::string> lines = WrapAtSpaces("a/bbbbbbbbbbbbbbbb\nc", narrow);
  REQUIRE(lines.size() >= 4);
  CHECK(lines.front() == "a/");
  CHECK(lines.back() == "c");
  std::string joined;
  for (const std::string& l : lines) {
    CHECK(width_of(l.c_str()) <= narrow);
    joined += l;
  }
  CHECK(joined == "a/bbbbbbbbbbbbbbbbc");
  EndHeadlessFrame();
}
