#include "app/gui/gui.h"

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "app/cli/commands.h"
#include "app/gui/autosave.h"
#include "app/gui/frame.h"
#include "app/gui/frame_drivers.h"
#include "app/gui/start_state.h"
#include "app/gui/user_files.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "ui/logic/document_files.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/picture_export.h"

namespace attn::gui {

// From the command line's library.
using cli::kExitFailure;
using cli::kExitOk;

namespace {

// Full screen on the primary monitor (F11) and back to the window as it was.
struct WindowPlacement {
  bool fullscreen = false;
  int x = 0, y = 0, w = 0, h = 0;
  void follow(GLFWwindow* window, bool want) {
    if (want == fullscreen) return;
    fullscreen = want;
    if (want) {
      glfwGetWindowPos(window, &x, &y);
      glfwGetWindowSize(window, &w, &h);
      GLFWmonitor* monitor = glfwGetPrimaryMonitor();
      const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr;
      if (mode) glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
    } else {
      glfwSetWindowMonitor(window, nullptr, x, y, w, h, 0);
    }
  }
};

// --check-layout: what the last frame could not show, one line each.
int report_layout(std::ostream& err) {
  const std::vector<std::string> problems = ui::LayoutProblemsOfFrame();
  for (const std::string& p : problems) err << "layout: " << p << '\n';
  return problems.empty() ? kExitOk : kExitFailure;
}

// What the user left last time (theme, zoom, size, recent files, unsaved work). A capture, a benchmark or a
// soak neither reads nor writes it: the same command gives the same picture on every machine.
struct UserFiles {
  bool used = false;
  std::filesystem::path settings_file = config_dir() / "settings.json";
  Settings settings;
  Autosave autosave;  // this window's recovery entry
};

UserFiles read_user_files(const GuiOptions& o, ui::AppState& state) {
  UserFiles u;
  u.used = !o.automated();
  std::string settings_problem;
  if (u.used) u.settings = load_settings(u.settings_file, &settings_problem);
  if (!settings_problem.empty()) state.add_message("Settings: " + settings_problem);
  state.display.theme = (o.theme ? *o.theme : u.settings.theme) == "light" ? ui::Theme::Light : ui::Theme::Dark;
  state.display.zoom = o.zoom ? *o.zoom : u.used ? u.settings.zoom : 1.0f;
  state.display.presentation = o.presentation;
  state.recent_files = u.settings.recent;
  if (!o.memory_budget && u.settings.memory_budget) state.set_memory_budget(*u.settings.memory_budget);
  if (!u.used) return u;
  u.autosave = Autosave::start(config_dir(), state);
  return u;
}

void write_user_files(UserFiles& u, const ui::AppState& state, GLFWwindow* window, std::ostream& err) {
  if (!u.used) return;
  u.settings.theme = state.display.theme == ui::Theme::Light ? "light" : "dark";
  u.settings.zoom = state.display.zoom;
  u.settings.recent = state.recent_files;
  if (!state.display.fullscreen) glfwGetWindowSize(window, &u.settings.width, &u.settings.height);
  try {
    save_settings(u.settings, u.settings_file);
  } catch (const std::exception& e) {
    err << "attention-lab: settings not saved: " << e.what() << '\n';
  }
}

// A GLFW window with an OpenGL 3.3 core context and Dear ImGui on it; nullptr (err says why) without a display.
GLFWwindow* open_window(int width, int height, const std::string& title, bool automated, std::ostream& err) {
  glfwSetErrorCallback([](int code, const char* text) { std::cerr << "GLFW error " << code << ": " << text << '\n'; });
  if (!glfwInit()) {
    err << "attention-lab: cannot open a window (no display? run under xvfb-run for --screenshot)\n";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!window) {
    err << "attention-lab: cannot create an OpenGL 3.3 window\n";
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSetWindowRefreshCallback(window, redraw_whole);
  glfwSwapInterval(automated ? 0 : 1);
  // Installed before ImGui's backend, which chains to it: every press is seen, however short.
  glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int mods) {
    if (action == GLFW_PRESS) ui::queue_key_press(key, mods);
  });
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // the layout follows the window; nothing to remember
  if (automated) ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NoMouse;  // the same picture every time
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  return window;
}

void close_window(GLFWwindow* window) {
  ui::ReleaseHeatmapTextures();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

std::unique_ptr<FrameDriver> make_driver(const GuiOptions& o) {
  if (o.bench_frames) return make_bench_frames(o.bench_frames);
  if (o.soak) return make_soak(o.soak, o.overrides.seed.value_or(1));  // --seed, parsed with trace's options
  if (o.layout_sweep) return make_layout_sweep(o.sweep_skips_training);
  return nullptr;
}

// The size the frame is laid out for: the driver's, or the window's.
std::optional<ImVec2> follow_display(GLFWwindow* window, ui::AppState& state, const FrameDriver* driver) {
  const std::optional<ImVec2> display = driver ? driver->display_size() : std::nullopt;
  if (display) {
    state.display.width = display->x;
    state.display.height = display->y;
  } else {
    int w = 0, h = 0;
    glfwGetWindowSize(window, &w, &h);
    state.display.width = static_cast<float>(w);
    state.display.height = static_cast<float>(h);
  }
  return display;
}

// The last frame of a capture: the layout check's findings and the screenshot. Returns the exit code.
int finish_capture(const GuiOptions& o, GLFWwindow* window, std::ostream& err) {
  int exit_code = o.check_layout ? report_layout(err) : kExitOk;
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  if (!o.screenshot.empty()) try {
      write_screenshot(o.screenshot, w, h);
    } catch (const InputError& e) {
      err << "attention-lab: --screenshot: " << e.what() << '\n';
      exit_code = cli::kExitBadInput;
    }
  return exit_code;
}

// How long the display shows a frame: its refresh interval (60 Hz when it does not say).
double display_period() {
  const GLFWvidmode* mode = glfwGetPrimaryMonitor() ? glfwGetVideoMode(glfwGetPrimaryMonitor()) : nullptr;
  return 1.0 / (mode && mode->refreshRate > 0 ? mode->refreshRate : 60);
}

// Waits out the rest of the display's refresh interval. With a GPU the swap has waited for it already; drawn in
// software (llvmpipe, a virtual machine) nothing waits, and frames the display never shows would take the cores from
// the trace's worker: at 1600x900 llvmpipe shades for about 13 ms of CPU a frame.
void pace_frame(double frame_start, double period) {
  const double left = frame_start + period - glfwGetTime();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// What --check-damage found: exits 1 if a frame drawn in part differed from the same frame drawn whole, or the
// window from the canvas after a frame sent to it in part.
int report_damage_check(const Canvas& c, int exit_code, std::ostream& out) {
  out << "damage check: " << c.checked << " frames drawn in part, " << c.differed
      << " differed from the frame drawn whole"
      << (c.first_difference.empty() ? "" : " (first: " + c.first_difference + ")") << "; " << c.sent
      << " sent to the window in part, " << c.sent_differed << " left it different from the canvas"
      << (c.first_sent_difference.empty() ? "" : " (first: " + c.first_sent_difference + ")") << '\n';
  return c.differed > 0 || c.sent_differed > 0 ? kExitFailure : exit_code;
}

// Frames until the user quits, the capture is taken or the driver is done. Returns the exit code.
int frame_loop(const GuiOptions& o, Window& window, ui::AppState& state, Autosave& autosave, std::ostream& err) {
  const std::unique_ptr<FrameDriver> driver = make_driver(o);
  int exit_code = kExitOk;
  std::string title = state.window_title();
  WindowPlacement placement;
  double last = glfwGetTime();
  // A person's frames, and a driver's that stands for one; captures, the soak and the sweep go as fast as they draw.
  const bool paced = driver ? driver->paced() : !o.capture();
  const double period = display_period();
  for (int frame = 0; !state.pending.quit_confirmed(); ++frame) {
    const double frame_start = glfwGetTime();
    glfwPollEvents();
    if (glfwWindowShouldClose(window.glfw)) {  // the close button asks like Ctrl+Q does
      glfwSetWindowShouldClose(window.glfw, GLFW_FALSE);
      state.pending.ask_to_quit();
    }
    const double now = glfwGetTime();
    if (driver) driver->before_frame(state);
    const std::optional<ImVec2> display = follow_display(window.glfw, state, driver.get());
    int fb_w = 0, fb_h = 0;  // what the window itself holds grows with its frame buffers
    glfwGetFramebufferSize(window.glfw, &fb_w, &fb_h);
    state.set_window_size(fb_w, fb_h);
    apply_look(state, window.look);
    placement.follow(window.glfw, state.display.fullscreen);
    // A capture shows the newest state of the document, not a trace the worker is still replacing (two frames:
    // a view laid out for the new trace settles in the second).
    if (o.capture() && frame + 2 >= o.frames) state.wait();
    const bool drawn = render_frame(window, state, now - last, display, !paced || o.capture());
    last = now;
    autosave.tick(state, now);
    if (ui::picture_request().widget != 0) export_picture(window, state);
    if (state.window_title() != title) glfwSetWindowTitle(window.glfw, (title = state.window_title()).c_str());
    if (o.capture() && frame + 1 >= o.frames) {
      exit_code = finish_capture(o, window.glfw, err);
      break;
    }
    if (drawn) glfwSwapBuffers(window.glfw);  // else the window shows this frame already
    if (driver) {
      glFinish();  // the frame is only done when the GL driver has drawn it
      if (!driver->after_frame(state)) break;
    }
    if (paced) pace_frame(frame_start, period);
  }
  return driver ? driver->report(state, std::cout, err) : exit_code;
}

}  // namespace

int run_gui(const GuiOptions& o, std::ostream& err) {
  const std::unique_ptr<ui::AppState> state = start_state(o, err);
  if (!state) return cli::kExitBadInput;
  ui::SetLayoutCheck(o.check_layout || o.layout_sweep);
  UserFiles user = read_user_files(o, *state);
  const int width = o.size_given || !user.used ? o.width : user.settings.width;
  const int height = o.size_given || !user.used ? o.height : user.settings.height;
  // The settings' budget (or size) is held as --memory-budget is: a window that cannot fit in it does not open.
  if (!o.memory_budget && user.settings.memory_budget) try {
      ui::check_window_fits(width, height, state->memory_budget);
      ui::check_window_budget(state->scenario(), ui::window_frame_bytes(width, height), state->memory_budget);
    } catch (const InputError& e) {
      err << "attention-lab: " << shown_path(user.settings_file) << ": memory_budget: " << e.what() << '\n';
      return cli::kExitBadInput;
    }
  Window window;
  window.ui.gallery.open = o.gallery;
  window.glfw = open_window(width, height, state->window_title(), o.automated(), err);
  if (!window.glfw) return cli::kExitBadInput;  // no display: the environment given, not a bug
  window.canvas.check = o.check_damage;
  window.canvas.region = region_copy(window.glfw);
  int exit_code = frame_loop(o, window, *state, user.autosave, err);
  if (o.check_damage) exit_code = report_damage_check(window.canvas, exit_code, std::cout);
  if (!o.dump_state.empty()) try {
      dump_state(o.dump_state, *state);
    } catch (const InputError& e) {
      err << "attention-lab: --dump-state: " << e.what() << '\n';
      exit_code = cli::kExitBadInput;
    }
  user.autosave.finish();
  write_user_files(user, *state, window.glfw, err);
  close_window(window.glfw);
  return exit_code;
}

}  // namespace attn::gui
