#include "ui/logic/glyph_set.h"

#include <algorithm>
#include <cmath>

#include "core/text_format.h"
#include "ui/logic/app_state.h"

namespace attn::ui {

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

namespace attn::ui {
namespace {

// Ranges, then single code points, of what the interface writes (see interface_characters).
constexpr char32_t kInterfaceRanges[][2] = {
    {0x20, 0x7E},     {0xA0, 0xFF},      // ASCII and Latin-1 (° ± ² · × ÷ é)
    {0x391, 0x3A9},   {0x3B1, 0x3C9},    // the Greek letters (Σ δ θ π φ)
    {0x2010, 0x2027}, {0x2030, 0x203A},  // dashes, quotes, bullets, ellipsis, per mille, angle quotes
    {0x2070, 0x209C},                    // super- and subscripts (⁻ ¹ ₀)
    {0x2190, 0x2199},                    // arrows (← ↑ → ↓)
};
constexpr char32_t kInterfaceSymbols[] = {
    0x1D40,                                                  // ᵀ, the transpose
    0x21B5,                                                  // ↵
    0x2202, 0x2211, 0x2212, 0x221A, 0x221E, 0x2248, 0x2260,  // ∂ ∑ − √ ∞ ≈ ≠
    0x2264, 0x2265, 0x22C5, 0x22EE, 0x22EF,                  // ≤ ≥ ⋅ ⋮ ⋯
    0x2423,                                                  // ␣, a space in the text task and in tokens
    0x2581,                                                  // ▁, sentencepiece's space in a piece
    0x25B6, 0x25B8, 0x25C0, 0x25C2,                          // ▶ ▸ ◀ ◂
    0x2714, 0x2718, 0x275A,                                  // ✔ ✘ ❚
    0xFFFD,                                                  // the replacement mark
};

// Chinese, Japanese and Korean, which the fallback font draws: a glyph fills its em square.
bool wide(char32_t c) { return c >= 0x2E80 && c != 0xFFFD; }

// ImGui's alpha copy (1 byte), its RGBA copy (4) and the driver's texture (4), with room for the driver's staging.
constexpr std::int64_t kAtlasBytesPerPixel = 10;

}  // namespace

const std::u32string& interface_characters() {
  static const std::u32string characters = [] {
    std::u32string out;
    for (const auto& r : kInterfaceRanges)
      for (char32_t c = r[0]; c <= r[1]; ++c) out.push_back(c);
    out.append(std::begin(kInterfaceSymbols), std::end(kInterfaceSymbols));
    std::sort(out.begin(), out.end());
    return out;
  }();
  return characters;
}

std::u32string font_characters(const std::u32string& extra) {
  std::u32string out = interface_characters() + extra;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int font_oversample(float pixels) { return pixels < 32.0f ? 2 : 1; }

// A glyph's share of its font's em square, packed with its padding (measured on DejaVu Sans and WenQuanYi Micro
// Hei from 12 to 160 px: at most 0.30 and 1.0): narrow for Latin, Greek and symbols, whole for the wide ones,
// which are not oversampled.
std::int64_t font_atlas_pixels(const std::u32string& characters, float zoom) {
  const auto wide_count = std::count_if(characters.begin(), characters.end(), wide);
  const auto narrow_count = std::int64_t(characters.size()) - wide_count;
  double pixels = 0;
  for (const float size : {kBodyPixels * zoom, kTitlePixels * zoom}) {
    const double em = (double(size) + 2.0) * (double(size) + 2.0);
    pixels += em * (0.4 * double(narrow_count) * font_oversample(size) + 1.2 * double(wide_count));
  }
  const float cell = cell_font_pixels(zoom, true);  // the cells' font: ASCII and "…", at its larger size
  pixels += (double(cell) + 2.0) * (double(cell) + 2.0) * 0.4 * 96.0 * font_oversample(cell);
  return std::int64_t(std::ceil(pixels)) + (std::int64_t(1) << 16);  // and the atlas's own corner rectangles
}

float cell_font_pixels(float zoom, bool presentation) {
  return presentation ? std::max(kBodyPixels * zoom, kPresentationCellPixels) : kBodyPixels * zoom;
}

std::int64_t font_atlas_bytes(const std::u32string& characters, float zoom) {
  return kAtlasBytesPerPixel * font_atlas_pixels(characters, zoom);
}

float font_raster_zoom(const std::u32string& characters, float wanted) {
  float zoom = wanted;
  while (zoom > 0.1f && font_atlas_bytes(characters, zoom) > kFontAtlasBytes)
    zoom = (std::ceil(zoom * 20.0f) - 1.0f) / 20.0f;
  return std::max(zoom, 0.1f);
}

}  // namespace attn::ui
