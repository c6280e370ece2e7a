#include "ui/logic/app_state.h"

#include <cmath>

#include <algorithm>
#include <utility>

#include "core/init.h"
#include "core/io/checkpoint_config.h"
#include "core/text_format.h"
#include "core/trace_bytes.h"
#include "core/validate.h"
#include "ui/logic/train_actions.h"

namespace attn::ui {

float window_fit(float width, float height, bool presentation) {
  const float fit = std::min(width / 1600.0f, height / 900.0f);
  const float f = presentation ? std::clamp(1.35f * fit, 1.0f, 2.5f) : std::clamp(fit, 1.0f, 2.0f);
  return std::round(f * 20.0f) / 20.0f;
}

void Display::set_zoom(float z) { zoom = std::clamp(z, kMinZoom, kMaxZoom); }

namespace {

Document first_document(Scenario scenario, std::filesystem::path path) {
  Document d;
  d.saved = scenario;
  d.scenario = std::make_shared<const Scenario>(std::move(scenario));
  d.stamp = file_stamp(path);
  d.path = std::move(path);
  return d;
}

}  // namespace

AppState::AppState(Scenario scenario, std::filesystem::path path, std::int64_t history_bytes)
    : doc_(first_document(std::move(scenario), std::move(path))),
      history_(scenario_bytes, std::min(history_bytes, history_share(memory_budget))),
      history_bytes_(history_bytes),
      computation_(*doc_.scenario) {
  model_doc.held_beside = [this] { return held_beside(WindowPart::Model); };
}

HeldBeside AppState::held_beside(WindowPart part) const {
  const std::pair<WindowPart, std::int64_t> held[] = {{WindowPart::Document, window_bytes()},
                                                      {WindowPart::Model, model_doc.held_bytes()},
                                                      {WindowPart::Training, trainer.held_bytes()}};
  HeldBeside beside;
  for (const auto& [p, bytes] : held) {
    if (p == part || bytes <= 0) continue;
    if (!beside.what.empty()) beside.what += " and ";
    beside.what += p == WindowPart::Document ? "the window"
                   : p == WindowPart::Model  ? "the Model view"
                                             : "the Train view";
    beside.bytes += bytes;
  }
  return beside;
}

void AppState::set_memory_budget(std::int64_t budget) {
  memory_budget = budget;
  history_.set_bytes(std::min(history_bytes_, history_share(budget)));
  model_doc.set_memory_budget(budget);
  real_model.set_memory_budget(budget);
  tradeoff.set_memory_budget(budget);
}

// --- The document and its history.

void AppState::adopt(std::shared_ptr<const Scenario> scenario, std::uint64_t revision) {
  const bool same_weights = same_resolved_weights(*doc_.scenario, *scenario);
  retired_documents_.push_back(std::exchange(doc_.scenario, std::move(scenario)));
  doc_.revision = revision;
  computation_.request(doc_.scenario, same_weights, pipeline.head);
  if (computation_.shown().ticket == computation_.ticket()) clamp_views();
  else decode.token = std::clamp(decode.token, 0, doc_.scenario->n_q() - 1);
}

bool AppState::edit(const std::function<void(Scenario&)>& change) { return apply(change, std::nullopt); }

bool AppState::edit_own_step(const std::function<void(Scenario&)>& change) {
  const bool applied = apply(change, std::nullopt, true);
  history_.end_gesture();  // and the next edit starts a step of its own too
  return applied;
}

bool AppState::apply(const std::function<void(Scenario&)>& change, std::optional<std::uint64_t> revision,
                     bool own_step) {
  Scenario next = *doc_.scenario;
  change(next);
  try {
    validate(next, doc_.scenario.get());
    check_window_budget(next, window_frame, memory_budget, held_beside(WindowPart::Document));
  } catch (const InputError& e) {
    message = std::string("Not applied: ") + e.what();
    return false;
  }
  // One undo entry per gesture: a drag that changes a value every frame is undone in one step.
  history_.record({doc_.scenario, doc_.revision}, active_widget && !own_step ? active_widget() : 0);
  adopt(std::make_shared<const Scenario>(std::move(next)), revision ? *revision : history_.next_revision());
  return true;
}

void AppState::restore(std::optional<Revision> r) { adopt(std::move(r->document), r->revision); }

bool AppState::undo() {
  std::optional<Revision> r = history_.undo({doc_.scenario, doc_.revision});
  if (r) restore(std::move(r));
  return r.has_value();
}

bool AppState::redo() {
  std::optional<Revision> r = history_.redo({doc_.scenario, doc_.revision});
  if (r) restore(std::move(r));
  return r.has_value();
}

bool AppState::open(Scenario scenario, std::filesystem::path path) {
  try {
    validate(scenario);
    check_window_budget(scenario, window_frame, memory_budget, held_beside(WindowPart::Document));
  } catch (const InputError& e) {
    // A document without a file (a recovered one whose original is gone) is named by the caller's words.
    message = path.empty() ? std::string(e.what()) : shown_path(path) + ": " + e.what();
    return false;
  }
  doc_.saved = scenario;
  adopt(std::make_shared<const Scenario>(std::move(scenario)), history_.next_revision());
  doc_.stamp = file_stamp(path);
  doc_.path = std::move(path);
  doc_.recovered_from.clear();
  doc_.saved_revision = doc_.revision;
  history_.clear();
  message.clear();
  layer_visit_.reset();
  return true;
}

void AppState::add_message(std::string m) {
  if (message.empty() && more_messages.empty()) message = std::move(m);
  else more_messages.push_back(std::move(m));
}

void AppState::show_messages(std::vector<std::string> notes) {
  if (notes.empty()) return;
  message = std::move(notes.front());
  more_messages.assign(std::make_move_iterator(notes.begin() + 1), std::make_move_iterator(notes.end()));
}

void AppState::next_message() {
  if (!message.empty() || more_messages.empty()) return;
  message = std::move(more_messages.front());
  more_messages.erase(more_messages.begin());
}

void AppState::mark_saved(std::filesystem::path path) {
  doc_.saved = *doc_.scenario;
  doc_.stamp = file_stamp(path);
  doc_.path = std::move(path);
  doc_.recovered_from.clear();
  doc_.saved_revision = doc_.revision;
}

void AppState::mark_recovered(std::filesystem::path original) {
  doc_.recovered_from = std::move(original);
  if (!doc_.dirty()) doc_.saved_revision = kNeverSaved;
}

void AppState::reset_to_saved() {
  if (doc_.saved_revision == kNeverSaved) {
    message = "Nothing to reset to: the recovered work has no file yet";
    return;
  }
  const Scenario saved = doc_.saved;
  history_.end_gesture();
  apply([&](Scenario& s) { s = saved; }, doc_.saved_revision);
}

std::string AppState::window_title() const {
  if (view == View::Real && real_model.loaded()) {  // a model folder: its name, and whether heads are knocked out
    const RealModelRun& r = real_model.shown();
    return "Attention Lab \u2014 " + r.model->name() + (real_model.ablated() ? " (ablated)" : "");
  }
  // The document the view on screen edits: the model in the Model view.
  const bool model = model_in_view();
  const std::filesystem::path& path = model ? model_doc.path() : doc_.path;
  const std::filesystem::path& recovered = model ? model_doc.recovered_from() : doc_.recovered_from;
  std::string title = "Attention Lab \u2014 " + (model ? model_doc.model().name : doc_.scenario->name);
  if (!recovered.empty()) title += " (" + shown_path(recovered.filename()) + ", recovered)";
  else if (!path.empty()) title += " (" + shown_path(path.filename()) + ")";
  if (model ? model_doc.dirty() : doc_.dirty()) title += " \u2022 unsaved";
  return title;
}

// --- The computation.

namespace {

// The Real model view's model among the presets, first, so the memory views can take it ("gpt2 (open)", from its
// config.json), chosen as it arrives; the folder's before it leaves. A config whose cache the views cannot draw (a
// window on some layers only) is left out.
void list_opened_model(ModelViewSettings& s, const RealModelRun& r) {
  // "SmolLM2-135M (open)": without the organisation, so that the preset box leaves the settings beside it room.
  const std::string id = r.model->name();
  const std::string name = id.substr(id.find_last_of('/') + 1) + " (open)",
                    source = r.model->converted() ? "its model.json" : "its config.json";
  if (s.opened_shape == name) return;
  std::erase_if(s.presets, [&](const ModelShape& m) { return m.name == s.opened_shape; });
  s.opened_shape.clear();
  try {
    s.presets.insert(s.presets.begin(), r.model->cache_shape(name, source));
  } catch (const InputError&) {
    return;
  }
  s.opened_shape = name;
  s.preset = name;
}

}  // namespace

void AppState::poll() {
  retired_documents_.clear();
  std::optional<std::string> failure;
  if (computation_.poll(failure)) clamp_views();
  if (failure) message = "Not computed: " + *failure;
  std::optional<std::string> model_failure;
  model_doc.poll(model_failure);
  if (model_failure) message = "The model's forward pass was not computed: " + *model_failure;
  std::optional<std::string> real_failure;  // said in the view, under the text box
  real_model.poll(real_failure);
  if (real_model.loaded()) list_opened_model(models, real_model.shown());
  std::optional<std::string> tradeoff_failure;
  tradeoff.poll(tradeoff_failure);
  if (tradeoff_failure) say("Not measured: " + *tradeoff_failure);
  trainer.poll();
  train_gradients.poll();
  // The Train view's run starts here, before the frame draws: its first snapshot is a forward pass of the model, and
  // drawing only reads what was computed.
  if (view == View::Train) ensure_training(*this);
}

void AppState::wait() {
  const bool shown = computation_.wait();
  model_doc.wait();
  real_model.wait();
  poll();  // the real model shown, so that a measurement asked for on it can start
  tradeoff.wait();
  real_view.models.wait();
  train_gradients.wait();
  poll();
  if (shown) clamp_views();  // poll() does only for what it shows itself
}

// --- The views.

void AppState::clamp_views() {
  pipeline.step = applying_step(pipeline.step, trace().attention);  // positions removed: their step goes too
  set_head(pipeline.head);
  set_decode_token(decode.token);
}

void AppState::set_step(int index) { pipeline.step = step_at(index, trace().attention); }

void AppState::set_head(int h) { pipeline.head = std::clamp(h, 0, static_cast<int>(trace().heads.size()) - 1); }

int AppState::decodable_tokens() const {
  const int n = decoded() ? static_cast<int>(decoded()->steps.size()) : doc_.scenario->n_q();
  return std::min(n, doc_.scenario->n_q());
}

void AppState::set_decode_token(int t) { decode.token = std::clamp(t, 0, decodable_tokens() - 1); }

void AppState::toggle_play() {
  pipeline.playing = !pipeline.playing;
  pipeline.play_clock = 0;
  if (pipeline.playing && step_index(pipeline.step, trace().attention) + 1 >= step_count(trace().attention))
    set_step(0);
}

void AppState::toggle_decode_play() {
  decode.playing = !decode.playing;
  decode.play_clock = 0;
  if (decode.playing && decode.token >= decodable_tokens() - 1) set_decode_token(0);
}

void AppState::advance_play(double dt) {
  const bool decoding = view == View::Decode;
  bool& playing = decoding ? decode.playing : pipeline.playing;
  double& clock = decoding ? decode.play_clock : pipeline.play_clock;
  if (!playing) return;
  clock += dt;
  if (clock < kPlaySeconds) return;
  clock = 0;
  if (decoding ? decode.token + 1 >= doc_.scenario->n_q()
               : step_index(pipeline.step, trace().attention) + 1 >= step_count(trace().attention))
    playing = false;
  else if (decoding) decode_by(1);
  else step_by(1);
}

}  // namespace attn::ui
