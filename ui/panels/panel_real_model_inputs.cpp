// The Real model view's inputs: the model folder (typed, or one of the models this computer has), the class's text
// and the heads knocked out.

#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/io/hub_cache.h"
#include "core/text_format.h"
#include "ui/logic/document_files.h"
#include "ui/panels/panels.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

void folder_field(AppState& state) {
  RealModelView& v = state.real_view;
  ImGui::TextUnformatted("Model folder");
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Open").x - 3 * ImGui::GetStyle().ItemSpacing.x);
  const bool entered =
      ImGui::InputTextWithHint("##folder", "~/models/gpt2", &v.folder_text, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || entered) && !v.folder_text.empty()) open_model_folder(state, v.folder_text);
}

// What the hub cache holds, looked for on a worker when asked (it reads every model's headers): the window draws on
// while the disk is read.
void cached_models(AppState& state) {
  HubScan& scan = state.real_view.models;
  scan.poll();
  HubScanButton(state, scan.models() ? "Look again" : "Models on this computer");
  if (!scan.models()) return;
  if (scan.models()->empty())
    TextDisabledWrapped("No models in the Hugging Face cache (huggingface-cli download gpt2).");
  for (const CachedModel& m : *scan.models()) {
    ImGui::PushID(m.id.c_str());
    std::string line = m.id;
    if (m.config)
      line += "  " + std::to_string(m.config->layers) + " x " + std::to_string(m.config->heads) + " heads (" +
              std::to_string(m.config->kv_heads) + " KV), " + binary_size(m.bytes);
    if (!m.usable) line += "  cannot open: " + m.why_not;
    if (ImGui::Selectable(line.c_str(), false, m.usable ? 0 : ImGuiSelectableFlags_Disabled))
      open_model_folder(state, m.path);
    ImGui::PopID();
  }
}

// What the opened model is: its family, layers and heads, its parameters.
void model_facts(const RealModelRun& r, std::int64_t context) {
  const CheckpointConfig& c = r.model->config();
  TextWrappedAtSpaces(r.model->name());
  TextDisabledWrapped(plural(c.layers, "layer") + " \u00D7 " + plural(c.heads, "head") +
                      (c.kv_heads != c.heads ? " sharing " + plural(c.kv_heads, "KV head") : "") + ", d_model " +
                      std::to_string(c.d_model));
  if (const std::string made = conversion_text(*r.model); !made.empty()) TextDisabledWrapped(made);
  if (const std::string again = reexpansion_text(r.model->model(), context); !again.empty())
    TextDisabledWrapped(again + ".");
}

void ablation_controls(AppState& state) {
  ImGui::TextUnformatted("Knock heads out");
  TextDisabledWrapped(
      "Right-click a head's tile to knock it out, a layer's name (L5) for all its heads: the output becomes zero or "
      "its mean over the positions (Replace by, under the ranked heads). A click on a tile opens the head in the "
      "pipeline.");
  const Ablation& now = state.real_model.state().ablation;
  if (!now.empty()) {
    std::string list = ablation_list(now);
    for (std::size_t at = list.find(','); at != std::string::npos; at = list.find(',', at + 2))
      list.insert(at + 1, " ");
    TextWrappedAtSpaces(plural(std::int64_t(now.heads.size()), "head") + " knocked out: " + list);
  }
}

}  // namespace

void RealModelInputsPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Real model##inputs", pos, size);
  TitleText("Real model");
  folder_field(state);
  if (state.real_model.loaded()) {  // before, the view itself lists the models this computer has
    cached_models(state);
    ImGui::Separator();
    model_facts(state.real_model.shown(), state.models.context);
    ImGui::Separator();
    ablation_controls(state);
  }
  ImGui::End();
}

}  // namespace attn::ui
