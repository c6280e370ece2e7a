// The online softmax (Milakov and Gimelshein 2018; FlashAttention): one row of a head over blocks of keys. Each
// block brings its own maximum; when the running maximum m grows, what was summed so far is rescaled by
// e^(m_old - m_new). The last block ends on exactly the dense row's output.
#include <algorithm>
#include <string>

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

// Row, block size and how many blocks are done; Play advances one block at a time.
void online_controls(AppState& state, const Trace& t, int blocks) {
  auto& o = state.pipeline.online;
  FitLabel("query row");
  ImGui::SliderInt("query row", &o.row, 0, t.n_q() - 1, t.tokens[static_cast<std::size_t>(o.row)].c_str());
  FitLabel("keys per block");
  if (ImGui::SliderInt("keys per block", &o.block, 1, std::max(1, t.n_kv()))) o.shown = 1;
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
  if (!ImGui::BeginTable("online blocks", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  for (const char* h : {"keys", "block max", "running max m", "rescale e^(m_old - m)", "running sum l"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
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
  ImGui::EndTable();
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
  block_table(r, o.shown);
  if (o.shown == blocks)
    AgreementBadge(agreement(r.max_difference, "the last block ends on the dense row's output",
                             ": rescaling by e^(m_old - m) makes every block's sum as if it had known the final m"));
  else
    TextWrappedAtSpaces("Not yet: " + plural(blocks - o.shown, "more block") +
                        " to read; each may raise m and rescale what came before.");
  // One line where it fits: the output so far beside the scores it was read from, not below the fold under them.
  const Term terms[] = {{.name = "masked scores, keys read so far",
                         .m = &row,
                         .rows = &token,
                         .cols = &t.context_tokens,
                         .visible = &read},
                        {.name = "output so far (acc / l)", .m = &now.output, .rows = &token},
                        {.name = "dense output", .m = &r.dense_output, .rows = &token}};
  const std::string ops[] = {"  ", o.shown == blocks ? "=" : "\u2192"};
  const EquationHover e = EquationFlow("online row", terms, ops, cell);
  if (e.result_y >= 0) NoteInSight(SightKind::Result, terms[2].name, "the dense output", e.result_min, e.result_max);
}

}  // namespace attn::ui
