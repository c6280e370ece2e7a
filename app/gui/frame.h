#pragma once
// One frame of the window: the look (fonts and style) rebuilt when zoom, theme or presentation change,
// the panels drawn and rendered, and the pictures taken of it (a screenshot, a widget at twice the size).
#include <optional>
#include <string>

#include <GLFW/glfw3.h>
#include <imgui.h>

#include "app/gui/canvas.h"
#include "ui/logic/app_state.h"
#include "ui/panels/app_window.h"

namespace attn::gui {

// The look that fonts and style were last built for (fonts are rasterised at the size shown, so text stays
// crisp at every zoom).
struct Look {
  float zoom = 0;
  ui::Theme theme = ui::Theme::Dark;
  bool presentation = false;
  std::u32string characters;  // beyond ASCII, that the fonts hold glyphs for (a token typed in Chinese adds some)
  bool operator==(const Look&) const = default;
};

struct Window {
  GLFWwindow* glfw = nullptr;
  ui::AppWindowState ui;  // what the main window keeps between frames (its file dialog, the gallery)
  Look look;              // as last applied
  Canvas canvas;          // what the window shows
  Look canvas_look;       // the look the canvas was drawn with
};

// Rebuilds fonts and style between frames when the look the state asks for has changed.
void apply_look(const ui::AppState& state, Look& applied);
// `display`: the size the layout is made for, when a driver sets one (the layout sweep), else the window's.
// Returns whether the back buffer holds the frame, to be shown: false when it would look as the frame before does
// (nothing to swap), unless `present` (a capture reads the back buffer every time).
bool render_frame(Window& window, ui::AppState& state, double dt, std::optional<ImVec2> display, bool present);
// The window was exposed or damaged from outside: its next frame is drawn whole. For glfwSetWindowRefreshCallback.
void redraw_whole(GLFWwindow* window);
// A widget asked for its picture (ui::picture_request): one frame at twice the size, cut out and saved.
void export_picture(Window& window, ui::AppState& state);
// The window as drawn: the back buffer before it is shown, as PNG, written atomically. Throws InputError with the
// reason (a folder that does not exist, a full disk).
void write_screenshot(const std::string& path, int width, int height);

}  // namespace attn::gui
