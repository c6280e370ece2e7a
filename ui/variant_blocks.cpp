#include "ui/variant_blocks.h"

#include <algorithm>
#include <cmath>

#include "ui/theme.h"

namespace attn::ui {

ImU32 variant_colour(int variant_index) {
  static constexpr ImU32 kColours[] = {IM_COL32(213, 94, 0, 255), IM_COL32(230, 159, 0, 255), IM_COL32(0, 158, 115, 255),
                                       IM_COL32(86, 180, 233, 255)};
  return kColours[std::clamp(variant_index, 0, 3)];
}

void VariantBlocks(const char* id, std::span<const Block> blocks, float height) {
  ImGui::PushID(id);
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = 18.0f;
  const float column = (avail - gap * static_cast<float>(blocks.size() - 1)) / static_cast<float>(blocks.size());
  std::size_t lines = 0;
  double largest = 0;
  for (const Block& b : blocks) {
    lines = std::max(lines, b.lines.size());
    largest = std::max(largest, b.value);
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float labels_h = line * static_cast<float>(lines + 1);
  const float side_max = std::max(20.0f, std::min(column, height - labels_h - 8));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float base = origin.y + side_max;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const float x = origin.x + static_cast<float>(i) * (column + gap);
    if (b.value > 0 && largest > 0) {
      // Area, not side, is proportional: side = max side · sqrt(value / largest).
      const float side = std::max(2.0f, side_max * static_cast<float>(std::sqrt(b.value / largest)));
      const ImVec2 a{x + (column - side) / 2, base - side};
      dl->AddRectFilled(a, {a.x + side, base}, b.colour, 3.0f);
      if (b.marked) dl->AddRect({a.x - 3, a.y - 3}, {a.x + side + 3, base + 3}, ImGui::GetColorU32(ImGuiCol_Text), 3.0f, 0, 2.0f);
    } else {
      const char* none = "not possible";
      const ImVec2 ts = ImGui::CalcTextSize(none);
      dl->AddText({x + (column - ts.x) / 2, base - ts.y}, ImGui::GetColorU32(ImGuiCol_TextDisabled), none);
    }
    float y = base + 8;
    ImGui::PushFont(title_font());
    const ImVec2 ts = ImGui::CalcTextSize(b.title.c_str());
    dl->AddText({x + (column - ts.x) / 2, y}, b.colour, b.title.c_str());
    ImGui::PopFont();
    y += line + 4;
    for (const std::string& l : b.lines) {
      const ImVec2 ls = ImGui::CalcTextSize(l.c_str());
      dl->AddText({x + std::max(0.0f, (column - ls.x) / 2), y}, ImGui::GetColorU32(ImGuiCol_Text), l.c_str());
      y += line;
    }
  }
  ImGui::Dummy({avail, side_max + 8 + labels_h + 4});
  ImGui::PopID();
}

}  // namespace attn::ui
