#include "ui/widgets/variant_blocks.h"

#include <algorithm>
#include <cmath>

#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

void VariantBlocks(const char* id, std::span<const Block> blocks, float height) {
  ImGui::PushID(id);
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = 18.0f;
  const float column = (avail - gap * static_cast<float>(blocks.size() - 1)) / static_cast<float>(blocks.size());
  // Every label wrapped to its column, so neighbouring columns never run into each other.
  std::vector<std::vector<std::string>> titles, labels;
  std::size_t title_lines = 0, label_lines = 0;
  double largest = 0;
  for (const Block& b : blocks) {
    ImGui::PushFont(title_font());
    titles.push_back(WrapAtSpaces(b.title, column));
    ImGui::PopFont();
    labels.emplace_back();
    for (const std::string& l : b.lines)
      for (std::string& part : WrapAtSpaces(l, column)) labels.back().push_back(std::move(part));
    title_lines = std::max(title_lines, titles.back().size());
    label_lines = std::max(label_lines, labels.back().size());
    largest = std::max(largest, b.value);
  }
  const float line = ImGui::GetTextLineHeightWithSpacing();
  ImGui::PushFont(title_font());
  const float title_line = ImGui::GetTextLineHeightWithSpacing();
  ImGui::PopFont();
  const float labels_h = title_line * static_cast<float>(title_lines) + 4 + line * static_cast<float>(label_lines);
  const float side_max = std::max(20.0f, std::min(column, height - labels_h - 8));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float base = origin.y + side_max;
  const auto centred = [&](float x, float y, ImU32 colour, const std::string& text) {
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    dl->AddText({x + std::max(0.0f, (column - ts.x) / 2), y}, colour, text.c_str());
  };
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const float x = origin.x + static_cast<float>(i) * (column + gap);
    if (b.value > 0 && largest > 0) {
      // Area, not side, is proportional: side = max side · sqrt(value / largest).
      const float side = std::max(2.0f, side_max * static_cast<float>(std::sqrt(b.value / largest)));
      const ImVec2 a{x + (column - side) / 2, base - side};
      dl->AddRectFilled(a, {a.x + side, base}, b.colour, 3.0f);
      if (b.marked)
        dl->AddRect({a.x - 3, a.y - 3}, {a.x + side + 3, base + 3}, ImGui::GetColorU32(ImGuiCol_Text), 3.0f, 0, 2.0f);
    } else {
      centred(x, base - ImGui::GetTextLineHeight(), ImGui::GetColorU32(ImGuiCol_TextDisabled), "not possible");
    }
    float y = base + 8;
    ImGui::PushFont(title_font());
    for (const std::string& t : titles[i]) {
      centred(x, y, b.colour, t);
      y += title_line;
    }
    ImGui::PopFont();
    y += 4;
    for (const std::string& l : labels[i]) {
      centred(x, y, ImGui::GetColorU32(ImGuiCol_Text), l);
      y += line;
    }
  }
  ImGui::Dummy({avail, side_max + 8 + labels_h + 4});
  ImGui::PopID();
}

}  // namespace attn::ui
