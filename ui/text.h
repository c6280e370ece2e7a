#pragma once
// Wrapped text that breaks lines only at spaces. Dear ImGui's own wrapping also breaks after '.', which
// splits numbers such as 7.392 across two lines.
#include <string>
#include <string_view>

#include <imgui.h>

namespace attn::ui {

void TextWrappedAtSpaces(std::string_view text, ImU32 colour = 0);  // 0: the style's text colour
void TextDisabledWrapped(std::string_view text);                    // in the style's disabled (secondary) colour

// Text shortened with an ellipsis, a whole UTF-8 character at a time, until it fits `width` ("" when not even
// the ellipsis fits). A shortened label hides something: the layout check lists it.
std::string FitText(const std::string& s, float width);

}  // namespace attn::ui
