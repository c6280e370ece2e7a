// AppState's parts for the Model view's model: undo in the view on screen, and visits to a layer (app_state.h).
#include <utility>

#include "core/edits.h"
#include "core/io/checkpoint_text.h"
#include "core/io/json_fields.h"
#include "core/model.h"
#include "ui/logic/app_state.h"

namespace attn::ui {

bool AppState::measure_cache_tradeoff() {
  if (!real_model.loaded()) {
    say("Not measured: open a model folder in the Real model view first");
    return false;
  }
  // A model the view converted is measured as its folder has it: each point is then a conversion of the folder's.
  const RealModelRun& r = real_model.shown();
  if (!compare.sonnets) {
    tradeoff.measure(r.source, r.folder, r.text, kTypedTextName);
    return true;
  }
  try {
    const std::string text =
        read_text_file(train.texts_dir / "sonnets.txt", 16u << 20, "a text to measure on", memory_budget);
    tradeoff.measure(r.source, r.folder, checkpoint_long_text(*r.source, text, "sonnets.txt"), kSonnetsName);
    return true;
  } catch (const InputError& e) {
    say(std::string("Not measured: ") + e.what());
    return false;
  }
}

bool AppState::model_in_view() const { return view == View::Model && model_doc.loaded(); }
bool AppState::undo_in_view() {
  if (view == View::Real) return real_model.undo();
  return model_in_view() ? model_doc.undo() : undo();
}
bool AppState::redo_in_view() {
  if (view == View::Real) return real_model.redo();
  return model_in_view() ? model_doc.redo() : redo();
}
bool AppState::can_undo_in_view() const {
  if (view == View::Real) return real_model.can_undo();
  return model_in_view() ? model_doc.can_undo() : can_undo();
}
bool AppState::can_redo_in_view() const {
  if (view == View::Real) return real_model.can_redo();
  return model_in_view() ? model_doc.can_redo() : can_redo();
}

void AppState::reseed_in_view() {
  if (!model_in_view()) {
    edit(reseed_weights);
    return;
  }
  if (const std::optional<std::string> failed = model_doc.edit([](ModelInput& in) { reseed_model(in.model); }))
    message = *failed;
}

bool AppState::visit_model_layer(int layer) {
  if (!model_doc.loaded() || layer < 0 || layer >= static_cast<int>(model_doc.trace().layers.size())) {
    message = "No layer " + std::to_string(layer) + " in the model to open in the pipeline";
    return false;
  }
  const Model& m = *model_doc.shown().resolved;  // the weights the shown trace was computed with
  return visit_layer(layer_scenario(m, layer, model_doc.trace()), layer, m, View::Model);
}

bool AppState::visit_real_layer(int layer, int head) {
  if (!real_model.loaded()) return false;
  const RealModelRun& r = real_model.shown();
  const ModelTrace& t = r.baseline ? *r.baseline : *r.trace;  // the model as trained
  const Model& m = r.model->model();
  if (layer < 0 || layer >= static_cast<int>(t.layers.size())) {
    message = "No layer " + std::to_string(layer) + " in " + r.model->name() + " to open in the pipeline";
    return false;
  }
  Scenario s;
  try {  // the layer's weights are read from the folder's files now
    s = layer_scenario(m, r.model->layer(layer), layer, t.tokens,
                       t.layers[static_cast<std::size_t>(layer)].attention.x);
  } catch (const InputError& e) {
    message = "Layer " + std::to_string(layer) + " not opened: " + e.what();
    return false;
  }
  if (r.baseline) s.description += " The heads knocked out in the Real model view are back: the layer as trained.";
  if (!visit_layer(std::move(s), layer, m, View::Real)) return false;
  pipeline.head = head;  // clamped when its trace is shown
  return true;
}

bool AppState::visit_layer(Scenario s, int layer, const Model& m, View from) {
  // From one layer to another: the way back still leads to the document open before the first.
  LayerVisit visit = layer_visit_ ? *layer_visit_ : LayerVisit{layer, m.name, false, from, doc_, history_};
  if (!open(std::move(s), "")) return false;
  visit.layer = layer;
  visit.model_name = m.name;
  visit.pre_norm = m.norm == Norm::Pre;
  visit.from = from;
  layer_visit_ = std::move(visit);
  view = View::Pipeline;
  return true;
}

void AppState::end_layer_visit() {
  if (!layer_visit_) return;
  LayerVisit v = std::move(*layer_visit_);
  layer_visit_.reset();
  std::shared_ptr<const Scenario> before = v.before.scenario;
  const std::uint64_t revision = v.before.revision, counted = history_.next_revision();
  v.before.scenario = doc_.scenario;  // adopt() retires the layer's document and shows this one
  doc_ = std::move(v.before);
  history_ = std::move(v.history);
  history_.count_from(counted);
  adopt(std::move(before), revision);
  view = v.from;
}

}  // namespace attn::ui
