#include "app/gui.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/assets.h"
#include "app/args.h"
#include "app/commands.h"
#include "core/io/presets_json.h"
#include "core/io/scenario_json.h"
#include "core/validate.h"
#include "ui/app_window.h"
#include "ui/heatmap.h"
#include "ui/keys.h"
#include "ui/theme.h"

namespace attn::cli {
namespace {

// The back buffer as PNG, top row first (OpenGL reads bottom-up).
bool write_screenshot(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  std::vector<unsigned char> flipped(pixels.size());
  const std::size_t row = static_cast<std::size_t>(width) * 4;
  for (int y = 0; y < height; ++y)
    std::copy_n(pixels.data() + row * static_cast<std::size_t>(height - 1 - y), row, flipped.data() + row * static_cast<std::size_t>(y));
  for (std::size_t i = 3; i < flipped.size(); i += 4) flipped[i] = 255;  // an opaque picture
  return stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(row)) != 0;
}

void dump_state(const std::string& path, const ui::AppState& state) {
  const ui::StepInfo& info = ui::step_info(state.step);
  const nlohmann::ordered_json j = {{"view", ui::view_name(state.view)},
                                    {"step", ui::step_index(state.step)},
                                    {"step_name", info.name},
                                    {"head", state.head},
                                    {"decode_step", state.decode_step + 1},
                                    {"scenario", state.scenario().name},
                                    {"file", state.document().path.string()},
                                    {"unsaved", state.document().dirty}};
  std::ofstream(path) << j.dump(2) << '\n';
}

void render_frame(GLFWwindow* window, ui::AppState& state, double dt) {
  ui::begin_key_frame();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
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
      err << "attention-lab: --step: expected 0-" << ui::kStepCount - 1
          << " or a step name (inputs, projections, scores, scale, mask, softmax, weighted_sum, head_outputs, concat, "
             "output) but found '"
          << *o.step << "'\n";
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
  state.pinned_cell = o.cell;
  if (o.head) {
    if (*o.head >= static_cast<int>(state.trace().heads.size())) {
      err << "attention-lab: --head: the scenario has " << state.trace().heads.size() << " head(s), numbered from 0, but found "
          << *o.head << '\n';
      return kExitBadInput;
    }
    state.head = *o.head;
  }

  glfwSetErrorCallback([](int code, const char* text) { fprintf(stderr, "GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    err << "attention-lab: cannot open a window (no display? run under xvfb-run for --screenshot)\n";
    return kExitFailure;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(o.width, o.height, state.window_title().c_str(), nullptr, nullptr);
  if (!window) {
    err << "attention-lab: cannot create an OpenGL 3.3 window\n";
    glfwTerminate();
    return kExitFailure;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(o.screenshot.empty() ? 1 : 0);

  // Installed before ImGui's backend, which chains to it: every press is seen, however short.
  glfwSetKeyCallback(window, [](GLFWwindow*, int key, int, int action, int mods) {
    if (action == GLFW_PRESS) ui::queue_key_press(key, mods);
  });
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // the layout follows the window; nothing to remember
  if (!o.screenshot.empty()) ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NoMouse;  // the same picture every time
  ui::apply_style();
  ui::load_fonts({});
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  int exit_code = kExitOk;
  std::string title = state.window_title();
  double last = glfwGetTime();
  for (int frame = 0; !glfwWindowShouldClose(window) && !state.quit_requested; ++frame) {
    glfwPollEvents();
    const double now = glfwGetTime();
    render_frame(window, state, now - last);
    last = now;
    if (state.window_title() != title) {
      title = state.window_title();
      glfwSetWindowTitle(window, title.c_str());
    }
    if (!o.screenshot.empty() && frame + 1 >= o.frames) {
      int w = 0, h = 0;
      glfwGetFramebufferSize(window, &w, &h);
      if (!write_screenshot(o.screenshot, w, h)) {
        err << "attention-lab: cannot write " << o.screenshot << '\n';
        exit_code = kExitFailure;
      }
      break;
    }
    glfwSwapBuffers(window);
  }
  if (!o.dump_state.empty()) dump_state(o.dump_state, state);

  ui::ReleaseHeatmapTextures();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace attn::cli
