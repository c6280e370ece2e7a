#pragma once
// Wrapped text that breaks lines only at spaces. Dear ImGui's own wrapping also breaks after '.', which
// splits numbers such as 7.392 across two lines.
#include <string>
#include <string_view>
#include <vector>

#include <imgui.h>

#include "ui/logic/hover_text.h"

namespace attn::ui {

void TextWrappedAtSpaces(std::string_view text, ImU32 colour = 0);  // 0: the style's text colour
// The lines TextWrappedAtSpaces would draw at `width` with the current font ("\n" breaks a line too).
std::vector<std::string> WrapAtSpaces(std::string_view text, float width);
void TextDisabledWrapped(std::string_view text);
// A section's title, in the title font.
void TitleText(std::string_view text);
// An agreement check (hover_text's agreement): green with its tick, red with its cross.
void AgreementBadge(const Agreement& a);  // in the style's disabled (secondary) colour

// ImGui::SameLine(0, spacing) when the next item, `width` wide with its label, still fits on the line; else it
// starts a line of its own (a row of controls wraps instead of running off the panel).
void SameLineIfFits(float width, float spacing);
// The width of a framed item of `field` pixels with its label after it.
float LabelledWidth(float field, const char* label);

// Text shortened with an ellipsis, a whole UTF-8 character at a time, until it fits `width` ("" when not even
// the ellipsis fits). A shortened label hides something: the layout check lists it.
std::string FitText(const std::string& s, float width, bool report = true);  // report: a layout check finding

// The width of one line of text in the current font.
inline float TextWidth(const std::string& s) { return ImGui::CalcTextSize(s.c_str()).x; }

}  // namespace attn::ui
