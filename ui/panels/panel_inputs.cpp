// The document's inputs, every one editable: tokens, the attention configuration, embeddings and weights.
#include <algorithm>
#include <cmath>
#include <functional>

#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include "core/edits.h"
#include "core/init.h"
#include "core/mask.h"
#include "core/trace_bytes.h"
#include "ui/logic/chart_axes.h"
#include "ui/panels/panels.h"
#include "ui/widgets/matrix_editor.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

constexpr int kMaxScaleTokens = 4096;
constexpr int kTokenRowsShown = 12;

// One list of token labels to rename, remove (keeping at least one) and add to.
void token_list(AppState& state, const char* id, const std::vector<std::string>& tokens,
                const std::function<void(Scenario&, int, const std::string&)>& rename,
                const std::function<void(Scenario&, int)>& remove, const std::function<void(Scenario&)>& add) {
  ImGui::PushID(id);
  int removed = -1;
  // A long list scrolls in a box of its own, and only its visible rows are built (2048 tokens stay cheap).
  const int n = static_cast<int>(tokens.size());
  const bool boxed = n > kTokenRowsShown;
  if (boxed) ImGui::BeginChild("list", {0, kTokenRowsShown * ImGui::GetFrameHeightWithSpacing()}, false);
  ImGuiListClipper clipper;
  clipper.Begin(n, ImGui::GetFrameHeightWithSpacing());
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImGui::PushID(i);
      std::string label = tokens[static_cast<std::size_t>(i)];
      ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - 8);
      if (ImGui::InputText("##label", &label)) state.edit([&](Scenario& d) { rename(d, i, label); });
      ImGui::SameLine();
      ImGui::BeginDisabled(tokens.size() < 2);
      if (ImGui::Button("\u00D7", {ImGui::GetFrameHeight(), 0})) removed = i;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Remove '%s'", label.c_str());
      ImGui::EndDisabled();
      ImGui::PopID();
    }
  }
  if (boxed) ImGui::EndChild();
  if (removed >= 0) state.edit([&](Scenario& d) { remove(d, removed); });
  if (ImGui::Button("+ Add token")) state.edit(add);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Its embedding row is drawn from the seed, so it is the same every time.");
  ImGui::PopID();
}

void tokens_section(AppState& state) {
  const Scenario& s = state.scenario();
  TextDisabledWrapped(s.context ? "Tokens (queries)" : "Tokens (queries and keys)");
  token_list(
      state, "queries", s.input.tokens,
      [](Scenario& d, int i, const std::string& l) { d.input.tokens[static_cast<std::size_t>(i)] = l; }, remove_token,
      [](Scenario& d) { add_token(d, fresh_token_label(d)); });
  if (!s.context) return;
  TextDisabledWrapped("Context tokens (keys and values)");
  token_list(
      state, "context", s.context->tokens,
      [](Scenario& d, int i, const std::string& l) { d.context->tokens[static_cast<std::size_t>(i)] = l; },
      remove_context_token, [](Scenario& d) { add_context_token(d, fresh_context_label(d)); });
}

// The sequence length as a slider (up to 4096 tokens, new ones drawn from the seed), with what it costs:
// the n^2 score matrices grow under the user's hand, and big traces are computed on the worker.
void scale_section(AppState& state) {
  const Scenario& s = state.scenario();
  const HeldBeside beside = state.held_beside(WindowPart::Document);
  const int most = max_window_tokens(s, kMaxScaleTokens, state.window_frame, state.memory_budget, beside.bytes);
  int n = s.n_q();
  FitLabel("tokens (T)");
  if (ImGui::SliderInt("tokens (T)", &n, 1, std::max(most, s.n_q()), "%d", ImGuiSliderFlags_AlwaysClamp))
    state.edit([n](Scenario& d) { set_token_count(d, n); });
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Drag to change the sequence length. New tokens get embedding rows drawn from the seed;\n"
        "Ctrl+click to type a number. At most %d here (%s attention cells in all, and the window within the\n"
        "memory budget of %s: --memory-budget SIZE, or \"memory_budget\" in the settings file).",
        most, format_exact(double(limits::kMaxAttentionCells), NumberUnit::Plain).c_str(),
        format_unit(double(state.memory_budget), NumberUnit::Bytes).c_str());
  const Trace& t = state.trace();
  const double cells = double(t.n_q()) * t.n_kv();
  const double bytes = cells * sizeof(double);
  TextDisabledWrapped("scores " + std::to_string(t.n_q()) + "\u00D7" + std::to_string(t.n_kv()) + ": " +
                      format_exact(cells, NumberUnit::Plain) + " cells");
  if (t.attention.heads == 1) TextDisabledWrapped(format_unit(bytes, NumberUnit::Bytes) + " for the one head");
  else
    TextDisabledWrapped(format_unit(bytes, NumberUnit::Bytes) + " a head, " +
                        format_unit(bytes * t.attention.heads, NumberUnit::Bytes) + " for " +
                        std::to_string(t.attention.heads) + " heads");
  TextDisabledWrapped("the whole trace: " + format_unit(double(trace_bytes(t)), NumberUnit::Bytes) +
                      "; the window with it, the one being computed and the undo history: " +
                      budget_share_text(state.window_bytes(), state.memory_budget, beside));
  const std::string recompute = "last recompute " + milliseconds_text(state.last_recompute_seconds(), 1) +
                                (state.computing() ? ", computing\u2026" : "");
  ImGui::TextDisabled("%s", recompute.c_str());
}

// Variant, and the sizes only some variants have: KV heads (GQA), latent widths (MLA).
void variant_section(AppState& state) {
  const Scenario& s = state.scenario();
  const AttentionConfig& a = s.attention;
  Variant v = a.variant;
  if (EnumCombo("variant", v, {Variant::Mha, Variant::Gqa, Variant::Mqa, Variant::Mla})) {
    const std::vector<int> d = divisors(a.heads);
    const int g = d.size() > 2 ? d[d.size() - 2] : 1;  // the largest real grouping
    const int latent = std::max(1, (s.d_model() + 1) / 2);
    std::string note;
    if (state.edit([&](Scenario& doc) { note = switch_variant(doc, *state.document_weights(), v, g, latent, 0); }))
      state.say(note);
  }
  if (a.variant == Variant::Gqa) {
    const std::string current = std::to_string(a.kv_heads);
    FitLabel("kv_heads");
    if (ImGui::BeginCombo("kv_heads", current.c_str())) {
      for (int g : divisors(a.heads))
        if (ImGui::Selectable(std::to_string(g).c_str(), g == a.kv_heads)) {
          std::string note;
          if (state.edit(
                  [&](Scenario& doc) { note = switch_variant(doc, *state.document_weights(), Variant::Gqa, g, 0, 0); }))
            state.say(note);
        }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Only divisors of heads: each KV head serves the same number of query heads.");
  }
  if (a.variant == Variant::Mla) {
    int latent = a.latent_dim, q_latent = a.query_latent_dim;
    FitLabel("latent_dim");
    const bool l = ImGui::InputInt("latent_dim", &latent);
    FitLabel("query_latent_dim");
    const bool q = ImGui::InputInt("query_latent_dim", &q_latent);
    if (l || q) {
      latent = std::clamp(latent, 1, limits::kMaxProjectedDim);
      q_latent = std::clamp(q_latent, 0, limits::kMaxProjectedDim);
      std::vector<std::string> notes;
      if (state.edit([&](Scenario& doc) {
            doc.attention.latent_dim = latent;
            doc.attention.query_latent_dim = q_latent;
            notes = drop_unfit_weights(doc);
          }) &&
          !notes.empty())
        state.show_messages(std::move(notes));
    }
  }
}

void config_section(AppState& state) {
  const Scenario& s = state.scenario();
  AttentionConfig a = s.attention;
  variant_section(state);
  int heads = a.heads, head_dim = a.head_dim;
  FitLabel("heads");
  const bool heads_changed = ImGui::InputInt("heads", &heads);
  FitLabel("head_dim");
  const bool dim_changed = ImGui::InputInt("head_dim", &head_dim);
  if (heads_changed || dim_changed) {
    heads = std::clamp(heads, 1, limits::kMaxHeads);
    head_dim = std::clamp(head_dim, 1, limits::kMaxHeadDim);
    std::vector<std::string> notes;
    if (state.edit([&](Scenario& d) { notes = set_head_shape(d, heads, head_dim); })) state.show_messages(notes);
  }
  if (EnumCombo("mask", a.mask, {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::Custom}))
    state.edit([&](Scenario& d) {
      if (a.mask == MaskKind::Custom && d.attention.custom_mask.size() == 0)
        d.attention.custom_mask = build_mask(d.attention, d.n_q(), d.n_kv());  // start from the mask it had
      d.attention.mask = a.mask;
    });
  if (a.mask == MaskKind::SlidingWindow) {
    int window = a.window;
    FitLabel("window");
    if (ImGui::InputInt("window", &window)) {
      window = std::clamp(window, 1, std::max(1, s.n_kv()));
      state.edit([&](Scenario& d) { d.attention.window = window; });
    }
  }
  if (a.mask == MaskKind::Custom) TextDisabledWrapped("Click cells of the mask (step 4) to toggle them.");
  bool scale = a.scale;
  if (ImGui::Checkbox("scale by 1/\u221Ad", &scale)) state.edit([&](Scenario& d) { d.attention.scale = scale; });
  if (EnumCombo("kernel", a.kernel, {Kernel::Softmax, Kernel::Linear}))
    state.edit([&](Scenario& d) { d.attention.kernel = a.kernel; });
  PositionsControls(state);
  SparseControls(state);
  bool w_o = a.output_projection;
  if (ImGui::Checkbox("output projection W_O", &w_o))
    state.edit([&](Scenario& d) {
      d.attention.output_projection = w_o;
      d.attention.output_bias = d.attention.output_bias && w_o;
      if (!w_o) d.weights.W_O.reset();
      if (!w_o) d.weights.b_O.reset();
    });
  BiasControls(state);
  std::uint64_t seed = s.seed;
  FitLabel("seed");
  if (ImGui::InputScalar("seed", ImGuiDataType_U64, &seed)) state.edit([&](Scenario& d) { d.seed = seed; });
  // Applied when the field is left or Enter is pressed: "0.05" typed a key at a time passes through 0.
  // What is being typed; the document's value whenever the field is not active, nor was in the last frame (the
  // frame after Enter or a click elsewhere applies the typed value).
  static double weight_scale = 1.0;
  const ImGuiID scale_id = ImGui::GetID("weight scale");
  if (ImGui::GetActiveID() != scale_id && GImGui->ActiveIdPreviousFrame != scale_id) weight_scale = s.weight_scale;
  FitLabel("weight scale");
  ImGui::InputDouble("weight scale", &weight_scale, 0.0, 0.0, "%g");
  if (ImGui::IsItemDeactivatedAfterEdit()) state.edit_own_step([&](Scenario& d) { d.weight_scale = weight_scale; });
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Weights drawn from the seed are multiplied by this. At 1 they are multiples of 0.1, to work by\n"
        "hand; a model-sized layer wants less (0.2 at d_model 512), or every softmax row is one-hot.");
  if (ImGui::Button("Re-seed weights")) state.edit(reseed_weights);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next seed; every weight is drawn from it (embeddings stay).");
  if (ImGui::GetContentRegionAvail().x - ImGui::GetItemRectSize().x - ImGui::GetStyle().ItemSpacing.x >=
      ImGui::CalcTextSize("Reset to file").x + 2 * ImGui::GetStyle().FramePadding.x)
    ImGui::SameLine();
  ImGui::BeginDisabled(!state.document().dirty());
  if (ImGui::Button("Reset to file")) state.reset_to_saved();
  ImGui::EndDisabled();
}

// `assign` makes the edit in the document: a cell set in place where the document holds the matrix itself, a copy
// of `value` with the cell changed where it holds a shared weight.
void matrix_section(AppState& state, const char* title, const Matrix& value, const std::vector<std::string>* rows,
                    const std::function<void(Scenario&, const CellEdit&)>& assign, bool seeded) {
  std::string header =
      std::string(title) + "  [" + std::to_string(value.rows()) + "\u00D7" + std::to_string(value.cols()) + "]";
  // The header's label is cut off by its frame, never wrapped: the note shortens to fit.
  const float room = ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - 2 * ImGui::GetStyle().FramePadding.x;
  for (const char* note : {"  (from the seed)", "  (seeded)", ""})
    if (seeded && ImGui::CalcTextSize((header + note).c_str()).x <= room) {
      header += note;
      break;
    }
  header += std::string("###") + title;  // the same header whether or not the weight came from the seed
  if (!ImGui::CollapsingHeader(header.c_str())) return;
  MatrixEditorOptions o;
  o.row_labels = rows;
  if (const CellEdit e = MatrixEditor(title, value, o)) state.edit([&](Scenario& d) { assign(d, e); });
}

}  // namespace

// The next field takes the width its own label leaves, so a long label (weight scale) narrows only its field
// and a long value (sliding_window) keeps the room it needs; every label ends at the panel's right edge.
void FitLabel(const char* label) {
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(label, nullptr, true).x -
                          ImGui::GetStyle().ItemInnerSpacing.x - 2);
}

void InputsPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Inputs", pos, size);
  const Scenario& s = state.scenario();
  ImGui::PushFont(title_font());
  TextWrappedAtSpaces(s.name);
  ImGui::PopFont();
  if (!s.description.empty()) TextDisabledWrapped(s.description);  // "0.2" stays whole
  if (const std::optional<LayerVisit>& visit = state.layer_visit())
    TextDisabledWrapped("A copy: edits here change it, not " + visit->model_name + ".");
  ImGui::Separator();
  tokens_section(state);
  scale_section(state);
  ImGui::Separator();
  config_section(state);
  ImGui::Separator();
  const std::shared_ptr<const Weights> weights = state.document_weights();
  matrix_section(
      state, "X (embeddings)", s.input.embeddings, &s.input.tokens,
      [](Scenario& d, const CellEdit& e) { d.input.embeddings(e.row, e.col) = e.value; }, false);
  if (s.context)
    matrix_section(
        state, "X_kv (context)", s.context->embeddings, &s.context->tokens,
        [](Scenario& d, const CellEdit& e) { d.context->embeddings(e.row, e.col) = e.value; }, false);
  for (WeightId id : kAllWeights) {
    const SharedMatrix& used = weight_slot(*weights, id);
    if (!used) continue;
    matrix_section(
        state, weight_name(id), *used, nullptr,
        [id, &used](Scenario& d, const CellEdit& e) {
          weight_slot(d.weights, id) = with_cell(*used, e);  // the weight in use, given or drawn from the seed
        },
        !weight_slot(s.weights, id).has_value());
  }
  ImGui::End();
}

}  // namespace attn::ui
