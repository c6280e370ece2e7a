// AppState's parts for the Model view's model: undo in the view on screen, and visits to a layer (app_state.h).
#include <utility>

#include "core/edits.h"
#include "ui/logic/app_state.h"

namespace attn::ui {

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
  Scenario s = layer_scenario(m, layer, model_doc.trace());
  // From one layer to another: the way back still leads to the document open before the first.
  LayerVisit visit = layer_visit_ ? *layer_visit_ : LayerVisit{layer, m.name, false, doc_, history_};
  if (!open(std::move(s), "")) return false;
  visit.layer = layer;
  visit.model_name = m.name;
  visit.pre_norm = m.norm == Norm::Pre;
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
  view = View::Model;
}

}  // namespace attn::ui
