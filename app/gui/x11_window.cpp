#include "app/gui/x11_window.h"

#include <dlfcn.h>

#include <bit>
#include <string_view>

namespace attn::gui {
namespace {

// Xlib's XImage (X11/Xlib.h, a stable ABI), declared here for the reason glfw3native.h is not included
// (x11_window.h); an error handler's XErrorEvent is not read, so it stays a void*.
struct XImageAbi {
  int width, height, xoffset, format;
  char* data;
  int byte_order, bitmap_unit, bitmap_bit_order, bitmap_pad, depth, bytes_per_line, bits_per_pixel;
  unsigned long red_mask, green_mask, blue_mask;
  char* obdata;
  struct {
    void* create_image;
    int (*destroy_image)(XImageAbi*);
    unsigned long (*get_pixel)(XImageAbi*, int, int);
    void *put_pixel, *sub_image, *add_pixel;
  } f;
};
using ErrorHandler = int (*)(_XDisplay*, void*);
using GetImage = XImageAbi* (*)(_XDisplay*, unsigned long, int, int, unsigned, unsigned, unsigned long, int);
using SetErrorHandler = ErrorHandler (*)(ErrorHandler);
using Sync = int (*)(_XDisplay*, int);
constexpr int kZPixmap = 2;

// Xlib as GLFW loaded it: GLFW 3.3 links it, 3.4 opens it itself (not into the global scope).
template <class F>
F xlib(const char* name) {
  static void* const library = dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
  return reinterpret_cast<F>(library ? dlsym(library, name) : nullptr);
}

// A channel's top 8 bits, wherever its mask puts it.
std::uint32_t channel(unsigned long pixel, unsigned long mask) {
  if (mask == 0) return 0;
  const unsigned bits = static_cast<unsigned>(std::popcount(mask));
  const unsigned long value = (pixel & mask) >> std::countr_zero(mask);
  return static_cast<std::uint32_t>(bits >= 8 ? value >> (bits - 8) : value << (8 - bits));
}

bool x_error = false;
int note_error(_XDisplay*, void*) {
  x_error = true;
  return 0;
}

// XGetImage, its errors (a window not wholly on the screen) noted rather than ending the process as Xlib's default
// handler does.
XImageAbi* get_image(_XDisplay* display, unsigned long window, int width, int height) {
  const auto get = xlib<GetImage>("XGetImage");
  const auto set_handler = xlib<SetErrorHandler>("XSetErrorHandler");
  const auto sync = xlib<Sync>("XSync");
  if (!get || !set_handler || !sync) return nullptr;
  x_error = false;
  const ErrorHandler before = set_handler(note_error);
  XImageAbi* image =
      get(display, window, 0, 0, static_cast<unsigned>(width), static_cast<unsigned>(height), ~0ul, kZPixmap);
  sync(display, 0);
  set_handler(before);
  if (image && x_error) {
    image->f.destroy_image(image);
    return nullptr;
  }
  return image;
}

bool software_renderer() {
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const std::string_view name = renderer ? renderer : "";
  return name.find("llvmpipe") != std::string_view::npos || name.find("softpipe") != std::string_view::npos;
}

}  // namespace

std::optional<RegionCopy> region_copy(GLFWwindow* window) {
  // GLFW looks for the extension in GLX's list too; a function pointer alone proves nothing (GLX makes one for any
  // name).
  if (!software_renderer() || !glfwExtensionSupported("GLX_MESA_copy_sub_buffer")) return std::nullopt;
  RegionCopy r{reinterpret_cast<RegionCopy::Copy>(glfwGetProcAddress("glXCopySubBufferMESA")), glfwGetX11Display(),
               glfwGetGLXWindow(window), window};
  if (!r.display || r.drawable == 0) return std::nullopt;
  return r;
}

WindowPixels window_pixels(GLFWwindow* window, int width, int height) {
  _XDisplay* display = glfwGetX11Display();
  XImageAbi* image = display ? get_image(display, glfwGetX11Window(window), width, height) : nullptr;
  if (!image) return {{}, "the window's pixels could not be read from the X server"};
  WindowPixels read;
  read.pixels.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const unsigned long p = image->f.get_pixel(image, x, y);
      read.pixels[static_cast<std::size_t>(height - 1 - y) * static_cast<std::size_t>(width) +
                  static_cast<std::size_t>(x)] = channel(p, image->red_mask) | channel(p, image->green_mask) << 8 |
                                                 channel(p, image->blue_mask) << 16 | 0xffu << 24;
    }
  image->f.destroy_image(image);
  return read;
}

}  // namespace attn::gui
