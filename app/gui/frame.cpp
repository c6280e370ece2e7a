#include "app/gui/frame.h"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/io/atomic_file.h"
#include "core/validate.h"
#include "ui/logic/document_files.h"
#include "ui/logic/glyph_set.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/matrix_export.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/picture_export.h"
#include "ui/widgets/theme.h"

namespace attn::gui {
namespace {

// A rectangle of the bound framebuffer as PNG (x, y from its bottom-left), top row first (OpenGL reads bottom-up),
// encoded in memory and written atomically: a full disk leaves no truncated picture. Throws InputError.
void write_region_png(const std::string& path, int x, int y, int width, int height, Existing existing) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(x, y, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  std::vector<unsigned char> flipped(pixels.size());
  const std::size_t row = static_cast<std::size_t>(width) * 4;
  for (int y = 0; y < height; ++y)
    std::copy_n(pixels.data() + row * static_cast<std::size_t>(height - 1 - y), row,
                flipped.data() + row * static_cast<std::size_t>(y));
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // an opaque picture
  std::string png;
  const auto append = [](void* to, void* data, int size) {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 4, flipped.data(), static_cast<int>(row)))
    throw InputError("", "cannot write " + shown_path(path) + ": the picture could not be encoded as PNG");
  write_file_atomically(path, png, existing);
}

// Set by the window's refresh callback, read by the next frame.
bool exposed = false;

}  // namespace

void redraw_whole(GLFWwindow*) { exposed = true; }

void apply_look(const ui::AppState& state, Look& applied) {
  const Look wanted{state.display.effective_zoom(), state.display.theme, state.display.presentation,
                    ui::characters_in_use(state)};
  if (wanted == applied) return;
  ui::apply_style(state.display.theme == ui::Theme::Light ? ui::StyleTheme::Light : ui::StyleTheme::Dark,
                  state.display.presentation, wanted.zoom);
  ui::load_fonts(wanted.zoom, wanted.characters, state.display.presentation);
  ImGui_ImplOpenGL3_NewFrame();  // the backend's first texture made now, so none is made from the freed copies
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  ImGui::GetIO().Fonts->ClearTexData();  // the texture holds the glyphs now: ImGui's two copies are freed
  applied = wanted;
}

bool render_frame(Window& window, ui::AppState& state, double dt, std::optional<ImVec2> display, bool present) {
  state.poll();               // a trace the worker finished is shown from this frame on
  ui::FollowRealPage(state);  // a Real model page's text and knock-out, once the model's run allows
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
  const bool anew = std::exchange(exposed, false) || window.canvas_look != window.look;
  window.canvas_look = window.look;
  return present_frame(window.canvas, *ImGui::GetDrawData(), w, h, anew, present);
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
  OffscreenTarget picture;
  const float zoom = state.display.zoom;
  if (picture.ready(W, H)) {
    framebuffers()->bind(GL_FRAMEBUFFER, picture.framebuffer);
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
      const std::string file = ui::picture_file_name(ui::output_folder(state).string(), r.name);
      try {
        if (x1 <= x0 || y1 <= y0) throw InputError("", "nothing of it is inside the window");
        write_region_png(file, x0, H - y1, x1 - x0, y1 - y0, Existing::Keep);  // a fresh name, never another file
        state.message =
            "Saved " + file + " (" + std::to_string(x1 - x0) + "\u00D7" + std::to_string(y1 - y0) + " pixels)";
      } catch (const InputError& e) {
        state.message = "The picture was not saved: " + std::string(e.what());
      }
    }
  }
  framebuffers()->bind(GL_FRAMEBUFFER, 0);
  picture.release();
  state.display.zoom = zoom;
  apply_look(state, window.look);
  exposed = true;  // the fonts were made twice over: the next frame is drawn whole
  r = {};
}

void write_screenshot(const std::string& path, int width, int height) {
  glReadBuffer(GL_BACK);
  write_region_png(path, 0, 0, width, height, Existing::Replace);
}

}  // namespace attn::gui
