// The characters the fonts must hold (ui/logic/glyph_set).
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/glyph_set.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("the fonts are given every character the document writes beyond ASCII, malformed UTF-8 as U+FFFD") {
  CHECK(characters_beyond_ascii({"the cat"}).empty());
  CHECK(characters_beyond_ascii({"caf\u00E9", "\u732B", "\xF0\x9F\x90\x88", "\u732B\u00E9"}) ==
        std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  CHECK(characters_beyond_ascii({"a\xFFz", "\xE7\x8C"}) ==
        std::u32string{U'\uFFFD'});  // a stray byte, a cut-off character
  AppState state(load_scenario_file(std::string(ATTN_TEST_DATA_DIR) + "/unicode_tokens.json"), {});
  CHECK(characters_in_use(state) == std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  state.edit([](Scenario& s) { s.input.tokens[0] = "\u306D\u3053"; });  // typed in Japanese: ねこ
  CHECK(characters_in_use(state) ==
        std::u32string{U'\u00E9', U'\u3053', U'\u306D', U'\u732B', U'\U0001F408'});  // 猫 stays: the name has it
}
