#pragma once
// A frame of ImGui without a window, with the window's fonts at zoom 1 on a 1280x720 display: for tests of widgets
// that measure text. It writes no imgui.ini into the folder the tests run in.
#include <imgui.h>

#include "ui/widgets/theme.h"

inline void BeginHeadlessFrame() {
  ImGui::CreateContext();
  attn::ui::load_fonts(1.0f);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = {1280, 720};
  io.DeltaTime = 1.0f / 60;
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsAlpha8(&pixels, &w, &h);  // a frame needs the atlas built
  ImGui::NewFrame();
}

inline void EndHeadlessFrame() {
  ImGui::EndFrame();
  ImGui::DestroyContext();
}
