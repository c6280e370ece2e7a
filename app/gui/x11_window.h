#pragma once
// The window as X11 has it, where the app needs it: GLFW's native access, a changed rectangle sent to the window
// without a swap, and the window's pixels read back for --check-damage (reading the front buffer through GL gives
// nothing under llvmpipe).
#include <GLFW/glfw3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// From glfw3native.h, whose X11 headers define names (Success, None) that clash with Eigen's.
struct _XDisplay;
extern "C" {
_XDisplay* glfwGetX11Display(void);
unsigned long glfwGetX11Window(GLFWwindow* window);
unsigned long glfwGetGLXWindow(GLFWwindow* window);
}

namespace attn::gui {

// GLX_MESA_copy_sub_buffer under a software renderer: a rectangle of the back buffer sent to the window. There a
// swap sends every pixel of the window through the CPU, after the canvas is copied whole to the back buffer (together
// 4 to 13 ms at 1600x900 under llvmpipe, on every frame that changed anything); a frame that changed a part sends
// the rectangle around what changed instead. Absent elsewhere (a GPU's swap costs nothing).
struct RegionCopy {
  using Copy = void (*)(_XDisplay*, unsigned long, int, int, int, int);  // glXCopySubBufferMESA
  Copy copy = nullptr;
  _XDisplay* display = nullptr;
  unsigned long drawable = 0;  // the window's GLX drawable
  GLFWwindow* window = nullptr;
  // Pixels [x0, x1) x [y0, y1), rows counted from the bottom (as GL and the extension count them).
  void send(int x0, int y0, int x1, int y1) const { copy(display, drawable, x0, y0, x1 - x0, y1 - y0); }
};
// Found once per window, with its context current.
std::optional<RegionCopy> region_copy(GLFWwindow* window);

// The window's pixels: rows from the bottom, each pixel's red, green and blue bytes in order and alpha 255, as
// glReadPixels(GL_RGBA) gives a framebuffer's. A message instead when they cannot be read (not an X11 window, a
// window not wholly on the screen).
struct WindowPixels {
  std::vector<std::uint32_t> pixels;
  std::string problem;  // empty when read
};
WindowPixels window_pixels(GLFWwindow* window, int width, int height);

}  // namespace attn::gui
