// The Real model view: a Hugging Face model on the class's text. The text as the model's pieces, each next token's
// loss as a bar (beside the unablated model's when heads are knocked out), the likeliest next tokens at a position,
// and every head of every layer as a tile named by what it does on this text; a click knocks a head out.
#include <algorithm>
#include <cmath>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/config.h"
#include "core/text_format.h"
#include "ui/logic/model_text.h"
#include "ui/logic/real_lesson.h"
#include "ui/logic/train_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"

namespace attn::ui {
namespace {

constexpr int kRealPredictions = 10;

// Whether pieces i and i + 1 are of one word (the tokenizer's words; each piece its own where it gave none).
bool same_word(const Encoding& e, std::size_t i) {
  return e.words.size() == e.ids.size() && i + 1 < e.words.size() && e.words[i] == e.words[i + 1];
}

// The text as the model's pieces, one box each: the pieces of one word close together and underlined as one, words
// apart. The piece whose predictions show is highlighted; a click picks another.
void pieces_row(AppState& state, const RealModelRun& r) {
  const Encoding& e = r.text;
  const int n = static_cast<int>(e.pieces.size());
  int& chosen = state.real_view.position;
  if (chosen >= n) chosen = -1;
  const int shown = chosen < 0 ? n - 1 : chosen;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  float word_start = -1;  // where the word's first piece on this row begins
  int word_pieces = 0;
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    ImGui::PushID(i);
    const float gap = i > 0 && same_word(e, at - 1) ? 1.0f : 10.0f;
    if (i > 0) SameLineIfFits(TextWidth(e.pieces[at]) + 4 + gap, gap);
    if (ImGui::Selectable(e.pieces[at].c_str(), i == shown, 0, {TextWidth(e.pieces[at]) + 4, 0})) chosen = i;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("position %d, id %s", i, thousands(std::uint64_t(e.ids[at])).c_str());
    const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    if (word_start < 0 || lo.x < word_start) word_start = lo.x, word_pieces = 0;  // a new word, or the row wrapped
    ++word_pieces;
    if (!same_word(e, at)) {
      if (word_pieces > 1) draw->AddLine({word_start, hi.y + 1}, {hi.x, hi.y + 1}, GetStyle().accent, 2);
      word_start = -1;
    }
    ImGui::PopID();
  }
}

// A dashed line across the bars at the loss of a uniform guess over the vocabulary, ln V (the caption says so).
void uniform_line(ImVec2 origin, float width, float y) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 colour = ImGui::GetColorU32(ImGuiCol_Text);
  for (float x = origin.x; x < origin.x + width; x += 12)
    draw->AddLine({x, y}, {std::min(x + 6, origin.x + width), y}, colour, 2);
}

// Each next token's loss as a bar over the piece it predicts: the ablated model's filled, the unablated one's outlined.
void loss_bars(const RealModelRun& r, float height) {
  const auto n = static_cast<int>(r.losses.size());
  if (n == 0) return;
  TextWrappedAtSpaces(loss_caption(r));
  const auto vocab = static_cast<std::int64_t>(r.trace->logits.cols());
  double top = std::log(static_cast<double>(vocab)) * 1.1;
  for (double x : r.losses) top = std::max(top, x);
  for (double x : r.baseline_losses) top = std::max(top, x);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x, slot = width / static_cast<float>(n);
  const float label_h = ImGui::GetTextLineHeight();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImU32 fill = GetStyle().okabe_ito[1], outline = GetStyle().accent;
  const auto y = [&](double v) { return origin.y + height - static_cast<float>(v / top) * height; };
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const float x0 = origin.x + slot * static_cast<float>(i) + 1, x1 = x0 + slot - 2;
    draw->AddRectFilled({x0, y(r.losses[at])}, {x1, origin.y + height}, fill);
    if (r.baseline) draw->AddRect({x0, y(r.baseline_losses[at])}, {x1, origin.y + height}, outline, 0, 0, 2);
    const std::string& next = r.text.pieces[at + 1];
    if (TextWidth(next) <= slot - 2)
      draw->AddText({(x0 + x1 - TextWidth(next)) * 0.5f, origin.y + height + 1}, ImGui::GetColorU32(ImGuiCol_Text),
                    next.c_str());
    if (ImGui::IsMouseHoveringRect({x0, origin.y}, {x1, origin.y + height + label_h}))
      ImGui::SetTooltip("predicting %s after position %d: %s nats%s", next.c_str(), i,
                        short_number(r.losses[at]).c_str(),
                        r.baseline ? (", " + short_number(r.baseline_losses[at]) + " as trained").c_str() : "");
  }
  uniform_line(origin, width, y(std::log(static_cast<double>(vocab))));
  ImGui::Dummy({width, height + label_h + 2});
}

// The likeliest next tokens after the chosen position, with their probabilities.
void next_token_table(AppState& state, const RealModelRun& r) {
  const int n = static_cast<int>(r.text.pieces.size());
  const int i = state.real_view.position < 0 ? n - 1 : state.real_view.position;
  TextWrappedAtSpaces("Next after \"" + r.text.pieces[static_cast<std::size_t>(i)] + "\" (position " +
                      std::to_string(i) + ")");
  const std::vector<int> top = top_tokens(r.trace->probabilities, i, kRealPredictions);
  const int columns = r.baseline ? 3 : 2;
  // Padded at its left edge: a piece starting with a glyph that reaches left of its pen ("J") is not cut.
  if (!ImGui::BeginTable("next", columns, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_PadOuterX)) return;
  ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn(r.baseline ? "knocked out" : "p");
  if (r.baseline) ImGui::TableSetupColumn("as trained");
  ImGui::TableHeadersRow();
  for (const int id : top) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.model->piece(id).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(prediction_text(r.trace->probabilities(i, id)).c_str());
    if (r.baseline) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(prediction_text(r.baseline->probabilities(i, id)).c_str());
    }
  }
  ImGui::EndTable();
}

// The class's text, tokenized and computed as it is typed; "Repeat" doubles it (induction needs a repeat). A random
// repeated sequence leaves nothing but the repeat to predict the second half from: only induction heads can.
void text_field(AppState& state) {
  RealModelView& v = state.real_view;
  const char *repeat = "Repeat my sentence", *random = "Random repeated tokens";
  const float spacing = ImGui::GetStyle().ItemSpacing.x, padding = 2 * ImGui::GetStyle().FramePadding.x;
  const float buttons = TextWidth(repeat) + TextWidth(random) + 2 * padding + 2 * spacing;
  // The buttons beside the text where the whole text still shows, else under it: the class reads what it typed.
  const bool beside = ImGui::GetContentRegionAvail().x - buttons >= TextWidth(v.text) + padding + 24;
  ImGui::SetNextItemWidth(beside ? -buttons : -1);
  if (ImGui::InputText("##text", &v.text)) state.real_model.set_text(v.text, ImGui::GetID("##text"));
  if (!ImGui::IsItemActive() && v.text != state.real_model.state().text) v.text = state.real_model.state().text;
  if (beside) ImGui::SameLine();
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

// Whether the tiles at `cell` carry their roles as letters: then the grid says what the letters are.
bool tiles_lettered(float cell) { return TextWidth("first") + 4 > cell; }

// The role a tile's head plays, in its top right corner over a dark band: "ind 0.62", the role alone, or its letter (I)
// where the tile is small (the legend over the grid spells the letters out); nothing only where not even that fits.
void tile_label(HeadRole role, double score, ImVec2 at, float cell) {
  std::string text = role_abbreviation(role) + " " + probability_text(score);
  if (TextWidth(text) + 4 > cell) text = role_abbreviation(role);
  if (tiles_lettered(cell)) text = role_letter(role);  // every tile alike: "ind" beside "F" read as two codes
  if (TextWidth(text) + 4 > cell) return;
  // In the top right corner, which a causal head never attends to: the first column and the stripes below the
  // diagonal, what the lesson points at, stay in sight.
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight(), w = TextWidth(text) + 4, x = at.x + cell - w;
  draw->AddRectFilled({x, at.y}, {at.x + cell, at.y + h + 2}, IM_COL32(0, 0, 0, 190));
  draw->AddText({x + 2, at.y + 1}, IM_COL32(255, 255, 255, 255), text.c_str());
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

// `a` with `head` knocked out if `out`, else put back; its heads stay sorted.
Ablation with_head(Ablation a, HeadRef head, bool out) {
  const auto at = std::lower_bound(a.heads.begin(), a.heads.end(), head);
  const bool there = at != a.heads.end() && *at == head;
  if (out && !there) a.heads.insert(at, head);
  if (!out && there) a.heads.erase(at);
  return a;
}

// The ablation edits start from: the one on screen, in the mode chosen in the sidebar.
Ablation current_ablation(const AppState& state) {
  Ablation a = state.real_model.state().ablation;
  a.mode = state.real_view.mode;
  return a;
}

// What the hover says of a tile: the head, its role, the cell under the pointer, and what the clicks do.
std::string tile_tooltip(const RealModelRun& r, HeadRef head, const Matrix& overview, const HeatmapResult& hr,
                         bool off) {
  const auto [role, score] =
      best_role(r.trace->layers[static_cast<std::size_t>(head.layer)].head_scores[static_cast<std::size_t>(head.head)]);
  std::string tip = head_cell_text(head.layer, head.head, r.trace->tokens, overview, hr.hovered_row, hr.hovered_col);
  if (role != HeadRole::None) tip += "\n" + role_word(role) + " head, score " + probability_text(score);
  const AttentionConfig& a = r.model->model().layers[static_cast<std::size_t>(head.layer)].attention;
  if (const std::string group = kv_group_text(a, head.head); !group.empty()) tip += "\n" + group;
  tip += "\nclick: open it in the pipeline (the layer as trained)";
  tip += off ? "\nright-click: put it back" : "\nright-click: knock it out";
  return tip;
}

// One head's weights on the text as a tile: a click opens it in the pipeline, a right-click knocks it out or back.
void head_tile(AppState& state, const RealModelRun& r, int l, int h, float cell) {
  const LayerTrace& layer = r.trace->layers[static_cast<std::size_t>(l)];
  ImGui::PushID(l * 4096 + h);
  HeatmapOptions o;
  o.map = ColourMap::Sequential;
  o.range = ValueRange{0, 1};
  o.size = {cell, cell};
  o.max_cell = cell;
  o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues | HeatmapFlags_NoTooltip |
            HeatmapFlags_Fill | HeatmapFlags_Texture | HeatmapFlags_NoPictureMenu;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const Matrix& overview = layer.weights_overview[static_cast<std::size_t>(h)];
  const HeatmapResult hr = Heatmap("w", overview, o);
  const bool off = state.real_model.state().ablation.ablates({l, h});
  const auto [role, score] = best_role(layer.head_scores[static_cast<std::size_t>(h)]);
  if (role != HeadRole::None) tile_label(role, score, at, cell);
  if (off) cross_out(at, cell);  // over everything: the head is out
  if (hr.hovered_row >= 0) {
    ImGui::SetTooltip("%s", tile_tooltip(r, {l, h}, overview, hr, off).c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Right))
      state.real_model.set_ablation(with_head(current_ablation(state), {l, h}, !off));
    else if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) state.visit_real_layer(l, h);
  }
  ImGui::PopID();
}

// A layer's label: a click knocks its whole attention out, or puts it back when every head is out.
void layer_label(AppState& state, const RealModelRun& r, int l) {
  const int heads = static_cast<int>(r.trace->layers[static_cast<std::size_t>(l)].weights_overview.size());
  const Ablation& now = state.real_model.state().ablation;
  int out = 0;
  for (int h = 0; h < heads; ++h) out += now.ablates({l, h}) ? 1 : 0;
  const std::string label = "L" + std::to_string(l);
  ImGui::AlignTextToFramePadding();
  if (out == heads) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(GetStyle().disagree));
  const bool clicked = ImGui::Selectable(label.c_str(), false, 0, ImGui::CalcTextSize(label.c_str()));
  if (out == heads) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "%s", (out == heads ? "Put layer " + std::to_string(l) + "'s heads back"
                            : "Knock out layer " + std::to_string(l) + "'s attention: all " + plural(heads, "head"))
                  .c_str());
  if (!clicked) return;
  Ablation a = current_ablation(state);
  for (int h = 0; h < heads; ++h) a = with_head(std::move(a), {l, h}, out != heads);
  state.real_model.set_ablation(a);
}

// Over the columns: the heads' numbers, and for a model whose query heads share key/value heads, which share one.
void grid_header(const RealModelRun& r, int most, float label, float cell, float gap) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float x0 = ImGui::GetCursorPosX();
  // "H11" over each column, or "11" where tiles are small: a page's "head 4.11" must be found without counting.
  const bool named = TextWidth("H" + std::to_string(most - 1)) <= cell;
  const int every = TextWidth(std::to_string(most - 1)) <= cell + gap / 2 ? 1 : 2;
  for (int h = 0; h < most; h += every) {
    const float x = x0 + label + gap + static_cast<float>(h) * (cell + gap);
    if (h == 0) ImGui::SetCursorPosX(x);
    else ImGui::SameLine(x);
    ImGui::Text(named ? "H%d" : "%d", h);
  }
  const AttentionConfig& a = r.model->model().layers.front().attention;
  const int groups = kv_head_count(a);
  if (groups >= a.heads || groups < 1) return;
  // A bracket under each group's columns, named by the key/value head the group reads.
  const float y = ImGui::GetCursorScreenPos().y, h = ImGui::GetTextLineHeight();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const int per = a.heads / groups;
  for (int g = 0; g < groups; ++g) {
    const float left = origin.x + label + gap + static_cast<float>(g * per) * (cell + gap);
    const float right = left + static_cast<float>(per) * (cell + gap) - gap;
    draw->AddLine({left, y + h}, {right, y + h}, GetStyle().accent, 2);
    draw->AddLine({left, y + h * 0.5f}, {left, y + h}, GetStyle().accent, 2);
    draw->AddLine({right, y + h * 0.5f}, {right, y + h}, GetStyle().accent, 2);
    const std::string name = "KV " + std::to_string(g);
    if (TextWidth(name) + 8 < right - left)
      draw->AddText({(left + right - TextWidth(name)) * 0.5f, y}, ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
  }
  ImGui::Dummy({1, h + 4});
}

// The tiles' side: the width shared among the most heads a layer has, times the zoom; or, fitting the layers, small
// enough for all of them to be in sight.
float tile_side(const RealModelView& v, int layers, int most, ImVec2 room, float label, float header) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  // At most 96 pixels, or larger where every layer still fits the height (a model of one or two layers).
  const float tall = (room.y - header) / static_cast<float>(layers) - ImGui::GetStyle().ItemSpacing.y;
  const float across = std::clamp((room.x - label - gap * static_cast<float>(most)) / static_cast<float>(most), 12.0f,
                                  std::max(96.0f, tall));
  if (v.fit_layers)
    return std::clamp((room.y - header) / static_cast<float>(layers) - ImGui::GetStyle().ItemSpacing.y, 8.0f, across);
  return std::clamp(across * v.tile_zoom, 8.0f, 240.0f);
}

// Above the tiles: what clicks do, and the zoom (Ctrl+wheel over the tiles does the same).
void grid_controls(RealModelView& v) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Click: the pipeline \u00B7 right-click: knock out");
  // The zoom and the checkbox go together onto a line of their own where a lesson's column leaves no room beside.
  const ImGuiStyle& st = ImGui::GetStyle();
  const float buttons = TextWidth("\u2212") + TextWidth("+") + 4 * st.FramePadding.x + 2 * st.ItemSpacing.x;
  SameLineIfFits(buttons + LabelledWidth(ImGui::GetFrameHeight(), "Every layer in sight"), st.ItemSpacing.x);
  if (ImGui::Button("\u2212")) v.tile_zoom = std::max(0.25f, v.tile_zoom / 1.25f), v.fit_layers = false;
  ImGui::SameLine();
  if (ImGui::Button("+")) v.tile_zoom = std::min(4.0f, v.tile_zoom * 1.25f), v.fit_layers = false;
  ImGui::SameLine();
  ImGui::Checkbox("Every layer in sight", &v.fit_layers);
}

// Every head of every layer, a layer a row.
void head_grid(AppState& state, const RealModelRun& r) {
  RealModelView& v = state.real_view;
  const int layers = static_cast<int>(r.trace->layers.size());
  int most = 1;
  for (const LayerTrace& l : r.trace->layers) most = std::max(most, static_cast<int>(l.weights_overview.size()));
  const float gap = ImGui::GetStyle().ItemSpacing.x, label = TextWidth("L00");
  const AttentionConfig& a = r.model->model().layers.front().attention;
  const bool groups = kv_head_count(a) < a.heads;  // the KV brackets under the column names
  const float header = ImGui::GetTextLineHeightWithSpacing() +
                       (groups ? ImGui::GetTextLineHeight() + 4 + ImGui::GetStyle().ItemSpacing.y : 0.0f);
  // The tiles' room: the panel's less the scroll bar beside them.
  const auto room = [] {
    return ImVec2{ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize, ImGui::GetContentRegionAvail().y};
  };
  float cell = tile_side(v, layers, most, room(), label, header);
  if (tiles_lettered(cell)) {
    TextDisabledWrapped("P previous-token, I induction, D duplicate-token, F first token");
    cell = tile_side(v, layers, most, room(), label, header);
  }
  // The column names stay over the tiles as the layers scroll by, and follow them across.
  ImGui::BeginChild("grid header", {0, header}, false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() - v.grid_scroll_x);
  grid_header(r, most, label, cell, gap);
  ImGui::EndChild();
  ImGui::BeginChild("heads", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
  for (int l = 0; l < layers; ++l) {
    layer_label(state, r, l);
    if (l == v.scroll_to_layer) {  // its row near the top, the rows above it a glance away
      ImGui::SetScrollHereY(0.15f);
      v.scroll_to_layer = -1;
    }
    const int heads = static_cast<int>(r.trace->layers[static_cast<std::size_t>(l)].weights_overview.size());
    for (int h = 0; h < heads; ++h) {
      ImGui::SameLine(label + gap + static_cast<float>(h) * (cell + gap));
      head_tile(state, r, l, h, cell);
    }
  }
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && io.MouseWheel != 0 && ImGui::IsWindowHovered()) {
    v.tile_zoom = std::clamp(v.tile_zoom * (io.MouseWheel > 0 ? 1.25f : 0.8f), 0.25f, 4.0f);
    v.fit_layers = false;
  }
  v.grid_scroll_x = ImGui::GetScrollX();
  ImGui::EndChild();
}

// What a knocked-out head's output becomes, and the way back: beside the knock-out, presenting too.
void knock_out_mode(AppState& state) {
  RealModelView& v = state.real_view;
  const Ablation& now = state.real_model.state().ablation;
  if (EnumCombo("Replace by", v.mode, {AblationMode::Zero, AblationMode::Mean}) && !now.empty()) {
    Ablation a = now;
    a.mode = v.mode;
    state.real_model.set_ablation(a);
  }
  if (now.empty()) return;
  if (ImGui::Button("Put them back")) state.real_model.set_ablation({});
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
  // Ranked in the model as trained, heads knocked out or not: the top k stay the same k, as the lessons quote them.
  const std::vector<RankedHead> ranked = heads_by_score(r.baseline ? *r.baseline : *r.trace, v.ranked);
  if (ranked.empty()) {
    TextDisabledWrapped(
        "No head has this score on the text: induction and duplicate-token need a repeat (Repeat my sentence).");
    return;
  }
  ImGui::SetNextItemWidth(80);
  ImGui::InputInt("##k", &v.top_k);
  v.top_k = std::clamp(v.top_k, 1, static_cast<int>(ranked.size()));
  ImGui::SameLine();
  if (ImGui::Button(("Knock out the top " + std::to_string(v.top_k)).c_str())) {
    Ablation a{.mode = v.mode};
    for (int i = 0; i < v.top_k; ++i) a.heads.push_back(ranked[static_cast<std::size_t>(i)].head);
    std::sort(a.heads.begin(), a.heads.end());
    state.real_model.set_ablation(a);
    v.scroll_to_layer = a.heads.front().layer;
  }
  knock_out_mode(state);
  // "layer.head" over the names: "5.1  1.000" alone read as two decimals.
  if (!ImGui::BeginTable("ranked", 2, ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("layer.head");
  ImGui::TableSetupColumn("score");
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < std::min<std::size_t>(ranked.size(), 8); ++i) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(head_name(ranked[i].head).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(probability_text(ranked[i].score).c_str());
  }
  ImGui::EndTable();
}

// The next tokens and the ranked heads, one under the other where both fit, else as two tabs (presenting at 1280x720
// the knock-out button was under the fold).
void beside_tiles(AppState& state, const RealModelRun& r) {
  const float line = ImGui::GetTextLineHeightWithSpacing(), frame = ImGui::GetFrameHeightWithSpacing();
  // The table's caption, header and rows; "Heads ranked by", its box, the knock-out and Replace by rows; the ranking's
  // 8 rows.
  const float both = line * static_cast<float>(kRealPredictions + 2) + line + frame * 3 + line * 9;
  if (ImGui::GetContentRegionAvail().y >= both) {
    next_token_table(state, r);
    ImGui::Separator();
    ranked_heads(state, r);
    return;
  }
  RealModelView& v = state.real_view;
  if (!ImGui::BeginTabBar("beside")) return;
  const auto tab = [&](const char* name, bool heads) {
    const ImGuiTabItemFlags flags = v.select_tab && v.heads_tab == heads ? ImGuiTabItemFlags_SetSelected : 0;
    if (!ImGui::BeginTabItem(name, nullptr, flags)) return false;
    if (!v.select_tab) v.heads_tab = heads;
    return true;
  };
  if (tab("Next tokens", false)) {
    next_token_table(state, r);
    ImGui::EndTabItem();
  }
  if (tab("Heads ranked", true)) {
    ranked_heads(state, r);
    ImGui::EndTabItem();
  }
  v.select_tab = false;
  ImGui::EndTabBar();
}

}  // namespace

void RealModelPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Real model", pos, size);
  if (!state.real_model.loaded()) {
    RealModelList(state);
    ImGui::End();
    return;
  }
  const RealModelRun& r = state.real_model.shown();
  const Ablation& out = r.state->ablation;
  TitleText(r.model->name() + (out.empty() ? ""
                                           : " \u2014 knocked out: " + knocked_out_text(out, r.model->model()) +
                                                 (out.mode == AblationMode::Mean ? " (mean)" : " (zero)")));
  text_field(state);
  pieces_row(state, r);
  loss_bars(r, 90);
  // Wide enough for the table's three columns and the knock-out row, with the scroll bar beside them.
  const ImGuiStyle& st = ImGui::GetStyle();
  const float knock_w = 80 + st.ItemSpacing.x + TextWidth("Knock out the top 10") + 2 * st.FramePadding.x;
  const float table_w = TextWidth("<id 151643>  knocked out  as trained") + 6 * st.CellPadding.x;
  const float left =
      std::max(ImGui::GetContentRegionAvail().x * 0.3f, std::max(knock_w, table_w) + st.ScrollbarSize + 8);
  ImGui::BeginChild("predictions", {left, 0});
  beside_tiles(state, r);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  grid_controls(state.real_view);
  head_grid(state, r);
  ImGui::EndGroup();
  ImGui::End();
}

}  // namespace attn::ui
