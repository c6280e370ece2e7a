// F1: every shortcut, over everything else.
#include "ui/panels/panels.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

void HelpOverlay(AppState& state) {
  if (!state.show_help) return;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos({display.x / 2, display.y / 2}, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.96f);
  ImGui::Begin("Keyboard shortcuts", &state.show_help,
               ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoMove);
  static const char* const kShortcuts[][2] = {
      {"\u2190 / \u2192", "previous / next step"},
      {"Home / End", "first / last step"},
      {"Space", "play through the steps / pause"},
      {"\u2191 / \u2193", "previous / next head"},
      {"Ctrl+O", "open a scenario"},
      {"Ctrl+S", "save (Ctrl+Shift+S: save as)"},
      {"Ctrl+Z", "undo (Ctrl+Shift+Z or Ctrl+Y: redo)"},
      {"Ctrl+R", "re-seed the weights"},
      {"Ctrl+Q", "quit"},
      {"PageUp / PageDown", "previous / next lesson page"},
      {"F5", "presentation mode"},
      {"F11", "full screen"},
      {"Ctrl + / Ctrl -", "zoom in / out (Ctrl+0: actual size)"},
      {"F1", "this help"},
      {"Esc", "close this help or a dialog"},
  };
  if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    for (const auto& row : kShortcuts) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(accent_colour()), "%s", row[0]);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(row[1]);
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  ImGui::TextDisabled("Point at any cell to see how it is computed. Drag a number to change it,");
  ImGui::TextDisabled("or double-click it to type; every view follows in the same frame.");
  ImGui::End();
}

}  // namespace attn::ui
