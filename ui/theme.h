#pragma once
// Fonts and colours: large enough to read from the back of a classroom, DejaVu for the math glyphs
// (√ · → ᵀ Σ), with Dear ImGui's built-in font when DejaVu is not installed.
#include <imgui.h>

namespace attn::ui {

inline constexpr ImU32 kAccent = IM_COL32(255, 190, 40, 255);  // the current step, highlighted rows

// A colour per key/value head (Okabe-Ito: distinguishable with every common colour-blindness), so the
// query heads that share one read as a group.
ImU32 kv_head_colour(int kv_head);

struct FontSizes {
  float body = 18.0f;
  float title = 24.0f;
};

// Loads the fonts into the current ImGui context's atlas; returns false (and uses the built-in font)
// when DejaVu Sans is missing.
bool load_fonts(const FontSizes& sizes);
ImFont* title_font();  // the body font when no title font was loaded
void apply_style();

}  // namespace attn::ui
