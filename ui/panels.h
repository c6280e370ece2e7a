#pragma once
// The panels of the main window, one file each. Each reads AppState and changes it only through its
// methods (edit, set_step, ...).
#include <imgui.h>

#include "ui/app_state.h"

namespace attn::ui {

void PipelinePanel(AppState& state, ImVec2 pos, ImVec2 size);  // step strip and the current step as its equation
void InputsPanel(AppState& state, ImVec2 pos, ImVec2 size);    // tokens, configuration, matrix editors
void ExplainPanel(AppState& state, ImVec2 pos, ImVec2 size);   // what the step does, why, the hovered cell
void HeadsPanel(AppState& state, ImVec2 pos, ImVec2 size);     // every head's weights; arc view of the current head
void HelpOverlay(AppState& state);                             // F1: every shortcut

}  // namespace attn::ui
