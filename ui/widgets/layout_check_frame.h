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
// `judge_sight`: whether what a page is about must be in sight without scrolling (the rule holds for the projector,
// 1280x720 in presentation mode, and for a desktop, 1600x900 in normal mode; smaller screens may scroll).
std::vector<std::string> LayoutProblemsOfFrame(bool judge_sight = true);

// NoteSightItem for something drawn from `min` to `max` (screen pixels) in the current window, judged against the part
// of the window in sight now (its inner clip rectangle within the current clip: a table column's, a child's).
void NoteInSight(SightKind kind, std::string name, std::string what, ImVec2 min, ImVec2 max);

// NoteChartPlot for a chart's plot from `min` to `max` in the current window.
void NoteChartPlotHere(std::string title, ImVec2 min, ImVec2 max);

// NoteLineContrast for a line, arc or edge drawn in the current window.
void ReportLineContrastHere(std::string what, ImU32 colour, ImU32 background);

// ReportLayoutProblem from inside a window, naming it.
void ReportHere(std::string what);
// NoteHiddenStroke from inside a window, naming it.
void ReportHiddenHere(std::string what);

}  // namespace attn::ui
