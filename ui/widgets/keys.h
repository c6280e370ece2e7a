#pragma once
// Keys by name. Dear ImGui 1.86 names only a few keys (arrows, Home, ...); the GLFW backend indexes the
// rest by GLFW key codes, so letters and function keys are looked up here, in one place.
namespace attn::ui {

enum class Key {
  Left,
  Right,
  Up,
  Down,
  Home,
  End,
  Space,
  Escape,
  Enter,
  F1,
  F5,
  F11,
  O,
  S,
  Q,
  R,
  Y,
  Z,
  Equal,
  Minus,
  Zero,
  PageUp,
  PageDown
};

enum KeyMods_ {
  KeyMods_None = 0,
  KeyMods_Ctrl = 1 << 0,   // Control held
  KeyMods_Shift = 1 << 1,  // Shift held
};

// True in the frame `k` was pressed with exactly `mods` held (auto-repeat counts when `repeat`).
bool key_pressed(Key k, int mods = KeyMods_None, bool repeat = true);

// Dear ImGui 1.86 samples keys once per frame, so a press and release within one frame (a quick tap,
// or xdotool) would be lost. The window reports every press here as it happens, with its modifiers
// (GLFW codes), and key_pressed also answers from what arrived since the previous frame.
void queue_key_press(int glfw_key, int glfw_mods);
void begin_key_frame();

}  // namespace attn::ui
