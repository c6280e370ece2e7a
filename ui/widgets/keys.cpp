#include "ui/widgets/keys.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <vector>

namespace attn::ui {
namespace {

struct Press {
  int key;
  int mods;  // KeyMods_
};

std::vector<Press>& pending() {
  static std::vector<Press> presses;  // since the last frame began
  return presses;
}

std::vector<Press>& this_frame() {
  static std::vector<Press> presses;
  return presses;
}

int key_index(Key k) {
  switch (k) {
    case Key::Left: return ImGui::GetKeyIndex(ImGuiKey_LeftArrow);
    case Key::Right: return ImGui::GetKeyIndex(ImGuiKey_RightArrow);
    case Key::Up: return ImGui::GetKeyIndex(ImGuiKey_UpArrow);
    case Key::Down: return ImGui::GetKeyIndex(ImGuiKey_DownArrow);
    case Key::Home: return ImGui::GetKeyIndex(ImGuiKey_Home);
    case Key::End: return ImGui::GetKeyIndex(ImGuiKey_End);
    case Key::Space: return ImGui::GetKeyIndex(ImGuiKey_Space);
    case Key::Escape: return ImGui::GetKeyIndex(ImGuiKey_Escape);
    case Key::Enter: return ImGui::GetKeyIndex(ImGuiKey_Enter);
    case Key::PageUp: return ImGui::GetKeyIndex(ImGuiKey_PageUp);
    case Key::PageDown: return ImGui::GetKeyIndex(ImGuiKey_PageDown);
    case Key::F1: return GLFW_KEY_F1;
    case Key::F5: return GLFW_KEY_F5;
    case Key::F11: return GLFW_KEY_F11;
    case Key::R: return GLFW_KEY_R;
    case Key::Y: return GLFW_KEY_Y;
    case Key::Z: return GLFW_KEY_Z;
    case Key::Equal: return GLFW_KEY_EQUAL;
    case Key::Minus: return GLFW_KEY_MINUS;
    case Key::Zero: return GLFW_KEY_0;
    case Key::O: return GLFW_KEY_O;
    case Key::S: return GLFW_KEY_S;
    case Key::Q: return GLFW_KEY_Q;
  }
  return -1;
}

int live_mods() {
  const ImGuiIO& io = ImGui::GetIO();
  return (io.KeyCtrl ? KeyMods_Ctrl : 0) | (io.KeyShift ? KeyMods_Shift : 0);
}

}  // namespace

void queue_key_press(int glfw_key, int glfw_mods) {
  pending().push_back({glfw_key, ((glfw_mods & GLFW_MOD_CONTROL) ? KeyMods_Ctrl : 0) |
                                     ((glfw_mods & GLFW_MOD_SHIFT) ? KeyMods_Shift : 0)});
}

void begin_key_frame() {
  this_frame().swap(pending());
  pending().clear();
}

bool key_pressed(Key k, int mods, bool repeat) {
  const int index = key_index(k);
  if (index < 0) return false;
  if (ImGui::IsKeyPressed(index, repeat) && live_mods() == mods) return true;
  const auto& queued = this_frame();
  return std::any_of(queued.begin(), queued.end(), [&](const Press& p) { return p.key == index && p.mods == mods; });
}

}  // namespace attn::ui
