#include "app/gui/canvas.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ui/widgets/heatmap.h"

namespace attn::gui {
namespace {

// Pixels [x0, x1) x [y0, y1), rows counted from the bottom as GL counts them.
struct PixelRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool empty() const { return x1 <= x0 || y1 <= y0; }
};

PixelRect intersection(const PixelRect& a, const PixelRect& b) {
  return {std::max(a.x0, b.x0), std::max(a.y0, b.y0), std::min(a.x1, b.x1), std::min(a.y1, b.y1)};
}

PixelRect bounding(const PixelRect& a, const PixelRect& b) {
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

int framebuffer_rows(const ImDrawData& d) { return static_cast<int>(d.DisplaySize.y * d.FramebufferScale.y); }

// The pixels a command with clip rectangle `clip` may touch: the scissor imgui_impl_opengl3 (1.86) sets for it, with
// its truncations. Cutting a command to a rectangle in these terms draws, inside the rectangle, exactly the pixels the
// whole frame draws.
PixelRect backend_scissor(const ImVec4& clip, const ImDrawData& d) {
  const ImVec2 s = d.FramebufferScale, o = d.DisplayPos;
  const ImVec2 lo{(clip.x - o.x) * s.x, (clip.y - o.y) * s.y}, hi{(clip.z - o.x) * s.x, (clip.w - o.y) * s.y};
  if (hi.x <= lo.x || hi.y <= lo.y) return {};
  const int x = static_cast<int>(lo.x), y = static_cast<int>(static_cast<float>(framebuffer_rows(d)) - hi.y);
  return {x, y, x + static_cast<int>(hi.x - lo.x), y + static_cast<int>(hi.y - lo.y)};
}

// The clip rectangle the backend turns into the scissor `p` exactly (whole pixels stay whole through a framebuffer
// scale of 1 or 2).
ImVec4 clip_for(const PixelRect& p, const ImDrawData& d) {
  if (p.empty()) return {0, 0, 0, 0};  // the backend skips the command
  const ImVec2 s = d.FramebufferScale, o = d.DisplayPos;
  const float rows = static_cast<float>(framebuffer_rows(d));
  return {o.x + static_cast<float>(p.x0) / s.x, o.y + (rows - static_cast<float>(p.y1)) / s.y,
          o.x + static_cast<float>(p.x1) / s.x, o.y + (rows - static_cast<float>(p.y0)) / s.y};
}

// A changed rectangle of the display as pixels, grown to whole ones.
PixelRect pixels_of(const ScreenRect& r, const ImDrawData& d) {
  const ImVec2 s = d.FramebufferScale, o = d.DisplayPos;
  const int rows = framebuffer_rows(d);
  return {static_cast<int>(std::floor((r.x0 - o.x) * s.x)), rows - static_cast<int>(std::ceil((r.y1 - o.y) * s.y)),
          static_cast<int>(std::ceil((r.x1 - o.x) * s.x)), rows - static_cast<int>(std::floor((r.y0 - o.y) * s.y))};
}

std::vector<ListPrint> prints_of(const ImDrawData& d) {
  std::vector<ListPrint> prints;
  for (int l = 0; l < d.CmdListsCount; ++l) prints.push_back(print(*d.CmdLists[l], ui::TexturePixelsVersion));
  return prints;
}

void draw_whole(const OffscreenTarget& t, ImDrawData& d) {
  framebuffers()->bind(GL_FRAMEBUFFER, t.framebuffer);
  clear_to_background(t.width, t.height);
  ImGui_ImplOpenGL3_RenderDrawData(&d);
}

// Draws `d` into `t` within each rectangle only: cleared, then every command with its scissor cut to it.
void draw_within(const OffscreenTarget& t, ImDrawData& d, const std::vector<PixelRect>& rects) {
  std::vector<ImDrawCmd*> commands;
  for (int l = 0; l < d.CmdListsCount; ++l)
    for (ImDrawCmd& cmd : d.CmdLists[l]->CmdBuffer) commands.push_back(&cmd);
  std::vector<ImVec4> clips;
  for (const ImDrawCmd* cmd : commands) clips.push_back(cmd->ClipRect);
  framebuffers()->bind(GL_FRAMEBUFFER, t.framebuffer);
  for (const PixelRect& r : rects) {
    for (std::size_t k = 0; k < commands.size(); ++k)
      commands[k]->ClipRect = clip_for(intersection(backend_scissor(clips[k], d), r), d);
    glEnable(GL_SCISSOR_TEST);
    glScissor(r.x0, r.y0, r.x1 - r.x0, r.y1 - r.y0);
    clear_to_background(t.width, t.height);
    glDisable(GL_SCISSOR_TEST);
    ImGui_ImplOpenGL3_RenderDrawData(&d);
  }
  for (std::size_t k = 0; k < commands.size(); ++k) commands[k]->ClipRect = clips[k];
}

std::vector<std::uint32_t> read_pixels(const OffscreenTarget& t) {
  std::vector<std::uint32_t> pixels(static_cast<std::size_t>(t.width) * static_cast<std::size_t>(t.height));
  framebuffers()->bind(GL_FRAMEBUFFER, t.framebuffer);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, t.width, t.height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  return pixels;
}

// The first pixel where a and b differ, as "pixel (x, y from the top) is A, <b_is> B"; empty when none.
std::string first_difference(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b, int width,
                             int height, const char* b_is) {
  const auto [p, q] = std::ranges::mismatch(a, b);
  if (p == a.end()) return "";
  const auto at = p - a.begin();
  return "pixel (" + std::to_string(at % width) + ", " + std::to_string(height - 1 - at / width) +
         " from the top) is " + hex_text(*p, 8) + ", " + b_is + " " + hex_text(*q, 8);
}

// The frame just drawn in part, drawn whole too and compared pixel for pixel.
void check_damage(Canvas& c, ImDrawData& d) {
  if (!c.whole.ready(c.pixels.width, c.pixels.height)) return;
  draw_whole(c.whole, d);
  const std::string difference =
      first_difference(read_pixels(c.pixels), read_pixels(c.whole), c.pixels.width, c.pixels.height, "drawn whole");
  ++c.checked;
  if (difference.empty()) return;
  if (c.differed++ == 0) c.first_difference = "frame " + std::to_string(c.checked) + " drawn in part: " + difference;
}

void copy_to_back_buffer(const OffscreenTarget& canvas, const PixelRect& p) {
  const FramebufferApi& fb = *framebuffers();
  fb.bind(GL_READ_FRAMEBUFFER, canvas.framebuffer);
  fb.bind(GL_DRAW_FRAMEBUFFER, 0);
  fb.blit(p.x0, p.y0, p.x1, p.y1, p.x0, p.y0, p.x1, p.y1, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  fb.bind(GL_FRAMEBUFFER, 0);
}

// The window's pixels after a frame sent in part: the canvas's (alpha aside), if the rectangle reached it and nothing
// else changed.
void check_window(Canvas& c) {
  ++c.sent;
  const WindowPixels shown = window_pixels(c.region->window, c.pixels.width, c.pixels.height);
  std::vector<std::uint32_t> canvas = read_pixels(c.pixels);
  framebuffers()->bind(GL_FRAMEBUFFER, 0);
  for (std::uint32_t& p : canvas) p |= 0xffu << 24;
  const std::string difference =
      shown.problem.empty() ? first_difference(shown.pixels, canvas, c.pixels.width, c.pixels.height, "the canvas")
                            : shown.problem;
  if (difference.empty()) return;
  if (c.sent_differed++ == 0)
    c.first_sent_difference = "frame " + std::to_string(c.sent) + " sent in part: " + difference;
}

// Only the rectangle around what changed goes to the window: copied to the back buffer, then sent.
void send_region(Canvas& c, const std::vector<PixelRect>& pixels) {
  PixelRect b = pixels.front();
  for (const PixelRect& p : pixels) b = bounding(b, p);
  copy_to_back_buffer(c.pixels, b);
  c.region->send(b.x0, b.y0, b.x1, b.y1);
  if (c.check) check_window(c);
}

}  // namespace

const FramebufferApi* framebuffers() {
  static const FramebufferApi api{
      reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(glfwGetProcAddress("glGenFramebuffers")),
      reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(glfwGetProcAddress("glBindFramebuffer")),
      reinterpret_cast<PFNGLFRAMEBUFFERTEXTURE2DPROC>(glfwGetProcAddress("glFramebufferTexture2D")),
      reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(glfwGetProcAddress("glCheckFramebufferStatus")),
      reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(glfwGetProcAddress("glDeleteFramebuffers")),
      reinterpret_cast<PFNGLBLITFRAMEBUFFERPROC>(glfwGetProcAddress("glBlitFramebuffer"))};
  static const bool loaded = api.gen && api.bind && api.attach && api.status && api.remove && api.blit;
  return loaded ? &api : nullptr;
}

void clear_to_background(int width, int height) {
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glViewport(0, 0, width, height);
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

bool OffscreenTarget::ready(int w, int h) {
  const FramebufferApi* fb = framebuffers();
  if (!fb) return false;
  if (framebuffer != 0 && width == w && height == h) return true;
  if (framebuffer == 0) {
    glGenTextures(1, &texture);
    fb->gen(1, &framebuffer);
  }
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  fb->bind(GL_FRAMEBUFFER, framebuffer);
  fb->attach(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
  const bool complete = fb->status(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  fb->bind(GL_FRAMEBUFFER, 0);
  width = complete ? w : 0;
  height = complete ? h : 0;
  return complete;
}

void OffscreenTarget::release() {
  if (framebuffer != 0) framebuffers()->remove(1, &framebuffer);
  if (texture != 0) glDeleteTextures(1, &texture);
  *this = {};
}

bool present_frame(Canvas& c, ImDrawData& d, int width, int height, bool anew, bool present) {
  if (width <= 0 || height <= 0) return false;  // minimised: nothing to draw into
  static bool refused = false;                  // a framebuffer the driver would not complete is not asked for again
  const bool remade = c.pixels.width != width || c.pixels.height != height;
  if (!refused && framebuffers() && !c.pixels.ready(width, height)) refused = true;
  if (refused || !framebuffers()) {
    clear_to_background(width, height);
    ImGui_ImplOpenGL3_RenderDrawData(&d);
    return true;
  }
  std::vector<ListPrint> now = prints_of(d);
  const ScreenRect display{d.DisplayPos.x, d.DisplayPos.y, d.DisplayPos.x + d.DisplaySize.x,
                           d.DisplayPos.y + d.DisplaySize.y};
  const std::vector<ScreenRect> rects = anew || remade ? std::vector{display} : damaged(c.prints, now, display);
  c.prints = std::move(now);
  if (rects.empty() && !present) return false;
  if (rects.size() == 1 && rects[0] == display) {
    draw_whole(c.pixels, d);
  } else if (!rects.empty()) {
    std::vector<PixelRect> pixels;
    for (const ScreenRect& r : rects) pixels.push_back(intersection(pixels_of(r, d), {0, 0, width, height}));
    draw_within(c.pixels, d, pixels);
    if (c.check) check_damage(c, d);
    if (c.region && !present) {  // nothing reads the back buffer
      send_region(c, pixels);
      return false;
    }
  }
  // The whole canvas to the back buffer, whose pixels are undefined after a swap.
  copy_to_back_buffer(c.pixels, {0, 0, width, height});
  return true;
}

}  // namespace attn::gui
