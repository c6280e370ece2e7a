#pragma once
// Fonts and colours: large enough to read from the back of a classroom, DejaVu for the math glyphs
// (√ · → ᵀ Σ), with Dear ImGui's built-in font when DejaVu is not installed.
#include <cstddef>
#include <string>

#include <imgui.h>

namespace attn::ui {

// The colour of what is current (the step, the head, highlighted rows): amber on dark, a deeper orange
// on light backgrounds, where amber would be too faint to read.
ImU32 accent_colour();
// Whether the page behind the panels is light (its luminance over half): what must stand out on it differs.
bool light_page();

// A colour per key/value head, so the query heads that share one read as a group; per model preset; per
// attention variant (0 MHA .. 3 MLA). From the palettes of Style (style.h).
ImU32 kv_head_colour(int kv_head);
ImU32 preset_colour(std::size_t preset);
ImU32 variant_colour(int variant_index);

// Loads the fonts into the current ImGui context's atlas at `zoom` (body 18 px, title 24 px at 1), rasterised
// smaller and drawn enlarged past the atlas's memory allowance (font_raster_zoom); returns false (and uses the
// built-in font) when DejaVu Sans is missing. The glyphs: the interface's characters and `extra`, what the document
// and lessons write (characters_in_use); those DejaVu lacks come from WenQuanYi Micro Hei (fonts-wqy-microhei:
// Chinese, Japanese kana, Korean) where it is installed, and anything no font has is drawn as the replacement mark
// U+FFFD.
// In presentation mode the cells' numbers get a larger font of their own (cell_font_pixels).
bool load_fonts(float zoom, const std::u32string& extra = {}, bool presentation = false);
ImFont* title_font();                 // the body font when no title font was loaded
ImFont* cell_font();                  // the numbers in matrix cells; the body font when none was loaded
float font_size(const ImFont* font);  // as drawn: its size times its enlargement
float title_font_size();              // font_size(title_font())
float cell_font_size();               // font_size(cell_font())
// Dark or light; high contrast (presentation mode) deepens the background and whitens the text.
// `scale` multiplies paddings and spacings along with the fonts.
enum class StyleTheme { Dark, Light };
void apply_style(StyleTheme theme = StyleTheme::Dark, bool high_contrast = false, float scale = 1.0f);

}  // namespace attn::ui
