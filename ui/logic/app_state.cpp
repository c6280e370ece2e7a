#include "ui/logic/app_state.h"

#include <cmath>

#include <algorithm>
#include <utility>

#include "core/init.h"
#include "core/trace_bytes.h"
#include "core/validate.h"

namespace attn::ui {

float window_fit(float width, float height, bool presentation) {
  const float fit = std::min(width / 1600.0f, height / 900.0f);
  const float f = presentation ? std::clamp(1.35f * fit, 1.0f, 2.5f) : std::clamp(fit, 1.0f, 2.0f);
  return std::round(f * 20.0f) / 20.0f;
}

namespace {

constexpr std::string_view kViewNames[] = {"pipeline", "decode", "compare", "memory", "cost"};
constexpr std::string_view kViewTitles[] = {"Pipeline", "Decode", "Compare", "Memory", "Cost"};

// What the undo history holds: a long sequence of 2048-token documents would otherwise fill the memory.
std::int64_t history_bytes(const auto& revisions) {
  std::int64_t bytes = 0;
  for (const auto& r : revisions) bytes += scenario_bytes(*r.scenario);
  return bytes;
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
  doc_.scenario = std::make_shared<const Scenario>(std::move(scenario));
  show(compute_all(*doc_.scenario, ++ticket_));  // the first trace is there before the first frame
  doc_.path = std::move(path);
}

void AppState::adopt(std::shared_ptr<const Scenario> scenario, std::uint64_t revision) {
  if (!same_resolved_weights(*doc_.scenario, *scenario)) doc_weights_.reset();
  else if (!doc_weights_ && now_.ticket == ticket_) doc_weights_ = std::make_shared<const Weights>(now_.trace->weights);
  retired_documents_.push_back(std::exchange(doc_.scenario, std::move(scenario)));
  doc_.revision = revision;
  ++ticket_;
  if (compute_in_background(*doc_.scenario))
    worker_.submit(doc_.scenario, ticket_, doc_weights_);
  else
    show(compute_all(*doc_.scenario, ticket_));
  decode_step = std::clamp(decode_step, 0, doc_.scenario->n_q() - 1);
}

void AppState::show(Computed c) {
  // A view that made an edit may still hold the old result until the frame ends: it is kept until the next
  // poll(), then freed on the worker.
  if (now_.trace) retired_.push_back(std::exchange(now_, std::move(c)));
  else now_ = std::move(c);
  head = std::clamp(head, 0, static_cast<int>(now_.trace->heads.size()) - 1);
  set_decode_step(decode_step);
}

void AppState::poll() {
  for (Computed& old : retired_) worker_.dispose(std::move(old));
  retired_.clear();
  retired_documents_.clear();
  std::optional<Computed> c = worker_.take();
  if (!c) return;
  if (!c->trace) {  // it failed: the last complete trace stays, and the message says why
    failed_ticket_ = c->ticket;
    message = "Not computed: " + c->decode_error;
    return;
  }
  // A result older than the one shown (an undo back to a small document overtook it) is dropped.
  if (c->ticket > now_.ticket) show(std::move(*c));
  else worker_.dispose(std::move(*c));
}

std::shared_ptr<const Weights> AppState::document_weights() const {
  if (now_.ticket == ticket_) return {now_.trace, &now_.trace->weights};
  if (!doc_weights_) doc_weights_ = std::make_shared<const Weights>(resolve_weights(*doc_.scenario));
  return doc_weights_;
}

void AppState::wait() {
  // Even when nothing is awaited: a stale request may still be running, and its result must meet poll's
  // check now, not later (the newest request was queued last, so it is the last one done).
  worker_.wait();
  poll();
}

void AppState::set_decode_step(int t) {
  const int n = now_.decoded ? static_cast<int>(now_.decoded->steps.size()) : doc_.scenario->n_q();
  decode_step = std::clamp(t, 0, std::min(n, doc_.scenario->n_q()) - 1);
}

void AppState::toggle_play() {
  playing = !playing;
  play_clock = 0;
  if (playing && step == step_at(kStepCount - 1)) set_step(0);
}

void AppState::toggle_decode_play() {
  decode_playing = !decode_playing;
  play_clock = 0;
  const int n = now_.decoded ? static_cast<int>(now_.decoded->steps.size()) : doc_.scenario->n_q();
  if (decode_playing && decode_step >= std::min(n, doc_.scenario->n_q()) - 1) set_decode_step(0);
}

bool AppState::edit(const std::function<void(Scenario&)>& change) { return apply(change, std::nullopt); }

bool AppState::edit_own_step(const std::function<void(Scenario&)>& change) {
  const bool applied = apply(change, std::nullopt, true);
  undo_gesture_ = 0;  // and the next edit starts a step of its own too
  return applied;
}

bool AppState::apply(const std::function<void(Scenario&)>& change, std::optional<std::uint64_t> revision, bool own_step) {
  Scenario next = *doc_.scenario;
  change(next);
  try {
    validate(next);
  } catch (const ScenarioError& e) {
    message = std::string("Not applied: ") + e.what();
    return false;
  }
  // One undo entry per gesture: a drag that changes a value every frame is undone in one step.
  const unsigned gesture = active_widget && !own_step ? active_widget() : 0;
  if (gesture == 0 || gesture != undo_gesture_) {
    undo_.push_back({doc_.scenario, doc_.revision});
    while (undo_.size() > kHistoryLimit || (undo_.size() > 1 && history_bytes(undo_) > kHistoryBytes))
      undo_.erase(undo_.begin());
    undo_gesture_ = gesture;
  }
  redo_.clear();
  adopt(std::make_shared<const Scenario>(std::move(next)), revision ? *revision : ++next_revision_);
  return true;
}

void AppState::restore(std::vector<Revision>& from, std::vector<Revision>& to) {
  to.push_back({doc_.scenario, doc_.revision});
  Revision r = std::move(from.back());
  from.pop_back();
  adopt(std::move(r.scenario), r.revision);
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
  try {
    validate(scenario);
  } catch (const ScenarioError& e) {
    message = path.string() + ": " + e.what();
    return false;
  }
  doc_.saved = scenario;
  adopt(std::make_shared<const Scenario>(std::move(scenario)), ++next_revision_);
  doc_.path = std::move(path);
  doc_.saved_revision = doc_.revision;
  undo_.clear();
  redo_.clear();
  message.clear();
  return true;
}

void AppState::mark_saved(std::filesystem::path path) {
  doc_.saved = *doc_.scenario;
  doc_.path = std::move(path);
  doc_.saved_revision = doc_.revision;
}

void AppState::reset_to_saved() {
  const Scenario saved = doc_.saved;
  undo_gesture_ = 0;
  apply([&](Scenario& s) { s = saved; }, doc_.saved_revision);
}

void AppState::set_step(int index) { step = step_at(index); }

void AppState::set_head(int h) { head = std::clamp(h, 0, static_cast<int>(now_.trace->heads.size()) - 1); }

std::string AppState::window_title() const {
  std::string title = "Attention Lab \u2014 " + doc_.scenario->name;
  if (!doc_.path.empty()) title += " (" + doc_.path.filename().string() + ")";
  if (doc_.dirty()) title += " \u2022 unsaved";
  return title;
}

}  // namespace attn::ui
