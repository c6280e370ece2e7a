#pragma once
// The characters a document and the lessons write beyond ASCII, so the fonts hold a glyph for each ("猫",
// "é") and are rebuilt when a new one is typed. No window needed: tests check what is collected.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::ui {

// Every code point above U+007F in `texts`, sorted, each once. Malformed UTF-8 counts as U+FFFD, the
// replacement mark the fonts draw for what they cannot (as stb_truetype cannot draw colour emoji).
std::u32string characters_beyond_ascii(const std::vector<std::string_view>& texts);

// What the window's own text writes: ASCII, Latin-1, the Greek letters and the symbols of its formulas and
// controls (ᵀ √ − ≈ ⋯ → ▶ ✔ ...). Sorted, each once. A test reads every string of the sources against it.
const std::u32string& interface_characters();
// The interface's characters and `extra`, sorted, each once: the glyphs the fonts are made with.
std::u32string font_characters(const std::u32string& extra);

// What the fonts cost. The body and title fonts (18 px and 24 px, times the zoom) rasterise every glyph into one
// atlas, which takes an alpha copy and an RGBA copy while it is made and the texture the driver keeps: its bytes
// grow with the square of the zoom and with every character a document writes (a glyph of Chinese is a whole
// square). Past kFontAtlasBytes the glyphs are rasterised smaller and drawn enlarged: text a little softer, and the
// window's memory bounded whatever its zoom, size or document.
inline constexpr float kBodyPixels = 18.0f, kTitlePixels = 24.0f;
// The numbers in matrix cells: the body size, and in presentation mode at least 26 px, where DejaVu Sans's digits
// stand 16 px tall, to be read from the back of the room (ImGui sizes a font by its line height, ascent to descent:
// DejaVu's em is 0.859 of it, its digits 0.729 of the em). A third font of ASCII and "…".
inline constexpr float kPresentationCellPixels = 26.0f;
inline constexpr double kDigitShare = 0.729 * 0.859;  // DejaVu Sans's digits' height over ImGui's size of it
float cell_font_pixels(float zoom, bool presentation);
inline constexpr std::int64_t kFontAtlasBytes = std::int64_t(40) << 20;
// Horizontal oversampling for a font of `pixels`: finer placement for small text, none where it cannot be seen.
int font_oversample(float pixels);
// The atlas's pixels for `characters` (font_characters) at `zoom`: an upper bound of what ImGui packs.
std::int64_t font_atlas_pixels(const std::u32string& characters, float zoom);
std::int64_t font_atlas_bytes(const std::u32string& characters, float zoom);
// The zoom the glyphs are rasterised at: `wanted`, or the largest below it (in steps of 1/20) within
// kFontAtlasBytes; the fonts are then drawn enlarged by wanted / that.
float font_raster_zoom(const std::u32string& characters, float wanted);

class AppState;
// What the window writes beyond ASCII: the document's name, description and tokens, the lessons' titles and
// texts, and the status message.
std::u32string characters_in_use(const AppState& state);

}  // namespace attn::ui
