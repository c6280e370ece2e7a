#pragma once
// ui::VariantBlocks: quantities drawn as squares whose AREAS are proportional to them, side by side on one
// baseline, so "GQA caches an eighth of MHA" is seen at a glance, then read in the labels beneath.
#include <span>
#include <string>
#include <vector>

#include <imgui.h>

namespace attn::ui {

struct Block {
  std::string title;               // "GQA (G = 8)"
  double value = 0;                // what the area shows; 0 (or less) draws no square: "not possible"
  std::vector<std::string> lines;  // labels under the square
  ImU32 colour = 0;
  bool marked = false;  // drawn with a heavier outline (the model's own variant)
};

// `height`: the largest square's side plus the labels; the largest value gets the largest square. The squares and their
// labels are the last item (ImGui::GetItemRectMin/Max).
void VariantBlocks(const char* id, std::span<const Block> blocks, float height);
// The height of the titles and labels under the squares in the available width: what `height` must hold besides the
// largest square.
float VariantBlocksLabelsHeight(std::span<const Block> blocks);

}  // namespace attn::ui
