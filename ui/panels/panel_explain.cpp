// What the current step does and why, in words with the current numbers, and the hovered cell's arithmetic.
#include <algorithm>
#include <cmath>

#include "ui/logic/step_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

void ExplainPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Explanation", pos, size, ImGuiWindowFlags_NoScrollbar);  // the text scrolls on its own
  const StepText text = explain_step(state.trace(), state.pipeline.step, state.pipeline.head);
  const HoverCell& hover = state.pipeline.hover ? state.pipeline.hover : state.pipeline.last_hover;
  const float box_h = 2.4f * ImGui::GetTextLineHeightWithSpacing();
  // Whole lines only, on a grid of lines (the why sets itself apart by its colour, not a gap): a line cut through by
  // the panel's edge reads as a mistake. What is left goes below the box.
  const float spacing = ImGui::GetStyle().ItemSpacing.y, line = ImGui::GetTextLineHeightWithSpacing();
  const float room = ImGui::GetContentRegionAvail().y - box_h - spacing;
  const float words_h = std::max(line - spacing, std::floor((room + spacing) / line) * line - spacing);
  ImGui::BeginChild("words", {0, words_h}, false);
  TextWrappedAtSpaces(text.formula, accent_colour());
  TextWrappedAtSpaces(text.what);
  TextDisabledWrapped("Why? " + text.why);
  ImGui::EndChild();
  // The hovered cell's arithmetic, in a box of its own so it never pushes the text around.
  ImGui::BeginChild("cell", {0, box_h}, true);
  if (hover && !hover.explanation.empty()) TextWrappedAtSpaces(hover.explanation);
  else TextDisabledWrapped("Point at a cell of the result to see how it is computed, with its numbers.");
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn::ui
