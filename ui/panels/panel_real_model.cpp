// The Real model view: a Hugging Face model on the class's text. The text as the model's pieces, each next token's
// loss as a bar (beside the unablated model's when heads are knocked out), the likeliest next tokens at a position,
// and every head of every layer as a tile named by what it does on this text; a click knocks a head out.
#include <algorithm>
#include <cmath>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/text_format.h"
#include "ui/logic/train_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

constexpr int kRealPredictions = 10;

// The text as the model's pieces, one box each; the one whose predictions show is outlined. A click picks it.
void pieces_row(AppState& state, const RealModelRun& r) {
  const int n = static_cast<int>(r.text.pieces.size());
  int& chosen = state.real_view.position;
  if (chosen >= n) chosen = -1;
  const int shown = chosen < 0 ? n - 1 : chosen;
  for (int i = 0; i < n; ++i) {
    ImGui::PushID(i);
    if (i > 0) SameLineIfFits(TextWidth(r.text.pieces[static_cast<std::size_t>(i)]) + 12, 2);
    if (ImGui::Selectable(r.text.pieces[static_cast<std::size_t>(i)].c_str(), i == shown, 0,
                          {TextWidth(r.text.pieces[static_cast<std::size_t>(i)]) + 4, 0}))
      chosen = i;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("position %d, id %s", i,
                        thousands(std::uint64_t(r.text.ids[static_cast<std::size_t>(i)])).c_str());
    ImGui::PopID();
  }
}

// Each next token's loss as a bar under its position: the ablated model's filled, the unablated one's outlined.
void loss_bars(const RealModelRun& r, float height) {
  const auto n = static_cast<int>(r.losses.size());
  if (n == 0) return;
  const auto mean = [](const std::vector<double>& v) { return mean_loss(v); };
  std::string title = "Loss of each next token, mean " + short_number(mean(r.losses)) + " nats";
  if (r.baseline)
    title += " knocked out (filled) against " + short_number(mean(r.baseline_losses)) +
             " as trained (outlined): " + (mean(r.losses) >= mean(r.baseline_losses) ? "+" : "") +
             short_number(mean(r.losses) - mean(r.baseline_losses));
  ImGui::TextUnformatted(title.c_str());
  double top = 1.0;
  for (double x : r.losses) top = std::max(top, x);
  for (double x : r.baseline_losses) top = std::max(top, x);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x, slot = width / static_cast<float>(n);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 fill = GetStyle().okabe_ito[1], outline = GetStyle().accent;
  for (int i = 0; i < n; ++i) {
    const float x0 = origin.x + slot * static_cast<float>(i) + 1, x1 = x0 + slot - 2;
    const auto y = [&](double v) { return origin.y + height - static_cast<float>(v / top) * height; };
    draw->AddRectFilled({x0, y(r.losses[static_cast<std::size_t>(i)])}, {x1, origin.y + height}, fill);
    if (r.baseline)
      draw->AddRect({x0, y(r.baseline_losses[static_cast<std::size_t>(i)])}, {x1, origin.y + height}, outline, 0, 0, 2);
    if (ImGui::IsMouseHoveringRect({x0, origin.y}, {x1, origin.y + height}))
      ImGui::SetTooltip(
          "predicting %s after position %d: %s nats%s", r.text.pieces[static_cast<std::size_t>(i + 1)].c_str(), i,
          short_number(r.losses[static_cast<std::size_t>(i)]).c_str(),
          r.baseline ? (", " + short_number(r.baseline_losses[static_cast<std::size_t>(i)]) + " unablated").c_str()
                     : "");
  }
  ImGui::Dummy({width, height});
}

// The likeliest next tokens after the chosen position, with their probabilities.
void next_token_table(AppState& state, const RealModelRun& r) {
  const int n = static_cast<int>(r.text.pieces.size());
  const int i = state.real_view.position < 0 ? n - 1 : state.real_view.position;
  TextWrappedAtSpaces("Next after \"" + r.text.pieces[static_cast<std::size_t>(i)] + "\" (position " +
                      std::to_string(i) + ")");
  const std::vector<int> top = top_tokens(r.trace->probabilities, i, kRealPredictions);
  const int columns = r.baseline ? 3 : 2;
  if (!ImGui::BeginTable("next", columns, ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(r.baseline ? "ablated" : "p");
  if (r.baseline) ImGui::TableSetupColumn("trained");
  ImGui::TableHeadersRow();
  for (const int id : top) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.model->piece(id).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(probability_text(r.trace->probabilities(i, id)).c_str());
    if (r.baseline) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(probability_text(r.baseline->probabilities(i, id)).c_str());
    }
  }
  ImGui::EndTable();
}

// The class's text, tokenized and computed as it is typed; "Repeat" doubles it (induction needs a repeat). A random
// repeated sequence leaves nothing but the repeat to predict the second half from: only induction heads can.
void text_field(AppState& state) {
  RealModelView& v = state.real_view;
  const char *repeat = "Repeat my sentence", *random = "A random repeated sequence";
  const float spacing = ImGui::GetStyle().ItemSpacing.x, padding = 2 * ImGui::GetStyle().FramePadding.x;
  ImGui::SetNextItemWidth(-TextWidth(repeat) - TextWidth(random) - 2 * padding - 2 * spacing);
  if (ImGui::InputText("##text", &v.text)) state.real_model.set_text(v.text, ImGui::GetID("##text"));
  if (!ImGui::IsItemActive() && v.text != state.real_model.state().text) v.text = state.real_model.state().text;
  ImGui::SameLine();
  if (ImGui::Button(repeat)) {
    v.text = state.real_model.state().text + " " + state.real_model.state().text;
    state.real_model.set_text(v.text);
  }
  ImGui::SameLine();
  if (ImGui::Button(random) && state.real_model.set_random_repeat(++v.random_seed))
    v.text = state.real_model.state().text;
  if (state.real_model.computing()) {
    const RealModelProgress& p = state.real_model.progress();
    ImGui::ProgressBar(static_cast<float>(progress_fraction(p)), {-1, 0}, progress_text(p).c_str());
  }
  if (!state.real_model.failure().empty())
    TextWrappedAtSpaces("Not computed: " + state.real_model.failure(), GetStyle().disagree);
}

// A head's best role on this text and its score, or None below kHeadRoleScore.
std::pair<HeadRole, double> best_role(const TextHeadScores& s) {
  std::pair<HeadRole, double> best{HeadRole::None, 0.3};
  for (const HeadRole role : kHeadRoles)
    if (const std::optional<double> v = score_of(s, role); v && *v >= best.second) best = {role, *v};
  return best;
}

// The role a tile's head plays, in its corner over a dark band: "ind 0.62", or the role alone where that is all that
// fits.
void tile_label(HeadRole role, double score, ImVec2 at, float cell) {
  std::string text = role_abbreviation(role) + " " + probability_text(score);
  if (TextWidth(text) + 4 > cell) text = role_abbreviation(role);
  if (TextWidth(text) + 4 > cell) return;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight();
  draw->AddRectFilled({at.x, at.y + cell - h - 2}, {at.x + cell, at.y + cell}, IM_COL32(0, 0, 0, 190));
  draw->AddText({at.x + 2, at.y + cell - h - 1}, IM_COL32(255, 255, 255, 255), text.c_str());
}

// A knocked-out head: its tile dimmed under a red cross, which no attention pattern draws.
void cross_out(ImVec2 at, float cell) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 end{at.x + cell, at.y + cell};
  draw->AddRectFilled(at, end, IM_COL32(0, 0, 0, 140));
  const float inset = cell * 0.15f, width = std::max(3.0f, cell * 0.08f);
  draw->AddLine({at.x + inset, at.y + inset}, {end.x - inset, end.y - inset}, GetStyle().disagree, width);
  draw->AddLine({end.x - inset, at.y + inset}, {at.x + inset, end.y - inset}, GetStyle().disagree, width);
}

void head_tile(AppState& state, const RealModelRun& r, int l, int h, float cell) {
  const LayerTrace& layer = r.trace->layers[static_cast<std::size_t>(l)];
  ImGui::PushID(l * 4096 + h);
  HeatmapOptions o;
  o.map = ColourMap::Sequential;
  o.range = ValueRange{0, 1};
  o.size = {cell, cell};
  o.max_cell = cell;
  o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
            HeatmapFlags_Fill | HeatmapFlags_Texture;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const HeatmapResult hr = Heatmap("w", layer.weights_overview[static_cast<std::size_t>(h)], o);
  const Ablation& now = state.real_model.state().ablation;
  const bool off = now.ablates({l, h});
  const auto [role, score] = best_role(layer.head_scores[static_cast<std::size_t>(h)]);
  if (role != HeadRole::None) tile_label(role, score, at, cell);
  if (off) cross_out(at, cell);  // over the label: what the head did, struck out
  if (hr.hovered_row >= 0) {
    std::string tip = "head " + head_name({l, h});
    if (role != HeadRole::None) tip += ": " + role_word(role) + " " + probability_text(score);
    tip += off ? "\nknocked out: click to put it back" : "\nclick to knock it out";
    ImGui::SetTooltip("%s", tip.c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      Ablation a = now;
      a.mode = state.real_view.mode;
      if (off) a.heads.erase(std::find(a.heads.begin(), a.heads.end(), HeadRef{l, h}));
      else a.heads.insert(std::lower_bound(a.heads.begin(), a.heads.end(), HeadRef{l, h}), {l, h});
      state.real_model.set_ablation(a);
    }
  }
  ImGui::PopID();
}

// Every head of every layer, a layer a row, each tile captioned by its name.
void head_grid(AppState& state, const RealModelRun& r, float width) {
  const int layers = static_cast<int>(r.trace->layers.size());
  int most = 1;
  for (const LayerTrace& l : r.trace->layers) most = std::max(most, static_cast<int>(l.weights_overview.size()));
  const float gap = ImGui::GetStyle().ItemSpacing.x, label = TextWidth("L00");
  const float cell =
      std::clamp((width - label - gap * static_cast<float>(most)) / static_cast<float>(most), 12.0f, 96.0f);
  if (TextWidth("H" + std::to_string(most - 1)) <= cell) {  // the heads' numbers over their columns
    for (int h = 0; h < most; ++h) {
      const float x = label + gap + static_cast<float>(h) * (cell + gap);
      if (h == 0) ImGui::SetCursorPosX(x);
      else ImGui::SameLine(x);
      ImGui::Text("H%d", h);
    }
  }
  for (int l = 0; l < layers; ++l) {
    ImGui::AlignTextToFramePadding();
    ImGui::Text("L%d", l);
    const int heads = static_cast<int>(r.trace->layers[static_cast<std::size_t>(l)].weights_overview.size());
    for (int h = 0; h < heads; ++h) {
      ImGui::SameLine(label + gap + static_cast<float>(h) * (cell + gap));
      head_tile(state, r, l, h, cell);
    }
  }
}

// The heads ranked by the chosen score; a button knocks the top k out.
void ranked_heads(AppState& state, const RealModelRun& r) {
  RealModelView& v = state.real_view;
  ImGui::TextUnformatted("Heads ranked by");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##ranked", role_word(v.ranked).c_str())) {
    for (const HeadRole role : kHeadRoles)
      if (ImGui::Selectable(role_word(role).c_str(), role == v.ranked)) v.ranked = role;
    ImGui::EndCombo();
  }
  std::vector<std::pair<double, HeadRef>> ranked;
  for (std::size_t l = 0; l < r.trace->layers.size(); ++l)
    for (std::size_t h = 0; h < r.trace->layers[l].head_scores.size(); ++h)
      if (const std::optional<double> s = score_of(r.trace->layers[l].head_scores[h], v.ranked))
        ranked.push_back({*s, {static_cast<int>(l), static_cast<int>(h)}});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (ranked.empty()) {
    TextDisabledWrapped(
        "No head has this score on the text: induction and duplicate-token need a repeat (Repeat my sentence).");
    return;
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(ranked.size(), 8); ++i)
    ImGui::Text("head %s  %s", head_name(ranked[i].second).c_str(), probability_text(ranked[i].first).c_str());
  ImGui::SetNextItemWidth(80);
  ImGui::InputInt("##k", &v.top_k);
  v.top_k = std::clamp(v.top_k, 1, static_cast<int>(ranked.size()));
  ImGui::SameLine();
  if (ImGui::Button(("Knock out the top " + std::to_string(v.top_k)).c_str())) {
    Ablation a{.mode = v.mode};
    for (int i = 0; i < v.top_k; ++i) a.heads.push_back(ranked[static_cast<std::size_t>(i)].second);
    std::sort(a.heads.begin(), a.heads.end());
    state.real_model.set_ablation(a);
  }
}

}  // namespace

void RealModelPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Real model", pos, size);
  if (!state.real_model.loaded()) {
    TitleText("A real model");
    TextWrappedAtSpaces(
        "Open a Hugging Face model folder (GPT-2, SmolLM2, Qwen2.5, Llama: config.json, safetensors weights and "
        "tokenizer.json) on the left, or pick one of the models this computer has. huggingface-cli download gpt2 "
        "fetches GPT-2 small.");
    ImGui::End();
    return;
  }
  const RealModelRun& r = state.real_model.shown();
  TitleText(r.model->name() + (r.state->ablation.empty() ? "" : " (ablated)"));
  text_field(state);
  pieces_row(state, r);
  loss_bars(r, 90);
  const float left = std::max(ImGui::GetContentRegionAvail().x * 0.3f, TextWidth("<id 151643>  0.000  0.000") + 30);
  ImGui::BeginChild("predictions", {left, 0});
  next_token_table(state, r);
  ImGui::Separator();
  ranked_heads(state, r);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("heads", {0, 0});
  head_grid(state, r, ImGui::GetContentRegionAvail().x);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn::ui
