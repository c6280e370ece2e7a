#include "ui/app_state.h"

#include <algorithm>

#include "core/validate.h"

namespace attn::ui {

namespace {

constexpr std::string_view kViewNames[] = {"pipeline", "decode", "compare", "memory", "cost"};
constexpr std::string_view kViewTitles[] = {"Pipeline", "Decode", "Compare", "Memory", "Cost"};

// The document as decoding sees it: nothing after the current token, so "none" becomes causal and a
// custom mask loses its future cells.
Scenario causal_version(const Scenario& s) {
  Scenario c = s;
  const Matrix m = decode_mask(s.attention, s.n_q());
  c.attention.mask = MaskKind::Custom;
  c.attention.custom_mask = m;
  return c;
}

}  // namespace

std::string_view view_name(View v) { return kViewNames[static_cast<int>(v)]; }
std::string_view view_title(View v) { return kViewTitles[static_cast<int>(v)]; }
std::optional<View> parse_view(std::string_view name) {
  for (int i = 0; i < kViewCount; ++i)
    if (kViewNames[i] == name) return static_cast<View>(i);
  return std::nullopt;
}

AppState::AppState(Scenario scenario, std::filesystem::path path) {
  doc_.saved = scenario;
  adopt(std::move(scenario), nullptr);
  doc_.path = std::move(path);
}

void AppState::adopt(Scenario scenario, std::shared_ptr<const Trace> trace) {
  doc_.scenario = std::move(scenario);
  trace_ = trace ? std::move(trace) : std::make_shared<const Trace>(compute_trace(doc_.scenario));
  head = std::clamp(head, 0, static_cast<int>(trace_->heads.size()) - 1);
  // Decoding needs the tokens' own keys; a cross-attention scenario has a fixed key side instead.
  decoded_.reset();
  causal_trace_ = trace_;
  decode_error_.clear();
  try {
    decoded_ = std::make_shared<const DecodeTrace>(decode(doc_.scenario));
    causal_trace_ = std::make_shared<const Trace>(compute_trace(causal_version(doc_.scenario)));
  } catch (const ScenarioError& e) {
    decode_error_ = e.what();
  }
  decode_step = std::clamp(decode_step, 0, doc_.scenario.n_q() - 1);
}

void AppState::set_decode_step(int t) { decode_step = std::clamp(t, 0, doc_.scenario.n_q() - 1); }

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
  // One undo entry per gesture: a drag that changes a value every frame is undone in one step.
  const unsigned gesture = active_widget ? active_widget() : 0;
  if (gesture == 0 || gesture != undo_gesture_) {
    undo_.push_back({doc_.scenario, doc_.revision});
    if (undo_.size() > kHistoryLimit) undo_.erase(undo_.begin());
    undo_gesture_ = gesture;
  }
  redo_.clear();
  adopt(std::move(next), std::move(trace));
  doc_.revision = ++next_revision_;
  return true;
}

void AppState::restore(std::vector<Revision>& from, std::vector<Revision>& to) {
  to.push_back({doc_.scenario, doc_.revision});
  Revision r = std::move(from.back());
  from.pop_back();
  adopt(std::move(r.scenario), nullptr);
  doc_.revision = r.revision;
  undo_gesture_ = 0;
}

bool AppState::undo() {
  if (undo_.empty()) return false;
  restore(undo_, redo_);
  return true;
}

bool AppState::redo() {
  if (redo_.empty()) return false;
  restore(redo_, undo_);
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
  doc_.revision = doc_.saved_revision = ++next_revision_;
  undo_.clear();
  redo_.clear();
  message.clear();
  return true;
}

void AppState::mark_saved(std::filesystem::path path) {
  doc_.saved = doc_.scenario;
  doc_.path = std::move(path);
  doc_.saved_revision = doc_.revision;
}

void AppState::reset_to_saved() {
  const Scenario saved = doc_.saved;
  undo_gesture_ = 0;
  if (edit([&](Scenario& s) { s = saved; })) doc_.revision = doc_.saved_revision;
}

void AppState::set_step(int index) { step = step_at(index); }

void AppState::set_head(int h) { head = std::clamp(h, 0, static_cast<int>(trace_->heads.size()) - 1); }

std::string AppState::window_title() const {
  std::string title = "Attention Lab \u2014 " + doc_.scenario.name;
  if (!doc_.path.empty()) title += " (" + doc_.path.filename().string() + ")";
  if (doc_.dirty()) title += " \u2022 unsaved";
  return title;
}

}  // namespace attn::ui
