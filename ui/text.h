#pragma once
// Wrapped text that breaks lines only at spaces. Dear ImGui's own wrapping also breaks after '.', which
// splits numbers such as 7.392 across two lines.
#include <string_view>

#include <imgui.h>

namespace attn::ui {

void TextWrappedAtSpaces(std::string_view text, ImU32 colour = 0);  // 0: the style's text colour

}  // namespace attn::ui
