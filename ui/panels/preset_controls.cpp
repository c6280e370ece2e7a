// The controls the model views share: the preset, and where asked the context, dtype and batch.
#include <algorithm>

#include "core/text_format.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/preset_check.h"
#include "ui/panels/panels.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

const ModelShape* PresetControls(AppState& state, bool context, bool dtype_and_batch) {
  if (state.models.presets.empty()) {
    if (state.models.presets_problem.empty())
      ImGui::TextDisabled("No model presets were found (assets/presets/models.json).");
    else TextWrappedAtSpaces(state.models.presets_problem);
    return nullptr;
  }
  ModelViewSettings& s = state.models;
  auto it = std::find_if(state.models.presets.begin(), state.models.presets.end(),
                         [&](const ModelShape& m) { return m.name == s.preset; });
  if (it == state.models.presets.end()) it = state.models.presets.begin();
  const float em = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::max(12 * em, TextWidth(it->name) + ImGui::GetFrameHeight() + 2 * em));
  if (ImGui::BeginCombo("model", it->name.c_str())) {
    for (const ModelShape& m : state.models.presets)
      if (ImGui::Selectable(m.name.c_str(), &m == &*it)) s.preset = m.name;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", it->source.c_str());
  if (context) {
    // Powers of two from 1k to 1M: how context lengths are quoted. The value is written beside the slider, not on
    // it: over the grab it was hard to read from afar.
    int exponent =
        static_cast<int>(std::lround(std::log2(static_cast<double>(std::max<std::int64_t>(1024, s.context)))));
    const std::string value = "context " + format_unit(std::ldexp(1.0, exponent), NumberUnit::Tokens);
    SameLineIfFits(LabelledWidth(8 * em, "context 128k"), 24);
    ImGui::SetNextItemWidth(8 * em);
    if (ImGui::SliderInt("##context", &exponent, 10, 20, "")) s.context = std::int64_t{1} << exponent;
    ImGui::SameLine();
    ImGui::TextUnformatted(value.c_str());
  }
  if (dtype_and_batch) {
    SameLineIfFits(LabelledWidth(5 * em, "dtype"), 24);
    ImGui::SetNextItemWidth(5 * em);
    if (ImGui::BeginCombo("dtype", std::string(to_string(s.dtype)).c_str())) {
      for (Dtype d : {Dtype::FP32, Dtype::FP16, Dtype::BF16, Dtype::FP8, Dtype::INT8, Dtype::INT4})
        if (ImGui::Selectable(std::string(to_string(d)).c_str(), d == s.dtype)) s.dtype = d;
      ImGui::EndCombo();
    }
    SameLineIfFits(LabelledWidth(6 * em, "batch"), 24);
    ImGui::SetNextItemWidth(6 * em);
    if (ImGui::InputInt("batch", &s.batch)) s.batch = std::clamp(s.batch, 1, kMaxViewBatch);
  }
  const std::string shape = it->name + ": " + plural(it->layers, "layer") + ", " + plural(it->heads, "query head") +
                            ", " +
                            (it->variant == Variant::Mla ? cached_latent_text(*it) : plural(it->kv_heads, "KV head")) +
                            ", head_dim " + std::to_string(it->head_dim) + ".";
  // Beside a lesson the source is only the model combo's tooltip: its second line here is the chart's room.
  TextDisabledWrapped(state.lesson.open() ? shape : shape + "  Source: " + it->source);
  return &*it;
}

}  // namespace attn::ui
