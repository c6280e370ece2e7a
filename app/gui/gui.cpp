#include "app/gui/gui.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/assets.h"
#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/gui/frame_drivers.h"
#include "app/cli/handout.h"
#include "app/gui/user_files.h"
#include "core/io/presets_json.h"
#include "core/io/scenario_json.h"
#include "core/validate.h"
#include "ui/panels/app_window.h"
#include "core/edits.h"
#include "ui/logic/glyph_set.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/keys.h"
#include "ui/panels/layout_check_frame.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/matrix_export.h"
#include "ui/widgets/picture_export.h"
#include "ui/logic/step_matrices.h"
#include "ui/widgets/theme.h"

namespace attn::gui {

// From the command line's library.
using cli::assets_dir;
using cli::default_scenario;
using cli::kExitBadInput;
using cli::kExitFailure;
using cli::kExitOk;
using cli::trace_to_latex;
using cli::trace_to_markdown;
using cli::UsageError;

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
    std::copy_n(pixels.data() + row * static_cast<std::size_t>(height - 1 - y), row, flipped.data() + row * static_cast<std::size_t>(y));
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // an opaque picture
  return stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(row)) != 0;
}

// The window as drawn: the back buffer before it is shown.
bool write_screenshot(const std::string& path, int width, int height) {
  glReadBuffer(GL_BACK);
  return write_region_png(path, 0, 0, width, height);
}

void dump_state(const std::string& path, const ui::AppState& state) {
  const ui::StepInfo& info = ui::step_info(state.step);
  const nlohmann::ordered_json j = {{"view", ui::view_name(state.view)},
                                    {"step", ui::step_index(state.step)},
                                    {"step_name", info.name},
                                    {"head", state.head},
                                    {"decode_step", state.decode_step + 1},
                                    {"lesson", state.lesson >= 0 ? state.lessons[static_cast<std::size_t>(state.lesson)].name : ""},
                                    {"lesson_page", state.lesson_page + 1},
                                    {"scenario", state.scenario().name},
                                    {"tokens", state.scenario().input.tokens},
                                    {"file", state.document().path.string()},
                                    {"unsaved", state.document().dirty()},
                                    {"presentation", state.presentation},
                                    {"zoom", state.zoom},
                                    {"recovery_offered", state.recovery.has_value()}};
  std::ofstream(path) << j.dump(2) << '\n';
}

// The look that fonts and style were last built for; rebuilt between frames when zoom, theme or
// presentation change (fonts are rasterised at the size shown, so text stays crisp at every zoom).
struct Look {
  float zoom = 0;
  ui::Theme theme = ui::Theme::Dark;
  bool presentation = false;
  std::u32string characters;  // beyond ASCII, that the fonts hold glyphs for (a token typed in Chinese adds some)
  bool operator==(const Look&) const = default;
};

void apply_look(const ui::AppState& state, Look& applied) {
  const Look wanted{state.effective_zoom(), state.theme, state.presentation, ui::characters_in_use(state)};
  if (wanted == applied) return;
  ui::apply_style(state.theme == ui::Theme::Light ? ui::StyleTheme::Light : ui::StyleTheme::Dark, state.presentation, wanted.zoom);
  const ui::FontSizes base;
  ui::load_fonts({base.body * wanted.zoom, base.title * wanted.zoom}, wanted.characters);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  applied = wanted;
}

// The recovery file follows the document: written a couple of seconds after a change, removed once
// nothing is unsaved or the app closes properly.
struct Autosave {
  std::filesystem::path file;
  bool enabled;
  std::uint64_t written_revision = 0;
  double last_write = -1e9;
  static constexpr double kSeconds = 2.0;

  void tick(ui::AppState& state, double now) {
    if (!enabled) return;
    if (state.recovery && state.recovery_answered) {  // restored (now the document) or discarded
      remove();
      state.recovery.reset();
    }
    if (state.recovery) return;  // never overwrite an offer that has not been answered
    const ui::Document& d = state.document();
    if (!d.dirty()) {
      if (written_revision) remove();
      return;
    }
    if (d.revision == written_revision || now - last_write < kSeconds) return;
    try {
      write_recovery(file, *d.scenario, d.path.string());
      written_revision = d.revision;
      last_write = now;
    } catch (const std::exception& e) {
      state.message = std::string("Autosave failed: ") + e.what();
    }
  }
  void finish(const ui::AppState& state) {
    if (enabled && !state.recovery) remove();  // closed properly: nothing to recover
  }
  void remove() {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    written_revision = 0;
  }
};

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

// OpenGL 3 framebuffer calls, which the GL 1.1 headers do not declare: loaded through GLFW.
struct FramebufferApi {
  PFNGLGENFRAMEBUFFERSPROC gen = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind = nullptr;
  PFNGLFRAMEBUFFERTEXTURE2DPROC attach = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC status = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC remove = nullptr;
  bool load() {
    gen = reinterpret_cast<PFNGLGENFRAMEBUFFERSPROC>(glfwGetProcAddress("glGenFramebuffers"));
    bind = reinterpret_cast<PFNGLBINDFRAMEBUFFERPROC>(glfwGetProcAddress("glBindFramebuffer"));
    attach = reinterpret_cast<PFNGLFRAMEBUFFERTEXTURE2DPROC>(glfwGetProcAddress("glFramebufferTexture2D"));
    status = reinterpret_cast<PFNGLCHECKFRAMEBUFFERSTATUSPROC>(glfwGetProcAddress("glCheckFramebufferStatus"));
    remove = reinterpret_cast<PFNGLDELETEFRAMEBUFFERSPROC>(glfwGetProcAddress("glDeleteFramebuffers"));
    return gen && bind && attach && status && remove;
  }
};


// A widget asked for its picture: draw one frame at twice the size into an off-screen framebuffer,
// with fonts rasterised at twice the size, and cut the widget out of it.
void export_picture(GLFWwindow* window, ui::AppState& state, Look& applied) {
  ui::PictureRequest& r = ui::picture_request();
  FramebufferApi fb;
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  const int W = 2 * w, H = 2 * h;
  if (!fb.load()) {
    state.message = "Pictures need OpenGL framebuffers, which this driver does not offer";
    r = {};
    return;
  }
  GLuint texture = 0, framebuffer = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, W, H, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  fb.gen(1, &framebuffer);
  fb.bind(GL_FRAMEBUFFER, framebuffer);
  fb.attach(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
  const float zoom = state.zoom;
  if (fb.status(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
    state.zoom = zoom * 2;
    apply_look(state, applied);
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
    ui::DrawAppWindow(state, 0.0);
    ImGui::Render();
    io.ConfigFlags = flags;
    glViewport(0, 0, W, H);
    glClearColor(0.08f, 0.085f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (r.found) {
      const int x0 = std::clamp(static_cast<int>(r.min.x), 0, W), x1 = std::clamp(static_cast<int>(r.max.x + 1), 0, W);
      const int y0 = std::clamp(static_cast<int>(r.min.y), 0, H), y1 = std::clamp(static_cast<int>(r.max.y + 1), 0, H);
      const std::string file = ui::picture_file_name(std::filesystem::current_path().string(), r.name);
      if (x1 > x0 && y1 > y0 && write_region_png(file, x0, H - y1, x1 - x0, y1 - y0))
        state.message = "Saved " + file + " (" + std::to_string(x1 - x0) + "\u00D7" + std::to_string(y1 - y0) + " pixels)";
      else
        state.message = "The picture could not be written to " + file;
    }
  }
  fb.bind(GL_FRAMEBUFFER, 0);
  fb.remove(1, &framebuffer);
  glDeleteTextures(1, &texture);
  state.zoom = zoom;
  apply_look(state, applied);
  r = {};
}

// `display`: the size the layout is made for, when a driver sets one (the layout sweep), else the window's.
void render_frame(GLFWwindow* window, ui::AppState& state, double dt, std::optional<ImVec2> display) {
  state.poll();  // a trace the worker finished is shown from this frame on
  ui::begin_key_frame();
  ui::TakeLayoutReports();  // the layout check reports the last frame only
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (display) ImGui::GetIO().DisplaySize = *display;
  ImGui::NewFrame();
  ui::DrawAppWindow(state, dt);
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.08f, 0.085f, 0.1f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

// --check-layout: what the last frame could not show, one line each.
int report_layout(std::ostream& err) {
  const std::vector<std::string> problems = ui::LayoutProblemsOfFrame();
  for (const std::string& p : problems) err << "layout: " << p << '\n';
  return problems.empty() ? kExitOk : kExitFailure;
}

}  // namespace

int run_gui(const GuiOptions& o, std::ostream& err) {
  const std::filesystem::path path = o.scenario.empty() ? default_scenario() : std::filesystem::path(o.scenario);
  Scenario scenario;
  try {
    scenario = load_scenario_file(path);
  } catch (const ScenarioError& e) {
    err << "attention-lab: " << path.string() << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  try {
    o.overrides.apply(scenario, err);
    if (o.tokens) set_token_count(scenario, *o.tokens);
    validate(scenario);
  } catch (const ScenarioError& e) {
    err << "attention-lab: " << path.string() << " with the given options: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const UsageError& e) {
    err << "attention-lab: " << e.what() << '\n';
    return kExitBadInput;
  }
  std::optional<ui::Step> start_step;
  if (o.step) {
    start_step = ui::parse_step(*o.step);
    if (!start_step) {
      err << "attention-lab: --step: expected 0-" << ui::kStepCount - 1 << " or a step name (" << ui::step_names()
          << ") but found '" << *o.step << "'\n";
      return kExitBadInput;
    }
  }
  ui::AppState state(std::move(scenario), path);
  if (start_step) state.step = *start_step;
  if (o.view) {
    const auto view = ui::parse_view(*o.view);
    if (!view) {
      err << "attention-lab: --view: expected one of pipeline, decode, compare, memory, cost but found '" << *o.view << "'\n";
      return kExitBadInput;
    }
    state.view = *view;
  }
  try {
    state.presets = load_presets_file(assets_dir() / "presets" / "models.json");
  } catch (const ScenarioError& e) {
    state.message = "Model presets not loaded (" + (assets_dir() / "presets" / "models.json").string() + "): " + e.what();
  }
  // The lessons: a broken lesson file is reported and left out, the others stay available.
  state.scenarios_dir = assets_dir() / "scenarios";
  state.handout = [](const Trace& t, bool latex) { return latex ? trace_to_latex(t) : trace_to_markdown(t); };
  for (const std::filesystem::path& f : ui::lesson_files(assets_dir() / "lessons")) {
    try {
      state.lessons.push_back(ui::load_lesson_file(f, state.scenarios_dir));
    } catch (const ScenarioError& e) {
      state.message = "Lesson " + f.filename().string() + " left out: " + e.what();
    }
  }
  if (o.lesson) {
    const auto it = std::find_if(state.lessons.begin(), state.lessons.end(), [&](const ui::Lesson& l) {
      return l.name == *o.lesson || l.name == std::filesystem::path(*o.lesson).stem().string().substr(
                                                   std::min<std::size_t>(2, std::filesystem::path(*o.lesson).stem().string().size()));
    });
    if (it == state.lessons.end()) {
      err << "attention-lab: --lesson: unknown lesson '" << *o.lesson << "' (the lessons are:";
      for (const ui::Lesson& l : state.lessons) err << ' ' << l.name;
      err << ")\n";
      return kExitBadInput;
    }
    if (o.page > static_cast<int>(it->pages.size())) {
      err << "attention-lab: --page: lesson '" << it->name << "' has " << it->pages.size() << " pages but found " << o.page << '\n';
      return kExitBadInput;
    }
    if (!ui::ApplyLessonPage(state, static_cast<int>(it - state.lessons.begin()), o.page - 1)) {
      err << "attention-lab: --lesson: " << state.message << '\n';
      return kExitBadInput;
    }
  }
  if (o.preset) {
    const bool known = std::any_of(state.presets.begin(), state.presets.end(), [&](const ModelShape& m) { return m.name == *o.preset; });
    if (!known) {
      err << "attention-lab: --preset: unknown model '" << *o.preset << "' (see attention-lab kv --list)\n";
      return kExitBadInput;
    }
    state.models.preset = *o.preset;
  }
  if (o.decode_tokens) {
    if (*o.decode_tokens > state.scenario().n_q()) {
      err << "attention-lab: --decode-step: the scenario has " << state.scenario().n_q() << " tokens but found "
          << *o.decode_tokens << '\n';
      return kExitBadInput;
    }
    state.decode_step = *o.decode_tokens - 1;
  }
  if (o.cell) {
    const ui::StepMatrix r = ui::step_result(state.trace(), state.step, o.head.value_or(state.head) < static_cast<int>(state.trace().heads.size()) ? o.head.value_or(state.head) : 0);
    if (o.cell->first >= r.m->rows() || o.cell->second >= r.m->cols()) {
      err << "attention-lab: --cell: the " << r.name << " matrix of step " << ui::step_info(state.step).name << " is "
          << r.m->rows() << " x " << r.m->cols() << " (rows and columns numbered from 0) but found " << o.cell->first << ','
          << o.cell->second << '\n';
      return kExitBadInput;
    }
    state.pinned_cell = o.cell;
  }
  if (o.head) {
    if (*o.head >= static_cast<int>(state.trace().heads.size())) {
      err << "attention-lab: --head: the scenario has " << state.trace().heads.size() << " head(s), numbered from 0, but found "
          << *o.head << '\n';
      return kExitBadInput;
    }
    state.head = *o.head;
  }

  // What the user left last time. A capture neither reads nor writes it: the same command gives the same
  // picture on every machine.
  const bool capture = o.capture();
  ui::SetLayoutCheck(o.check_layout || o.layout_sweep);
  const bool automated = o.automated();  // a capture, a benchmark or a soak: no user files, no vsync
  const std::filesystem::path settings_file = config_dir() / "settings.json";
  const std::filesystem::path recovery_file = config_dir() / "recovery.json";
  Settings settings = automated ? Settings{} : load_settings(settings_file);
  state.theme = (o.theme ? *o.theme : settings.theme) == "light" ? ui::Theme::Light : ui::Theme::Dark;
  state.zoom = automated ? 1.0f : settings.zoom;
  state.presentation = o.presentation;
  state.recent_files = settings.recent;
  std::string recovery_problem;
  if (auto r = automated ? std::nullopt : read_recovery(recovery_file, &recovery_problem))
    state.recovery = ui::RecoveryOffer{std::move(r->scenario), r->original, r->when};
  else if (!recovery_problem.empty())
    state.message = "A recovery file could not be read and was left alone: " + recovery_problem;
  const int width = o.size_given || automated ? o.width : settings.width;
  const int height = o.size_given || automated ? o.height : settings.height;

  glfwSetErrorCallback([](int code, const char* text) { fprintf(stderr, "GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    err << "attention-lab: cannot open a window (no display? run under xvfb-run for --screenshot)\n";
    return kExitFailure;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(width, height, state.window_title().c_str(), nullptr, nullptr);
  if (!window) {
    err << "attention-lab: cannot create an OpenGL 3.3 window\n";
    glfwTerminate();
    return kExitFailure;
  }
  glfwMakeContextCurrent(window);
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

  int exit_code = kExitOk;
  std::string title = state.window_title();
  Look applied{};
  Autosave autosave{recovery_file, !automated};
  const std::unique_ptr<FrameDriver> driver = o.bench_frames ? make_bench_frames(o.bench_frames)
                                              : o.soak       ? make_soak(o.soak, o.overrides.seed.value_or(1))  // --seed, parsed with trace's options
                                              : o.layout_sweep ? make_layout_sweep()
                                                               : nullptr;
  WindowPlacement placement;
  double last = glfwGetTime();
  for (int frame = 0; !state.quit_confirmed; ++frame) {
    glfwPollEvents();
    if (glfwWindowShouldClose(window)) {  // the close button asks like Ctrl+Q does
      glfwSetWindowShouldClose(window, GLFW_FALSE);
      state.quit_requested = true;
    }
    const double now = glfwGetTime();
    if (driver) driver->before_frame(state);
    const std::optional<ImVec2> display = driver ? driver->display_size() : std::nullopt;
    if (display) {
      state.display_w = display->x;
      state.display_h = display->y;
    } else {
      int w = 0, h = 0;
      glfwGetWindowSize(window, &w, &h);
      state.display_w = static_cast<float>(w);
      state.display_h = static_cast<float>(h);
    }
    apply_look(state, applied);
    placement.follow(window, state.fullscreen);
    // A capture shows the newest state of the document, not a trace the worker is still replacing (two frames:
    // a view laid out for the new trace settles in the second).
    if (capture && frame + 2 >= o.frames) state.wait();
    render_frame(window, state, now - last, display);
    last = now;
    autosave.tick(state, now);
    if (ui::picture_request().widget != 0) export_picture(window, state, applied);
    if (state.window_title() != title) {
      title = state.window_title();
      glfwSetWindowTitle(window, title.c_str());
    }
    if (capture && frame + 1 >= o.frames) {
      if (o.check_layout) exit_code = report_layout(err);
      int w = 0, h = 0;
      glfwGetFramebufferSize(window, &w, &h);
      if (!o.screenshot.empty() && !write_screenshot(o.screenshot, w, h)) {
        err << "attention-lab: cannot write " << o.screenshot << '\n';
        exit_code = kExitFailure;
      }
      break;
    }
    glfwSwapBuffers(window);
    if (driver) {
      glFinish();  // the frame is only done when the GL driver has drawn it
      if (!driver->after_frame(state)) break;
    }
  }
  if (driver) exit_code = driver->report(state, std::cout, err);
  if (!o.dump_state.empty()) dump_state(o.dump_state, state);
  if (!automated) {
    autosave.finish(state);
    settings.theme = state.theme == ui::Theme::Light ? "light" : "dark";
    settings.zoom = state.zoom;
    settings.recent = state.recent_files;
    if (!state.fullscreen) glfwGetWindowSize(window, &settings.width, &settings.height);
    try {
      save_settings(settings, settings_file);
    } catch (const std::exception& e) {
      err << "attention-lab: settings not saved: " << e.what() << '\n';
    }
  }

  ui::ReleaseHeatmapTextures();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace attn::gui
