// The online softmax (Milakov and Gimelshein 2018; FlashAttention): one row of a head over blocks of keys. Each
// block brings its own maximum; when the running maximum m grows, what was summed so far is rescaled by
// e^(m_old - m_new). The last block ends on exactly the dense row's output.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "core/online_softmax.h"
#include "core/text_format.h"
#include "ui/logic/hover_text.h"
#include "ui/panels/panels.h"
#include "ui/widgets/equation.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

constexpr double kBlockSeconds = 1.2;  // a block stays this long while playing

// The width each slider gets when both sliders, the arrows, Play and the block count share one line; 0 when the
// sliders would be too narrow to drag (they then take a line each).
float one_line_slider(int blocks, int shown) {
  const ImGuiStyle& s = ImGui::GetStyle();
  const std::string count = "block " + std::to_string(shown) + " of " + std::to_string(blocks);
  const float buttons = 2 * ImGui::GetFrameHeight() + ImGui::CalcTextSize("Pause").x + 2 * s.FramePadding.x +
                        ImGui::CalcTextSize(count.c_str()).x + 5 * s.ItemSpacing.x;
  const float labels = LabelledWidth(0, "query row") + LabelledWidth(0, "keys per block");
  const float field = (ImGui::GetContentRegionAvail().x - buttons - labels) / 2;
  return field >= 6 * ImGui::GetFontSize() ? field : 0.0f;
}

// Row, block size and how many blocks are done; Play advances one block at a time.
void online_controls(AppState& state, const Trace& t, int blocks) {
  auto& o = state.pipeline.online;
  // One line where it fits: the height goes to the table and the row's matrices (lesson 9's last page).
  const float field = one_line_slider(blocks, std::clamp(o.shown, 1, blocks));
  if (field > 0) ImGui::SetNextItemWidth(field);
  else FitLabel("query row");
  ImGui::SliderInt("query row", &o.row, 0, t.n_q() - 1, t.tokens[static_cast<std::size_t>(o.row)].c_str());
  if (field > 0) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(field);
  } else {
    FitLabel("keys per block");
  }
  if (ImGui::SliderInt("keys per block", &o.block, 1, std::max(1, t.n_kv()))) o.shown = 1;
  if (field > 0) ImGui::SameLine();
  if (ImGui::ArrowButton("online prev", ImGuiDir_Left)) o.shown = std::max(1, o.shown - 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("online next", ImGuiDir_Right)) o.shown = std::min(blocks, o.shown + 1);
  ImGui::SameLine();
  if (ImGui::Button(o.playing ? "Pause##online" : "Play##online")) {
    o.playing = !o.playing;
    o.clock = 0;
    if (o.playing && o.shown >= blocks) o.shown = 1;
  }
  ImGui::SameLine();
  ImGui::Text("block %d of %d", o.shown, blocks);
  if (!o.playing) return;
  o.clock += ImGui::GetIO().DeltaTime;
  if (o.clock < kBlockSeconds) return;
  o.clock = 0;
  if (o.shown >= blocks) o.playing = false;
  else ++o.shown;
}

// One line per block done: its keys, its maximum, the running maximum, the rescale and the running sum.
void block_table(const OnlineSoftmax& r, int shown) {
  // As wide as its columns and with little padding: the verdict goes beside it, the matrices below it.
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, {ImGui::GetStyle().CellPadding.x * 2, 1.0f});
  const bool open = ImGui::BeginTable(
      "online blocks", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX);
  ImGui::PopStyleVar();
  if (!open) return;
  for (const char* h : {"keys", "block max", "running max m", "rescale e^(m_old - m)", "running sum l"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  // The numbers in the cells' font, as the matrices' (16 px digits in presentation mode): the page quotes them.
  ImGui::PushFont(cell_font());
  for (int b = 0; b < shown; ++b) {
    const OnlineBlock& x = r.blocks[static_cast<std::size_t>(b)];
    ImGui::TableNextRow();
    const std::string cells[] = {std::to_string(x.start) + ".." + std::to_string(x.end - 1), short_number(x.block_max),
                                 short_number(x.m), short_number(x.rescale), short_number(x.l)};
    for (const std::string& c : cells) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(c.c_str());
    }
  }
  ImGui::PopFont();
  ImGui::EndTable();
}

// Shrinking before scrolling: the row's matrices at `cell` if they fit the height left; else without their colour
// bars (the numbers are written in the cells), then with cells down to a text line's height.
float fitted_cell(std::vector<Term>& terms, std::span<const std::string> ops, float cell) {
  const float room = ImGui::GetContentRegionAvail().y;
  if (EquationFlowHeight(terms, ops, cell, ImGui::GetContentRegionAvail().x) <= room) return cell;
  for (Term& term : terms) term.flags |= HeatmapFlags_NoLegend;
  const float least = ImGui::GetTextLineHeight() + 6;
  while (cell > least && EquationFlowHeight(terms, ops, cell, ImGui::GetContentRegionAvail().x) > room)
    cell = std::max(least, cell - 1);
  return cell;
}

}  // namespace

void OnlineSoftmaxView(AppState& state, const Trace& t, int head, float cell) {
  auto& o = state.pipeline.online;
  if (o.row < 0 || o.row >= t.n_q()) o.row = t.n_q() - 1;
  o.block = std::clamp(o.block, 1, std::max(1, t.n_kv()));
  const OnlineSoftmax r = online_softmax(t, head, o.row, o.block);
  const int blocks = static_cast<int>(r.blocks.size());
  online_controls(state, t, blocks);
  o.shown = std::clamp(o.shown, 1, blocks);
  const OnlineBlock& now = r.blocks[static_cast<std::size_t>(o.shown - 1)];
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  // The row's scores with the keys not yet read hidden.
  const Matrix row = h.masked_row(o.row);
  Matrix read = Matrix::Zero(1, t.n_kv());
  read.leftCols(now.end).setOnes();
  const std::vector<std::string> token{t.tokens[static_cast<std::size_t>(o.row)]};
  // The table and its verdict first: they are what a small screen must not scroll away.
  ImGui::BeginGroup();
  block_table(r, o.shown);
  ImGui::EndGroup();
  // The verdict beside the table where a readable column is left (lines of at least 14 em), else below it.
  const float table_right = ImGui::GetItemRectMax().x;
  if (ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x - table_right >= 14 * ImGui::GetFontSize())
    ImGui::SameLine(0, ImGui::GetFontSize());
  ImGui::BeginGroup();
  if (o.shown == blocks)
    AgreementBadge(agreement(r.max_difference, "the last block ends on the dense row's output",
                             ": rescaling by e^(m_old - m) makes every block's sum as if it had known the final m"));
  else
    TextWrappedAtSpaces("Not yet: " + plural(blocks - o.shown, "more block") +
                        " to read; each may raise m and rescale what came before.");
  ImGui::EndGroup();
  // Every block's output and the dense one on one colour scale: the running output's colours move toward the
  // dense output's as blocks are read, as its numbers do.
  double reach = r.dense_output.cwiseAbs().maxCoeff();
  for (const OnlineBlock& b : r.blocks) reach = std::max(reach, b.output.cwiseAbs().maxCoeff());
  const ValueRange outputs = reach > 0 ? ValueRange{-reach, reach} : ValueRange{-1, 1};
  // One line where it fits: the output so far beside the scores it was read from, not below the fold under them.
  std::vector<Term> terms{{.name = "masked scores, keys read so far",
                           .m = &row,
                           .rows = &token,
                           .cols = &t.context_tokens,
                           .visible = &read,
                           // The whole row's colours at every block: a cell keeps its colour as more are read.
                           .range = auto_range(row, ColourMap::Diverging)},
                          {.name = "output so far (acc / l)", .m = &now.output, .rows = &token, .range = outputs},
                          {.name = "dense output", .m = &r.dense_output, .rows = &token, .range = outputs}};
  const std::string ops[] = {"  ", o.shown == blocks ? "=" : "\u2192"};
  const EquationHover e = EquationFlow("online row", terms, ops, fitted_cell(terms, ops, cell));
  if (e.result_y >= 0) NoteInSight(SightKind::Result, terms[2].name, "the dense output", e.result_min, e.result_max);
}

}  // namespace attn::ui
