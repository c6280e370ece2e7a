// What the current step does and why, in words with the current numbers, and the hovered cell's arithmetic.
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
  ImGui::BeginChild("words", {0, ImGui::GetContentRegionAvail().y - box_h - ImGui::GetStyle().ItemSpacing.y}, false);
  TextWrappedAtSpaces(text.formula, accent_colour());
  TextWrappedAtSpaces(text.what);
  ImGui::Spacing();
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
