#include "ui/text.h"

#include <string>

namespace attn::ui {

void TextWrappedAtSpaces(std::string_view text, ImU32 colour) {
  const float width = ImGui::GetContentRegionAvail().x;
  if (colour) ImGui::PushStyleColor(ImGuiCol_Text, colour);
  std::string line;
  std::size_t i = 0;
  auto flush = [&] {
    ImGui::TextUnformatted(line.c_str());
    line.clear();
  };
  while (i <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", i), text.size());
    const std::string_view word = text.substr(i, end - i);
    const std::string candidate = line.empty() ? std::string(word) : line + " " + std::string(word);
    if (!line.empty() && ImGui::CalcTextSize(candidate.c_str()).x > width) {
      flush();
      line = std::string(word);
    } else {
      line = candidate;
    }
    if (end < text.size() && text[end] == '\n') flush();
    i = end + 1;
  }
  if (!line.empty()) flush();
  if (colour) ImGui::PopStyleColor();
}

}  // namespace attn::ui
