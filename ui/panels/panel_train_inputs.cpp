// The Train view's settings: the task, the model's shape and the optimiser. They take effect on Restart, so a
// misclick never throws a run away; the button says when they differ from the run on screen.
#include <algorithm>
#include <cstdint>

#include <imgui.h>

#include "core/text_format.h"
#include "ui/logic/train_actions.h"
#include "ui/panels/panels.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

bool train_int_field(const char* label, int& value, int lo, int hi) {
  FitLabel(label);
  int v = value;
  if (!ImGui::InputInt(label, &v)) return false;
  value = std::clamp(v, lo, hi);
  return true;
}

void task_section(TrainSettings& s) {
  Task& t = s.run.task;
  EnumCombo("task", t.kind,
            {TaskKind::Induction, TaskKind::PreviousToken, TaskKind::Copy, TaskKind::Reverse, TaskKind::Sort,
             TaskKind::Text});
  if (t.kind != TaskKind::Text) train_int_field("vocabulary", t.vocab, 4, 512);
  train_int_field("sequence length", t.seq_len, kMinTaskSeqLen, 256);
}

void shape_section(TaskModelShape& m) {
  train_int_field("layers", m.layers, 1, 8);
  train_int_field("heads", m.heads, 1, 16);
  train_int_field("d_model", m.d_model, 1, 512);
  EnumCombo("variant", m.variant, {Variant::Mha, Variant::Gqa, Variant::Mqa, Variant::Mla});
  if (m.variant == Variant::Gqa) {
    int kv = effective_kv_heads(m);
    if (train_int_field("KV heads", kv, 1, 16)) m.kv_heads = kv;
  }
  if (m.variant == Variant::Mla) {
    int latent = effective_latent_dim(m);
    if (train_int_field("latent d_c", latent, 1, 512)) m.latent_dim = latent;
  }
  EnumCombo("positions", m.positions, {Positions::None, Positions::Sinusoidal, Positions::Learned, Positions::Rope});
  EnumCombo("norm", m.norm, {Norm::None, Norm::Pre, Norm::Post});
  EnumCombo("ffn", m.ffn, {FfnKind::None, FfnKind::Relu, FfnKind::Gelu, FfnKind::Swiglu});
}

// A new model of a shape, or the Model view's (a file opened there, a snapshot) trained on from its weights.
void model_section(TrainSettings& s) {
  if (!s.start) return shape_section(s.shape);
  TextWrappedAtSpaces("The Model view's " + trained_model_description(s) + ".");
  if (ImGui::Button("A new model of a shape instead", {-1, 0})) s.start.reset();
}

// Trains the model the Model view holds, at once: the way to go on training a saved model.
void train_model_view_model(AppState& state) {
  if (!ImGui::Button("Train the Model view's model", {-1, 0})) {
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "\"%s\" from its weights, on the task above (File > Open a model file, or a snapshot's "
          "Open in Model view); its vocabulary must be the task's",
          state.model_doc.model().name.c_str());
    return;
  }
  TrainSettings& s = state.train.settings;
  const std::shared_ptr<const Model> before = s.start;
  s.start = std::make_shared<const Model>(state.model_doc.model());
  if (!restart_training(state)) s.start = before;
}

void optimiser_section(TrainSettings& s) {
  FitLabel("learning rate");
  double lr = s.run.adamw.lr;
  if (ImGui::InputDouble("learning rate", &lr, 0.0, 0.0, "%.4g")) s.run.adamw.lr = std::clamp(lr, 1e-6, 1.0);
  train_int_field("batch", s.run.batch, 1, 256);
  train_int_field("warm-up steps", s.run.schedule.warmup, 0, 10000);
  train_int_field("steps", s.steps, 1, 100000);
  FitLabel("seed");
  std::uint64_t seed = s.run.seed;
  if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed)) s.run.seed = seed;
}

}  // namespace

void TrainInputsPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Training", pos, size);
  TrainSettings& s = state.train.settings;
  ImGui::PushItemWidth(-1);
  TitleText("Task");
  task_section(s);
  ImGui::Spacing();
  TitleText("Model");
  model_section(s);
  ImGui::Spacing();
  TitleText("Optimiser (AdamW)");
  optimiser_section(s);
  ImGui::PopItemWidth();
  ImGui::Spacing();
  const bool changed = !state.trainer.ready() || !same_run(s, state.trainer.settings());
  if (changed) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(accent_colour()));
  if (ImGui::Button("Restart with these settings", {-1, 0})) restart_training(state);
  if (changed) ImGui::PopStyleColor();
  if (const std::string budget = train_budget_line(s, state.memory_budget, state.held_beside(WindowPart::Training));
      !budget.empty())
    TextDisabledWrapped(budget);
  if (!s.start) train_model_view_model(state);
  if (changed)
    TextDisabledWrapped(s.start ? "The settings differ from the run on screen; Restart trains the Model view's model "
                                  "with them."
                                : "The settings differ from the run on screen; Restart trains a new model with them.");
  if (!state.train.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.72f, 0.35f, 1.0f));
    TextWrappedAtSpaces(state.train.error);
    ImGui::PopStyleColor();
  }
  ImGui::End();
}

}  // namespace attn::ui
