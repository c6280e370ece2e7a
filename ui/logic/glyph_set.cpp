#include "ui/logic/glyph_set.h"

#include <algorithm>

#include "ui/logic/app_state.h"

namespace attn::ui {
namespace {

// The code point starting at s[i], advancing i past it; U+FFFD for a malformed sequence (one byte skipped).
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  const int length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || i + static_cast<std::size_t>(length) > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t c = length == 1 ? b : b & (0x7F >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(i + static_cast<std::size_t>(k)) & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    c = (c << 6) | (byte(i + static_cast<std::size_t>(k)) & 0x3F);
  }
  i += static_cast<std::size_t>(length);
  return c;
}

}  // namespace

std::u32string characters_beyond_ascii(const std::vector<std::string_view>& texts) {
  std::u32string out;
  for (const std::string_view t : texts)
    for (std::size_t i = 0; i < t.size();) {
      const char32_t c = next_code_point(t, i);
      if (c >= 0x80) out.push_back(c);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::u32string characters_in_use(const AppState& state) {
  const Scenario& s = state.scenario();
  std::vector<std::string_view> texts{s.name, s.description, state.message};
  for (const std::string& t : s.input.tokens) texts.push_back(t);
  if (s.context)
    for (const std::string& t : s.context->tokens) texts.push_back(t);
  for (const Lesson& l : state.lesson.lessons) {
    texts.push_back(l.title);
    for (const LessonPage& p : l.pages) {
      texts.push_back(p.title);
      texts.push_back(p.text);
    }
  }
  return characters_beyond_ascii(texts);
}

}  // namespace attn::ui
