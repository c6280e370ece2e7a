// The Real model view before a model is open: how to open one, and the models this computer has as a table, one click
// opening a row. The hub cache is read on a worker as the view first shows, so the window never waits on the disk.
#include <cstdlib>

#include <imgui.h>

#include "core/io/hub_cache.h"
#include "core/text_format.h"
#include "ui/logic/document_files.h"
#include "ui/panels/panels.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

void start_scan(AppState& state) {
  state.real_view.models.start(hub_cache_dir([](const char* name) { return std::getenv(name); }), state.memory_budget);
}

// One model: a row that opens it, or says why it cannot be opened.
void model_row(AppState& state, const CachedModel& m) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::PushID(m.id.c_str());
  const ImGuiSelectableFlags flags =
      ImGuiSelectableFlags_SpanAllColumns | (m.usable ? 0 : ImGuiSelectableFlags_Disabled);
  if (ImGui::Selectable(m.id.c_str(), false, flags)) open_model_folder(state, m.path);
  if (m.usable && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ("Open " + m.path.string()).c_str());
  ImGui::PopID();
  ImGui::TableNextColumn();
  if (m.config) {
    const CheckpointConfig& c = *m.config;
    ImGui::TextUnformatted(std::string(to_string(c.family)).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted((std::to_string(c.layers) + " \u00D7 " + std::to_string(c.heads)).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::to_string(c.kv_heads).c_str());
  } else {
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
  }
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(m.parameters > 0 ? thousands(m.parameters).c_str() : "");
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(m.bytes > 0 ? (binary_size(m.bytes) + " " + m.dtype).c_str() : "");
  ImGui::TableNextColumn();
  if (m.usable) ImGui::TextUnformatted("opens");
  else TextWrappedAtSpaces("cannot open: " + m.why_not, GetStyle().disagree);
}

void models_table(AppState& state, const std::vector<CachedModel>& models) {
  constexpr ImGuiTableFlags flags =
      ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH;
  if (!ImGui::BeginTable("models", 7, flags)) return;
  ImGui::TableSetupColumn("model");
  ImGui::TableSetupColumn("family");
  ImGui::TableSetupColumn("layers \u00D7 heads");
  ImGui::TableSetupColumn("KV heads");
  ImGui::TableSetupColumn("parameters");
  ImGui::TableSetupColumn("weights");
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const CachedModel& m : models) model_row(state, m);
  ImGui::EndTable();
}

}  // namespace

void HubScanButton(AppState& state, const char* label) {
  HubScan& scan = state.real_view.models;
  ImGui::BeginDisabled(scan.looking());
  if (ImGui::Button(label)) start_scan(state);
  ImGui::EndDisabled();
  if (scan.looking()) {
    ImGui::SameLine();
    ImGui::TextDisabled("looking\u2026");
  }
  if (!scan.error().empty()) TextWrappedAtSpaces(scan.error(), GetStyle().disagree);
}

void RealModelList(AppState& state) {
  HubScan& scan = state.real_view.models;
  scan.poll();
  if (!scan.models() && !scan.looking() && scan.error().empty()) start_scan(state);
  TitleText("A real model");
  TextWrappedAtSpaces(
      "Pick one of the models this computer has, or open a Hugging Face model folder (GPT-2, SmolLM2, Qwen2.5, "
      "Llama: config.json, safetensors weights and tokenizer.json) with File > Open model folder\u2026");
  ImGui::Spacing();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Models on this computer");
  ImGui::SameLine();
  HubScanButton(state, "Look again");
  if (!scan.models()) return;
  if (scan.models()->empty())
    TextDisabledWrapped("None in the Hugging Face cache yet: huggingface-cli download gpt2 fetches GPT-2 small.");
  else models_table(state, *scan.models());
}

}  // namespace attn::ui
