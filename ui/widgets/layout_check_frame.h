#pragma once
// The ImGui side of the layout check: the glyphs a finished frame drew, window by window, read back from
// its draw data (a glyph is a quad textured from the font atlas: its texture corner names the character).
#include <string>
#include <vector>

#include <imgui.h>

#include "ui/logic/layout_check.h"

namespace attn::ui {

std::vector<DrawnText> DrawnTextOf(const ImDrawData& data);

// Everything the layout check finds in the frame just rendered (ImGui::GetDrawData()): the widgets' reports
// and the text scan, sorted, each once. Call after ImGui::Render.
std::vector<std::string> LayoutProblemsOfFrame();

// ReportLayoutProblem from inside a window, naming it.
void ReportHere(std::string what);

}  // namespace attn::ui
