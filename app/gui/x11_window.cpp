#include "app/gui/x11_window.h"

#include <dlfcn.h>

#include <cstring>

namespace attn::gui {
namespace {

// Xlib's XImage (X11/Xlib.h, a stable ABI), declared here for the same reason as the functions above.
struct XImageAbi {
  int width, height, xoffset, format;
  char* data;
  int byte_order, bitmap_unit, bitmap_bit_order, bitmap_pad, depth, bytes_per_line, bits_per_pixel;
  unsigned long red_mask, green_mask, blue_mask;
  char* obdata;
  struct {
    void* create_image;
    int (*destroy_image)(XImageAbi*);
    void *get_pixel, *put_pixel, *sub_image, *add_pixel;
  } f;
};
using GetImage = XImageAbi* (*)(_XDisplay*, unsigned long, int, int, unsigned, unsigned, unsigned long, int);
constexpr int kZPixmap = 2;

std::uint32_t rgba(std::uint32_t x_pixel, const XImageAbi& image) {
  auto channel = [&](unsigned long mask) {
    if (mask == 0) return 0u;
    return static_cast<unsigned>((x_pixel & mask) >> __builtin_ctzl(mask)) & 0xffu;
  };
  return channel(image.red_mask) | channel(image.green_mask) << 8 | channel(image.blue_mask) << 16 | 0xffu << 24;
}

}  // namespace

std::optional<std::vector<std::uint32_t>> window_pixels(GLFWwindow* window, int width, int height) {
  // libX11 is loaded with GLFW; looked up rather than linked, as the app needs no X11 headers or library to build.
  const auto get_image = reinterpret_cast<GetImage>(dlsym(RTLD_DEFAULT, "XGetImage"));
  _XDisplay* display = glfwGetX11Display();
  const unsigned long drawable = glfwGetX11Window(window);
  if (!get_image || !display || drawable == 0) return std::nullopt;
  XImageAbi* image =
      get_image(display, drawable, 0, 0, static_cast<unsigned>(width), static_cast<unsigned>(height), ~0ul, kZPixmap);
  if (!image) return std::nullopt;
  std::optional<std::vector<std::uint32_t>> pixels;
  if (image->bits_per_pixel == 32 && image->width == width && image->height == height) {
    pixels.emplace(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        std::uint32_t p = 0;
        std::memcpy(&p, image->data + static_cast<std::ptrdiff_t>(y) * image->bytes_per_line + 4 * x, sizeof p);
        (*pixels)[static_cast<std::size_t>(height - 1 - y) * static_cast<std::size_t>(width) +
                  static_cast<std::size_t>(x)] = rgba(p, *image);
      }
  }
  image->f.destroy_image(image);
  return pixels;
}

}  // namespace attn::gui
