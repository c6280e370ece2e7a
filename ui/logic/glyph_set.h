#pragma once
// The characters a document and the lessons write beyond ASCII, so the fonts hold a glyph for each ("猫",
// "é") and are rebuilt when a new one is typed. No window needed: tests check what is collected.
#include <string>
#include <string_view>
#include <vector>

namespace attn::ui {

// Every code point above U+007F in `texts`, sorted, each once. Malformed UTF-8 counts as U+FFFD, the
// replacement mark the fonts draw for what they cannot (as stb_truetype cannot draw colour emoji).
std::u32string characters_beyond_ascii(const std::vector<std::string_view>& texts);

class AppState;
// What the window writes beyond ASCII: the document's name, description and tokens, the lessons' titles and
// texts, and the status message.
std::u32string characters_in_use(const AppState& state);

}  // namespace attn::ui
