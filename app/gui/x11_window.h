#pragma once
// The window as X11 has it, where the app needs it: GLFW's native access, and the window's pixels read back for
// --check-damage (what the frames sent to it in part, canvas.h's RegionCopy, left on screen; reading the front
// buffer through GL gives nothing under llvmpipe).
#include <GLFW/glfw3.h>

#include <cstdint>
#include <optional>
#include <vector>

// From glfw3native.h, whose X11 headers define names (Success, None) that clash with Eigen's.
struct _XDisplay;
extern "C" {
_XDisplay* glfwGetX11Display(void);
unsigned long glfwGetX11Window(GLFWwindow* window);
unsigned long glfwGetGLXWindow(GLFWwindow* window);
}

namespace attn::gui {

// The window's pixels: rows from the bottom, each pixel's red, green and blue bytes in order and alpha 255, as
// glReadPixels(GL_RGBA) gives a framebuffer's. nullopt when the window is not an X11 one or cannot be read.
std::optional<std::vector<std::uint32_t>> window_pixels(GLFWwindow* window, int width, int height);

}  // namespace attn::gui
