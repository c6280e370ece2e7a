#include "app/gui/frame.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "ui/logic/glyph_set.h"
#include "ui/logic/matrix_export.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/picture_export.h"
#include "ui/widgets/theme.h"

namespace attn::gui {
namespace {

// A rectangle of the bound framebuffer as PNG (x, y from its bottom-left), top row first (OpenGL
// reads bottom-up).
bool write_region_png(const std::string& path, int x, int y, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  std::vector<unsigned char> flipped(pixels.size());
  const std::size_t row = static_cast<std::size_t>(width) * 4;
  for (int y = 0; y < height; ++y)
    std::copy_n(pixels.data() + row * static_cast<std::size_t>(height - 1 - y), row,
                flipped.data() + row * static_cast<std::size_t>(y));
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // an opaque picture
  return stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(row)) != 0;
}

// OpenGL 3 framebuffer calls, which the GL 1.1 headers do not declare: loaded through GLFW.
struct FramebufferApi {
  PFNGLGENFRAMEBUFFERSPROC gen = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind = nullptr;
  PFNGLFRAMEBUFFERTEXTURE2DPROC attach = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC status = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC remove = nullptr;
  PFNGLBLITFRAMEBUFFERPROC blit = nullptr;
  bool load() {
    gen = reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(glfwGetProcAddress("glGenFramebuffers"));
    bind = reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(glfwGetProcAddress("glBindFramebuffer"));
    attach = reinterpret_cast<PFNGLFRAMEBUFFERTEXTURE2DPROC>(glfwGetProcAddress("glFramebufferTexture2D"));
    status = reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(glfwGetProcAddress("glCheckFramebufferStatus"));
    remove = reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(glfwGetProcAddress("glDeleteFramebuffers"));
    blit = reinterpret_cast<PFNGLBLITFRAMEBUFFERPROC>(glfwGetProcAddress("glBlitFramebuffer"));
    return gen && bind && attach && status && remove && blit;
  }
};

// The whole framebuffer cleared to the panels' background colour. The panels tile the window and draw no
// background of their own (BeginPanel), so this one clear is every panel's background: a full clear, which a
// software renderer (Mesa llvmpipe: virtual machines, classroom PCs without a driver) does as a memory fill, where
// a background drawn or cleared per panel costs it about 3.5 ms of CPU a frame at 1600x900.
void clear_to_background(int width, int height) {
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glViewport(0, 0, width, height);
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

// Set by the window's refresh callback, read by the next frame.
bool exposed = false;

// The framebuffer calls, loaded once; nullptr when the driver lacks them.
const FramebufferApi* framebuffers() {
  static FramebufferApi fb;
  static const bool loaded = fb.load();
  return loaded ? &fb : nullptr;
}

// The canvas made (again) at w x h pixels; false when the driver cannot (then every frame is drawn whole, straight to
// the window).
bool ready_canvas(Canvas& c, int w, int h) {
  static bool refused = false;  // a framebuffer the driver would not complete is not asked for again
  if (!framebuffers() || refused) return false;
  const FramebufferApi& fb = *framebuffers();
  if (c.framebuffer != 0 && c.width == w && c.height == h) return true;
  if (c.framebuffer == 0) {
    glGenTextures(1, &c.texture);
    fb.gen(1, &c.framebuffer);
  }
  glBindTexture(GL_TEXTURE_2D, c.texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  fb.bind(GL_FRAMEBUFFER, c.framebuffer);
  fb.attach(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, c.texture, 0);
  const bool complete = fb.status(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  fb.bind(GL_FRAMEBUFFER, 0);
  refused = !complete;
  c.width = w;
  c.height = h;
  c.prints.clear();  // holds nothing yet
  return complete;
}

std::vector<ListPrint> prints_of(const ImDrawData& d) {
  std::vector<ListPrint> prints;
  for (int l = 0; l < d.CmdListsCount; ++l) prints.push_back(print(*d.CmdLists[l], ui::TexturePixelsVersion));
  return prints;
}

// Draws the frame's lists into the canvas within `rects` only: each cleared, then every command clipped to it (the
// whole display with one full clear, which llvmpipe does as a fill), and the canvas to the window's back buffer.
void draw_rects(const Canvas& c, ImDrawData& d, const std::vector<ScreenRect>& rects, const ScreenRect& whole) {
  const FramebufferApi& fb = *framebuffers();
  std::vector<ImVec4> clips;
  for (int l = 0; l < d.CmdListsCount; ++l)
    for (const ImDrawCmd& cmd : d.CmdLists[l]->CmdBuffer) clips.push_back(cmd.ClipRect);
  fb.bind(GL_FRAMEBUFFER, c.framebuffer);
  const ImVec2 scale = d.FramebufferScale;
  const int fb_h = static_cast<int>(d.DisplaySize.y * scale.y);  // as the backend maps clip rectangles
  for (const ScreenRect& r : rects) {
    std::size_t k = 0;
    for (int l = 0; l < d.CmdListsCount; ++l)
      for (ImDrawCmd& cmd : d.CmdLists[l]->CmdBuffer) {
        const ImVec4 o = clips[k++];
        cmd.ClipRect = {std::max(o.x, r.x0), std::max(o.y, r.y0), std::min(o.z, r.x1), std::min(o.w, r.y1)};
      }
    const int x0 = static_cast<int>(std::floor(r.x0 * scale.x)), x1 = static_cast<int>(std::ceil(r.x1 * scale.x));
    const int y0 = static_cast<int>(std::floor(r.y0 * scale.y)), y1 = static_cast<int>(std::ceil(r.y1 * scale.y));
    if (r == whole) {
      clear_to_background(c.width, c.height);
    } else {
      glEnable(GL_SCISSOR_TEST);
      glScissor(x0, fb_h - y1, x1 - x0, y1 - y0);  // GL counts rows from the bottom
      clear_to_background(c.width, c.height);
      glDisable(GL_SCISSOR_TEST);
    }
    ImGui_ImplOpenGL3_RenderDrawData(&d);
  }
  std::size_t k = 0;
  for (int l = 0; l < d.CmdListsCount; ++l)
    for (ImDrawCmd& cmd : d.CmdLists[l]->CmdBuffer) cmd.ClipRect = clips[k++];
  // The whole canvas to the window's back buffer, whose pixels are undefined after a swap.
  fb.bind(GL_READ_FRAMEBUFFER, c.framebuffer);
  fb.bind(GL_DRAW_FRAMEBUFFER, 0);
  fb.blit(0, 0, c.width, c.height, 0, 0, c.width, c.height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  fb.bind(GL_FRAMEBUFFER, 0);
}

}  // namespace

void redraw_whole(GLFWwindow*) { exposed = true; }

void apply_look(const ui::AppState& state, Look& applied) {
  const Look wanted{state.display.effective_zoom(), state.display.theme, state.display.presentation,
                    ui::characters_in_use(state)};
  if (wanted == applied) return;
  ui::apply_style(state.display.theme == ui::Theme::Light ? ui::StyleTheme::Light : ui::StyleTheme::Dark,
                  state.display.presentation, wanted.zoom);
  const ui::FontSizes base;
  ui::load_fonts({base.body * wanted.zoom, base.title * wanted.zoom}, wanted.characters);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  applied = wanted;
}

bool render_frame(Window& window, ui::AppState& state, double dt, std::optional<ImVec2> display, bool present) {
  state.poll();  // a trace the worker finished is shown from this frame on
  ui::begin_key_frame();
  ui::TakeLayoutReports();  // the layout check reports the last frame only
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (display) ImGui::GetIO().DisplaySize = *display;
  ImGui::NewFrame();
  ui::DrawAppWindow(state, window.ui, dt);
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window.glfw, &w, &h);
  ImDrawData& d = *ImGui::GetDrawData();
  Canvas& c = window.canvas;
  if (!ready_canvas(c, w, h)) {
    clear_to_background(w, h);
    ImGui_ImplOpenGL3_RenderDrawData(&d);
    return true;
  }
  std::vector<ListPrint> now = prints_of(d);
  const ScreenRect whole{0, 0, d.DisplaySize.x, d.DisplaySize.y};
  const bool anew = std::exchange(exposed, false) || c.look != window.look || c.display.x != d.DisplaySize.x ||
                    c.display.y != d.DisplaySize.y;
  std::vector<ScreenRect> rects = anew ? std::vector{whole} : damaged(c.prints, now, whole);
  c.prints = std::move(now);
  c.look = window.look;
  c.display = d.DisplaySize;
  if (rects.empty() && !present) return false;
  draw_rects(c, d, rects, whole);
  return true;
}

// Drawn into an off-screen framebuffer, with fonts rasterised at twice the size.
void export_picture(Window& window, ui::AppState& state) {
  ui::PictureRequest& r = ui::picture_request();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window.glfw, &w, &h);
  const int W = 2 * w, H = 2 * h;
  if (!framebuffers()) {
    state.message = "Pictures need OpenGL framebuffers, which this driver does not offer";
    r = {};
    return;
  }
  const FramebufferApi& fb = *framebuffers();
  GLuint texture = 0, framebuffer = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, W, H, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  fb.gen(1, &framebuffer);
  fb.bind(GL_FRAMEBUFFER, framebuffer);
  fb.attach(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
  const float zoom = state.display.zoom;
  if (fb.status(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    state.display.zoom = zoom * 2;
    apply_look(state, window.look);
    r.capturing = true;
    r.found = false;
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = {static_cast<float>(W), static_cast<float>(H)};
    io.DisplayFramebufferScale = {1, 1};
    const ImGuiConfigFlags flags = io.ConfigFlags;
    io.ConfigFlags |= ImGuiConfigFlags_NoMouse;
    ImGui::NewFrame();
    ui::DrawAppWindow(state, window.ui, 0.0);
    ImGui::Render();
    io.ConfigFlags = flags;
    clear_to_background(W, H);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (r.found) {
      const int x0 = std::clamp(static_cast<int>(r.min.x), 0, W), x1 = std::clamp(static_cast<int>(r.max.x + 1), 0, W);
      const int y0 = std::clamp(static_cast<int>(r.min.y), 0, H), y1 = std::clamp(static_cast<int>(r.max.y + 1), 0, H);
      const std::string file = ui::picture_file_name(std::filesystem::current_path().string(), r.name);
      if (x1 > x0 && y1 > y0 && write_region_png(file, x0, H - y1, x1 - x0, y1 - y0))
        state.message =
            "Saved " + file + " (" + std::to_string(x1 - x0) + "\u00D7" + std::to_string(y1 - y0) + " pixels)";
      else state.message = "The picture could not be written to " + file;
    }
  }
  fb.bind(GL_FRAMEBUFFER, 0);
  fb.remove(1, &framebuffer);
  glDeleteTextures(1, &texture);
  state.display.zoom = zoom;
  apply_look(state, window.look);
  exposed = true;  // the fonts were made twice over: the next frame is drawn whole
  r = {};
}

bool write_screenshot(const std::string& path, int width, int height) {
  glReadBuffer(GL_BACK);
  return write_region_png(path, 0, 0, width, height);
}

}  // namespace attn::gui
