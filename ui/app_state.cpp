#include "ui/app_state.h"

#include <algorithm>

#include "core/validate.h"

namespace attn::ui {

AppState::AppState(Scenario scenario, std::filesystem::path path) {
  trace_ = std::make_shared<const Trace>(compute_trace(scenario));
  doc_.saved = scenario;
  doc_.scenario = std::move(scenario);
  doc_.path = std::move(path);
}

void AppState::adopt(Scenario scenario, std::shared_ptr<const Trace> trace) {
  doc_.scenario = std::move(scenario);
  trace_ = std::move(trace);
  head = std::clamp(head, 0, static_cast<int>(trace_->heads.size()) - 1);
}

bool AppState::edit(const std::function<void(Scenario&)>& change) {
  Scenario next = doc_.scenario;
  change(next);
  std::shared_ptr<const Trace> trace;
  try {
    trace = std::make_shared<const Trace>(compute_trace(next));
  } catch (const ScenarioError& e) {
    message = std::string("Not applied: ") + e.what();
    return false;
  }
  adopt(std::move(next), std::move(trace));
  doc_.dirty = true;
  return true;
}

bool AppState::open(Scenario scenario, std::filesystem::path path) {
  std::shared_ptr<const Trace> trace;
  try {
    trace = std::make_shared<const Trace>(compute_trace(scenario));
  } catch (const ScenarioError& e) {
    message = path.string() + ": " + e.what();
    return false;
  }
  doc_.saved = scenario;
  adopt(std::move(scenario), std::move(trace));
  doc_.path = std::move(path);
  doc_.dirty = false;
  message.clear();
  return true;
}

void AppState::mark_saved(std::filesystem::path path) {
  doc_.saved = doc_.scenario;
  doc_.path = std::move(path);
  doc_.dirty = false;
}

void AppState::reset_to_saved() {
  auto trace = std::make_shared<const Trace>(compute_trace(doc_.saved));
  adopt(doc_.saved, std::move(trace));
  doc_.dirty = false;
}

void AppState::set_step(int index) { step = step_at(index); }

void AppState::set_head(int h) { head = std::clamp(h, 0, static_cast<int>(trace_->heads.size()) - 1); }

std::string AppState::window_title() const {
  std::string title = "Attention Lab \u2014 " + doc_.scenario.name;
  if (!doc_.path.empty()) title += " (" + doc_.path.filename().string() + ")";
  if (doc_.dirty) title += " \u2022 unsaved";
  return title;
}

}  // namespace attn::ui
