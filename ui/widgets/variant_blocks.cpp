#include "ui/widgets/variant_blocks.h"

#include <algorithm>
#include <cmath>

#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

namespace {

// Every label wrapped to its column, so neighbouring columns never run into each other.
struct Wrapped {
  float column = 0;
  std::vector<std::vector<std::string>> titles, labels;
  std::size_t title_lines = 0, label_lines = 0;
  double largest = 0;
  float line = 0, title_line = 0, labels_h = 0;
};

constexpr float kBlockGap = 18.0f;

Wrapped wrap_blocks(std::span<const Block> blocks) {
  Wrapped w;
  const float avail = ImGui::GetContentRegionAvail().x;
  w.column = (avail - kBlockGap * static_cast<float>(blocks.size() - 1)) / static_cast<float>(blocks.size());
  for (const Block& b : blocks) {
    ImGui::PushFont(title_font());
    w.titles.push_back(WrapAtSpaces(b.title, w.column));
    ImGui::PopFont();
    w.labels.emplace_back();
    for (const std::string& l : b.lines)
      for (std::string& part : WrapAtSpaces(l, w.column)) w.labels.back().push_back(std::move(part));
    w.title_lines = std::max(w.title_lines, w.titles.back().size());
    w.label_lines = std::max(w.label_lines, w.labels.back().size());
    w.largest = std::max(w.largest, b.value);
  }
  w.line = ImGui::GetTextLineHeightWithSpacing();
  ImGui::PushFont(title_font());
  w.title_line = ImGui::GetTextLineHeightWithSpacing();
  ImGui::PopFont();
  w.labels_h = w.title_line * static_cast<float>(w.title_lines) + 4 + w.line * static_cast<float>(w.label_lines);
  return w;
}

}  // namespace

float VariantBlocksLabelsHeight(std::span<const Block> blocks) { return wrap_blocks(blocks).labels_h + 12; }

void VariantBlocks(const char* id, std::span<const Block> blocks, float height) {
  ImGui::PushID(id);
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = kBlockGap;
  const Wrapped w = wrap_blocks(blocks);
  const float column = w.column, line = w.line, title_line = w.title_line, labels_h = w.labels_h;
  const double largest = w.largest;
  const auto& titles = w.titles;
  const auto& labels = w.labels;
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
