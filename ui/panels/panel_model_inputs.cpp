// The Model view's inputs, every one an undoable edit of the model document: the tokens (from the vocabulary),
// the model's shape (new weights drawn from the seed, as scenarios do) and every weight cell.
#include <algorithm>
#include <functional>

#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include "core/text_format.h"
#include "ui/panels/panels.h"
#include "ui/widgets/matrix_editor.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

constexpr int kVocabButtons = 64;  // a larger vocabulary is typed

// One edit of the model, one undo step per widget gesture; a refusal says why in the status line.
bool apply_model_edit(AppState& state, const std::function<void(ModelInput&)>& change) {
  const std::optional<std::string> failed = state.model_doc.edit(change, ImGui::GetActiveID());
  if (failed) state.say(*failed);
  return !failed;
}

// New tokens: the weights stay as drawn.
void apply_tokens(AppState& state, std::vector<std::string> tokens) {
  if (const std::optional<std::string> failed = state.model_doc.edit_tokens(std::move(tokens), ImGui::GetActiveID()))
    state.say(*failed);
}

// A change of shape: the weights that no longer fit are drawn from the seed, and the status line says which.
void apply_shape(AppState& state, const std::function<void(Model&)>& change) {
  std::vector<std::string> notes;
  if (apply_model_edit(state, [&](ModelInput& in) {
        change(in.model);
        notes = drop_unfit_model_weights(in.model);
      }))
    state.show_messages(notes);
}

// The tokens as words, applied on Enter or when the field is left; the vocabulary as buttons that add one.
void model_tokens_section(AppState& state) {
  const ModelInput& in = state.model_doc.input();
  TextDisabledWrapped("Tokens (from the vocabulary, separated by spaces)");
  std::string& typed = state.model_view.tokens_text;
  const ImGuiID id = ImGui::GetID("##tokens");
  if (ImGui::GetActiveID() != id && GImGui->ActiveIdPreviousFrame != id) {
    typed.clear();
    for (const std::string& t : in.tokens) typed += (typed.empty() ? "" : " ") + t;
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText("##tokens", &typed);
  if (ImGui::IsItemDeactivatedAfterEdit()) apply_tokens(state, split_words(typed));
  const int shown = std::min(static_cast<int>(in.model.vocab.size()), kVocabButtons);
  const bool full = static_cast<int>(in.tokens.size()) >= in.model.max_positions;
  ImGui::BeginDisabled(full);
  for (int v = 0; v < shown; ++v) {
    const std::string& word = in.model.vocab[static_cast<std::size_t>(v)];
    if (v > 0) SameLineIfFits(TextWidth(word) + 2 * ImGui::GetStyle().FramePadding.x, 4);
    ImGui::PushID(v);
    if (ImGui::Button(word.c_str())) {
      std::vector<std::string> tokens = in.tokens;
      tokens.push_back(word);
      apply_tokens(state, std::move(tokens));
    }
    ImGui::PopID();
  }
  ImGui::EndDisabled();
  ImGui::BeginDisabled(in.tokens.size() < 2);
  if (ImGui::Button("Remove the last token")) apply_tokens(state, {in.tokens.begin(), in.tokens.end() - 1});
  ImGui::EndDisabled();
  if (full) TextDisabledWrapped("At most " + std::to_string(in.model.max_positions) + " tokens (max_positions).");
}

// An integer field applied as it changes, kept within lo..hi (what the model allows; it checks the rest).
void model_int_field(AppState& state, const char* label, int value, int lo, int hi,
                     const std::function<void(Model&, int)>& set) {
  FitLabel(label);
  if (!ImGui::InputInt(label, &value)) return;
  value = std::clamp(value, lo, hi);
  apply_shape(state, [&](Model& m) { set(m, value); });
}

// Heads and head_dim: one pair setting every layer while the layers agree, else a pair per layer (a file may give
// each layer its own, and one pair would overwrite them all).
void model_attention_fields(AppState& state, const Model& m) {
  const AttentionConfig& first = m.layers.front().attention;
  const bool uniform = std::all_of(m.layers.begin(), m.layers.end(), [&](const ModelLayer& l) {
    return l.attention.heads == first.heads && l.attention.head_dim == first.head_dim;
  });
  const int rows = uniform ? 1 : static_cast<int>(m.layers.size());
  for (int l = 0; l < rows; ++l) {
    const AttentionConfig& a = m.layers[static_cast<std::size_t>(l)].attention;
    const std::string at = uniform ? "" : " L" + std::to_string(l);
    const auto set_layers = [uniform, l](Model& d, int AttentionConfig::*field, int n) {
      for (std::size_t k = 0; k < d.layers.size(); ++k)
        if (uniform || static_cast<int>(k) == l) d.layers[k].attention.*field = n;
    };
    ImGui::PushID(l);
    model_int_field(state, ("heads" + at).c_str(), a.heads, 1, limits::kMaxHeads,
                    [&](Model& d, int n) { set_layers(d, &AttentionConfig::heads, n); });
    model_int_field(state, ("head_dim" + at).c_str(), a.head_dim, 1, limits::kMaxHeadDim,
                    [&](Model& d, int n) { set_layers(d, &AttentionConfig::head_dim, n); });
    ImGui::PopID();
  }
}

void model_shape_section(AppState& state) {
  const Model& m = state.model_doc.model();
  model_int_field(state, "layers", static_cast<int>(m.layers.size()), 1, limits::kMaxLayers,
                  [](Model& d, int n) { set_layer_count(d, n); });
  model_int_field(state, "d_model", m.d_model, 1, limits::kMaxModelDim, [](Model& d, int n) { d.d_model = n; });
  Norm norm = m.norm;
  if (EnumCombo("norm", norm, {Norm::None, Norm::Pre, Norm::Post}))
    apply_shape(state, [&](Model& d) { d.norm = norm; });
  NormFunction function = m.norm_function;
  if (m.norm != Norm::None && EnumCombo("norm function", function, {NormFunction::LayerNorm, NormFunction::RmsNorm}))
    apply_shape(state, [&](Model& d) { d.norm_function = function; });
  FfnKind ffn = m.ffn.kind;
  if (EnumCombo("ffn", ffn, {FfnKind::None, FfnKind::Relu, FfnKind::Gelu, FfnKind::GeluTanh, FfnKind::Swiglu}))
    apply_shape(state, [&](Model& d) {
      d.ffn.kind = ffn;
      d.ffn.d_ff = ffn == FfnKind::None ? 0 : std::max(d.ffn.d_ff, 4 * d.d_model);
    });
  if (m.ffn.kind != FfnKind::None)
    model_int_field(state, "d_ff", m.ffn.d_ff, 1, limits::kMaxProjectedDim, [](Model& d, int n) { d.ffn.d_ff = n; });
  Positions positions = m.positions;
  if (EnumCombo("positions", positions, {Positions::None, Positions::Sinusoidal, Positions::Learned, Positions::Rope}))
    apply_shape(state, [&](Model& d) { set_model_positions(d, positions); });
  model_attention_fields(state, m);
  std::uint64_t seed = m.seed;
  FitLabel("seed");
  if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed))
    apply_model_edit(state, [&](ModelInput& d) { d.model.seed = seed; });
  if (ImGui::Button("Re-seed weights")) state.reseed_in_view();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next seed; every weight is drawn from it (Ctrl+R).");
}

// One weight as a matrix to edit, under a header saying whether it came from the seed.
void model_weight_section(AppState& state, const std::string& name, const Matrix& value, bool seeded,
                          const std::vector<std::string>* rows, const std::function<SharedMatrix&(Model&)>& slot) {
  std::string header = name + "  [" + std::to_string(value.rows()) + "\u00D7" + std::to_string(value.cols()) + "]";
  // The header's label is cut off by its frame, never wrapped: the note goes where it fits.
  const float room = ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - 2 * ImGui::GetStyle().FramePadding.x;
  if (seeded && TextWidth(header + "  (seeded)") <= room) header += "  (seeded)";
  header += "###" + name;
  if (!ImGui::CollapsingHeader(header.c_str())) return;
  MatrixEditorOptions o;
  o.row_labels = rows;
  const CellEdit e = MatrixEditor(name.c_str(), value, o);
  if (!e) return;
  if (const std::optional<std::string> failed =
          state.model_doc.edit_weight(slot, with_cell(value, e), ImGui::GetActiveID()))
    state.say(*failed);
}

void model_weights_section(AppState& state) {
  const Model& given = state.model_doc.model();
  const Model& r = state.model_doc.resolved();
  const auto model_part = [&](const char* name, SharedMatrix Model::*member, const std::vector<std::string>* rows) {
    if (!(r.*member)) return;
    model_weight_section(state, name, *(r.*member), !(given.*member), rows,
                         [member](Model& d) -> SharedMatrix& { return d.*member; });
  };
  model_part("embedding", &Model::embedding, &r.vocab);
  model_part("W_P", &Model::W_P, nullptr);
  for (std::size_t l = 0; l < r.layers.size(); ++l) {
    const std::string prefix = "L" + std::to_string(l) + " ";
    for (const WeightId id : kAllWeights) {
      const SharedMatrix& w = weight_slot(r.layers[l].weights, id);
      if (!w) continue;
      model_weight_section(state, prefix + weight_name(id), *w, !weight_slot(given.layers[l].weights, id), nullptr,
                           [l, id](Model& d) -> SharedMatrix& { return weight_slot(d.layers[l].weights, id); });
    }
    for (const LayerWeightField& f : kLayerWeightFields) {
      const SharedMatrix& w = r.layers[l].own.*f.slot;
      if (!w) continue;
      model_weight_section(state, prefix + f.name, *w, !(given.layers[l].own.*f.slot), nullptr,
                           [l, slot = f.slot](Model& d) -> SharedMatrix& { return d.layers[l].own.*slot; });
    }
  }
  model_part("final_gain", &Model::final_gain, nullptr);
  model_part("final_bias", &Model::final_bias, nullptr);
  model_part("unembedding", &Model::unembedding, nullptr);
}

}  // namespace

void ModelInputsPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Model inputs", pos, size);
  if (!state.model_doc.loaded()) {
    TextDisabledWrapped("File > Open a model file to edit it here.");
    ImGui::End();
    return;
  }
  const Model& m = state.model_doc.model();
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces(m.name);
  ImGui::PopFont();
  if (!m.description.empty()) TextDisabledWrapped(m.description);
  TextDisabledWrapped("File > Save (Ctrl+S) writes the model; Ctrl+Z undoes an edit.");
  ImGui::Separator();
  model_tokens_section(state);
  ImGui::Separator();
  model_shape_section(state);
  ImGui::Separator();
  model_weights_section(state);
  ImGui::End();
}

}  // namespace attn::ui
