#pragma once
// The main window: menu bar, the panels laid out for the window's size, keyboard shortcuts, file dialogs
// and the status line. One call per frame.
#include "ui/logic/app_state.h"

namespace attn::ui {

// Seconds a step stays on screen while playing.
inline constexpr double kPlaySeconds = 1.6;
inline constexpr float kMinZoom = 0.75f, kMaxZoom = 3.0f;

void DrawAppWindow(AppState& state, double dt);

// File > Open / Save as the menu and the shortcuts do them; problems go to state.message.
void OpenScenario(AppState& state, const std::filesystem::path& path);
void SaveScenario(AppState& state, const std::filesystem::path& path);
// File > Export: "json" (the trace), "md" or "tex" (the handout); beside the document, never over a file.
void ExportText(AppState& state, const std::string& extension);

}  // namespace attn::ui
