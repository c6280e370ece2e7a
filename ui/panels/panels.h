#pragma once
// The panels of the main window, one file each. Each reads AppState and changes it only through its methods (edit,
// set_step, show_view, say, ...), except its own view state (state.pipeline for the pipeline, state.model_view for
// the Model view, ...), which it reads and writes as its own.
#include <imgui.h>

#include "ui/logic/app_state.h"

namespace attn::ui {

// A fixed panel of the main window at pos with size: no moving, resizing or collapsing, since the layout
// follows the window. Always pair with ImGui::End().
void BeginPanel(const char* name, ImVec2 pos, ImVec2 size, ImGuiWindowFlags extra = 0);

void PipelinePanel(AppState& state, ImVec2 pos, ImVec2 size);     // step strip and the current step as its equation
void InputsPanel(AppState& state, ImVec2 pos, ImVec2 size);       // tokens, configuration, matrix editors
void ExplainPanel(AppState& state, ImVec2 pos, ImVec2 size);      // what the step does, why, the hovered cell
void HeadsPanel(AppState& state, ImVec2 pos, ImVec2 size);        // every head's weights; arc view of the current head
void HelpOverlay(AppState& state);                                // F1: every shortcut
void DecodePanel(AppState& state, ImVec2 pos, ImVec2 size);       // token by token through the KV cache
void ComparePanel(AppState& state, ImVec2 pos, ImVec2 size);      // the four variants' caches as areas
void CompareMeasured(AppState& state);  // what smaller caches cost the opened real model, measured
void MemoryPanel(AppState& state, ImVec2 pos, ImVec2 size);       // cache bytes against context, real models
void CostPanel(AppState& state, ImVec2 pos, ImVec2 size);         // FLOPs per generated token
void ModelPanel(AppState& state, ImVec2 pos, ImVec2 size);        // a transformer around attention, layer by layer
void ModelInputsPanel(AppState& state, ImVec2 pos, ImVec2 size);  // the model: tokens, shape, weights
void TrainPanel(AppState& state, ImVec2 pos, ImVec2 size);        // a model learning a task, live
void TrainInputsPanel(AppState& state, ImVec2 pos, ImVec2 size);  // the task, the model's shape, the optimiser
void RealModelPanel(AppState& state, ImVec2 pos, ImVec2 size);    // a real model's predictions, loss and heads
void RealModelInputsPanel(AppState& state, ImVec2 pos, ImVec2 size);
void RealModelList(AppState& state);
// A button that looks at the Hugging Face cache again on a worker, "looking…" while it does, why it could not.
void HubScanButton(AppState& state, const char* label);  // before a model is open: the models this computer has, a
                                                         // click opening one the folder, the text, the ablation
void LayerBreadcrumb(AppState& state);  // above the pipeline on a model's layer: the way back to the Model view
void LessonPanel(AppState& state, ImVec2 pos, ImVec2 size);   // the current lesson page
float LessonPanelHeight(const AppState& state, float width);  // what the page needs to show its text whole

// The softmax step's online mode: one row of head `head` computed over blocks of keys, block by block, ending on
// the dense row (ui/panels/online_softmax_view.cpp).
void OnlineSoftmaxView(AppState& state, const Trace& t, int head, float cell);

// The scores and rope steps' geometry mode: a query and a key of head `head` as arrows on a pair of dimensions,
// within `height` (ui/panels/geometry_view.cpp).
void GeometryView(AppState& state, const Trace& t, int head, float height);

// The next field takes the width its label leaves, so every label ends at the panel's right edge.
void FitLabel(const char* label);
// A combo of an enum's values by their names (to_string); true when the user picked one.
template <typename E>
bool EnumCombo(const char* label, E& value, std::initializer_list<E> options) {
  FitLabel(label);
  bool changed = false;
  if (ImGui::BeginCombo(label, std::string(to_string(value)).c_str())) {
    for (E o : options)
      if (ImGui::Selectable(std::string(to_string(o)).c_str(), o == value)) {
        value = o;
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

// Where positions enter and the sparse attention of the inputs panel, each field an undoable edit.
void PositionsControls(AppState& state);
// The shift of every position (the shift experiment), in the inputs panel and in the positions and rope steps:
// `width` wide, or up to the panel's edge when 0.
void PositionShiftField(AppState& state, float width = 0.0f);
void SparseControls(AppState& state);
// The biases on q, k, v (not mla) and after W_O (with it): each a checkbox, the biases starting at 0.
void BiasControls(AppState& state);

// The preset picker (and context, dtype, batch) the model views share; nullptr without presets.
const ModelShape* PresetControls(AppState& state, bool context, bool dtype_and_batch);

}  // namespace attn::ui
