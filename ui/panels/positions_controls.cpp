// The inputs panel's fields for where positions enter and for sparse attention. Each is an undoable edit; the
// status line says which weights were drawn from the seed or left out.
#include <algorithm>
#include <initializer_list>
#include <string>

#include <imgui_internal.h>

#include "core/edits.h"
#include "ui/panels/panels.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

// An integer field applied as it changes, clamped to [lo, hi]; `width` wide, or up to the panel's edge when 0.
void position_int_field(AppState& state, const char* label, int value, int step, int lo, int hi,
                        const std::function<std::vector<std::string>(Scenario&, int)>& apply, float width = 0.0f) {
  if (width > 0.0f) ImGui::SetNextItemWidth(width);
  else FitLabel(label);
  if (!ImGui::InputInt(label, &value, step)) return;
  value = std::clamp(value, lo, hi);
  std::vector<std::string> notes;
  if (state.edit([&](Scenario& d) { notes = apply(d, value); })) state.show_messages(notes);
}

// The base of the frequencies, applied when the field is left ("5" on the way to "50000" is no base to compute).
void rope_base_field(AppState& state) {
  static double base = 10000.0;
  const ImGuiID id = ImGui::GetID("rope base");
  if (ImGui::GetActiveID() != id && GImGui->ActiveIdPreviousFrame != id) base = state.scenario().attention.rope_base;
  FitLabel("rope base");
  ImGui::InputDouble("rope base", &base, 0.0, 0.0, "%g");
  if (ImGui::IsItemDeactivatedAfterEdit()) state.edit_own_step([&](Scenario& d) { d.attention.rope_base = base; });
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Pair i of a width-d vector turns at base^(-2i/d) per position: a larger base, slower turns.");
}

}  // namespace

void PositionShiftField(AppState& state, float width) {
  const Scenario& s = state.scenario();
  const int most = s.attention.positions == Positions::Learned ? limits::kMaxTokens - std::max(s.n_q(), s.n_kv())
                                                               : limits::kMaxPositionOffset;
  position_int_field(state, "shift positions", s.attention.position_offset, 1, 0, most, set_position_offset, width);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Row p sits at position shift + p. RoPE's scores stay the same (only i - j enters them);\n"
        "sinusoidal and learned positions add other rows to X, so their scores change.");
}

void PositionsControls(AppState& state) {
  const AttentionConfig& a = state.scenario().attention;
  Positions p = a.positions;
  if (EnumCombo("positions", p, {Positions::None, Positions::Sinusoidal, Positions::Learned, Positions::Rope})) {
    // MLA's decoupled part starts as wide as a head (rounded up to even): the smallest that shows the idea whole.
    const int rope_dim = std::max(2, a.head_dim + a.head_dim % 2);
    std::vector<std::string> notes;
    if (state.edit([&](Scenario& d) { notes = set_positions(d, p, rope_dim); })) state.show_messages(notes);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("none: no order.  sinusoidal, learned: rows added to X.  rope: q and k turned by position.");
  if (a.positions == Positions::Sinusoidal || a.positions == Positions::Rope) rope_base_field(state);
  if (a.positions == Positions::Rope) {
    RopePairing pairing = a.rope_pairing;
    if (EnumCombo("RoPE pairs", pairing, {RopePairing::Interleaved, RopePairing::RotateHalf}))
      state.edit([&](Scenario& d) { d.attention.rope_pairing = pairing; });
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "interleaved: dims (2i, 2i+1) turn together.  rotate_half: dims (i, i + d/2), as Llama, Qwen2 and\n"
          "Mistral checkpoints turn. The same rotation on permuted columns of q and k: the scores of one are\n"
          "the other's with W_Q and W_K's columns permuted alike.");
  }
  if (a.positions != Positions::None) PositionShiftField(state);
  if (mla_with_rope(a))
    position_int_field(state, "rope_dim", a.rope_dim, 2, 2, limits::kMaxHeadDim, [](Scenario& d, int r) {
      d.attention.rope_dim = r - r % 2;
      return drop_unfit_weights(d);
    });
}

void BiasControls(AppState& state) {
  const AttentionConfig& a = state.scenario().attention;
  if (a.variant != Variant::Mla) {
    bool qkv = a.qkv_bias;
    if (ImGui::Checkbox("biases b_Q, b_K, b_V", &qkv))
      state.edit([&](Scenario& d) {
        d.attention.qkv_bias = qkv;
        if (qkv) return;
        d.weights.b_Q.reset();
        d.weights.b_K.reset();
        d.weights.b_V.reset();
      });
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Q = X W_Q + b_Q, and so for K and V (GPT-2, Qwen2). They start at 0.");
  }
  if (!a.output_projection) return;
  bool o = a.output_bias;
  if (ImGui::Checkbox("bias b_O", &o))
    state.edit([&](Scenario& d) {
      d.attention.output_bias = o;
      if (!o) d.weights.b_O.reset();
    });
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("output = concat W_O + b_O (GPT-2). It starts at 0.");
}

void SparseControls(AppState& state) {
  const AttentionConfig& a = state.scenario().attention;
  bool sparse = a.sparse.has_value();
  if (ImGui::Checkbox("sparse: top-k keys", &sparse)) {
    const std::optional<SparseConfig> c =
        sparse ? std::optional(SparseConfig{std::max(1, state.scenario().n_kv() / 2), 1, a.head_dim}) : std::nullopt;
    std::vector<std::string> notes;
    if (state.edit([&](Scenario& d) { notes = set_sparse(d, c); })) state.show_messages(notes);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("DeepSeek Sparse Attention: an indexer scores every key; each query attends to its top_k.");
  if (!a.sparse) return;
  const SparseConfig c = *a.sparse;
  const auto set = [](int SparseConfig::*field) {
    return [field](Scenario& d, int v) {
      (*d.attention.sparse).*field = v;
      return drop_unfit_weights(d);
    };
  };
  position_int_field(state, "top_k", c.top_k, 1, 1, limits::kMaxTokens, set(&SparseConfig::top_k));
  position_int_field(state, "indexer heads", c.indexer_heads, 1, 1, limits::kMaxHeads,
                     set(&SparseConfig::indexer_heads));
  position_int_field(state, "indexer dim", c.indexer_dim, 1, 1, limits::kMaxHeadDim, set(&SparseConfig::indexer_dim));
}

}  // namespace attn::ui
