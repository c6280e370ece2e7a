// Every head's attention weights side by side (click one to follow it), and the current head as arcs.
#include <algorithm>
#include <cmath>

#include "ui/panels/panels.h"
#include "ui/widgets/arc_view.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

void HeadsPanel(AppState& state, ImVec2 pos, ImVec2 size) {
  BeginPanel("Heads", pos, size);
  const Trace& t = state.trace();
  const int heads = static_cast<int>(t.heads.size());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(heads > 1 ? "Attention weights of every head; click one to follow it."
                               : "Attention weights of the one head.");
  if (const int kv = kv_head_count(t.attention); kv == 1 && heads > 1)
    ImGui::TextWrapped("Same colour = same key/value head: all %d query heads share the one.", heads);
  else if (kv < heads)
    ImGui::TextWrapped("Same colour = same key/value head: %d query heads share each of the %d.", heads / kv, kv);
  ImGui::PopStyleColor();
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = std::clamp(static_cast<int>(std::ceil(std::sqrt(static_cast<double>(heads)))), 1, 4);
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float w = (avail - gap * static_cast<float>(per_row - 1)) / static_cast<float>(per_row);
  const float cell_cap = heads == 1 ? 40.0f : 26.0f;
  for (int h = 0; h < heads; ++h) {
    if (h % per_row != 0) ImGui::SameLine(0, gap);
    ImGui::PushID(h);
    ImGui::BeginGroup();
    const bool current = h == state.pipeline.head;
    const bool shared = kv_head_count(t.attention) < heads;
    std::string title = "head " + std::to_string(h);
    if (shared) title += "  \u2192 KV " + std::to_string(t.heads[h].kv_head);
    if (ImGui::CalcTextSize(title.c_str()).x > w)  // a narrow column: the short form
      title = shared ? "h" + std::to_string(h) + " \u2192 KV" + std::to_string(t.heads[h].kv_head)
                     : "h" + std::to_string(h);
    // Shared KV heads: each query head wears its KV head's colour, so the groups are seen, not read.
    const ImU32 group = shared ? kv_head_colour(t.heads[h].kv_head) : ImGui::GetColorU32(ImGuiCol_Border);
    // The followed head is framed in the accent; its label keeps its group's colour, or the group would lose a member.
    if (shared) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(group), "%s", title.c_str());
    else if (current) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(accent_colour()), "%s", title.c_str());
    else ImGui::TextUnformatted(title.c_str());
    const ImVec2 at = ImGui::GetCursorScreenPos();
    HeatmapOptions o;
    o.map = ColourMap::Sequential;
    o.range = ValueRange{0, 1};
    o.visible = &*t.heads[h].mask;
    o.size = {w, 0};
    o.max_cell = cell_cap;
    o.flags = HeatmapFlags_NoLabels | HeatmapFlags_NoLegend | HeatmapFlags_NoValues;
    const HeatmapResult r = Heatmap("w", t.heads[h].weights(), o);
    if (r.hovered_row >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) state.set_head(h);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    if (shared) dl->AddRect({at.x - 2, at.y - 2}, {at.x + r.size.x + 2, at.y + r.size.y + 2}, group, 2.0f, 0, 2.0f);
    if (current)
      dl->AddRect({at.x - 5, at.y - 5}, {at.x + r.size.x + 5, at.y + r.size.y + 5}, accent_colour(), 3.0f, 0, 2.5f);
    ImGui::EndGroup();
    ImGui::PopID();
  }
  ImGui::Spacing();
  ImGui::Separator();
  TextWrappedAtSpaces("Who looks at whom: head\u00A0" +
                      std::to_string(state.pipeline.head));  // "head 0" stays on one line
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s",
                     t.n_kv() > kArcsPerQuery
                         ? "Queries on the left, keys on the right; a thicker line carries more weight. Each query's "
                           "strongest; point at one for all of them."
                         : "Queries on the left, keys on the right; a thicker line carries more weight.");
  ImGui::PopStyleColor();
  ArcViewOptions arcs;
  arcs.queries = &t.tokens;
  arcs.keys = &t.context_tokens;
  arcs.size = {0, std::max(ImGui::GetContentRegionAvail().y - 6, 60.0f)};
  ArcView("arcs", t.heads[static_cast<std::size_t>(state.pipeline.head)].weights(), arcs);
  ImGui::End();
}

}  // namespace attn::ui
