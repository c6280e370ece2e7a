#pragma once
// The desktop app: a GLFW window with an OpenGL 3.3 core context running the Dear ImGui loop.
#include <ostream>

#include "app/gui/gui_options.h"

namespace attn::gui {

// Returns the exit code: 0, 2 for bad input (a scenario that does not load), 1 when no window can be made.
int run_gui(const GuiOptions& o, std::ostream& err);

}  // namespace attn::gui
