#include "ui/text.h"

#include <string>

#include "ui/layout_check_frame.h"

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

void TextDisabledWrapped(std::string_view text) { TextWrappedAtSpaces(text, ImGui::GetColorU32(ImGuiCol_TextDisabled)); }

std::string FitText(const std::string& s, float width) {
  if (ImGui::CalcTextSize(s.c_str()).x <= width) return s;
  std::string t = s;
  while (!t.empty()) {
    std::size_t n = t.size() - 1;
    while (n > 0 && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) --n;
    t.resize(n);
    if (ImGui::CalcTextSize((t + "\u2026").c_str()).x <= width) break;
  }
  ReportHere("label shortened: \"" + s + "\" drawn as \"" + (t.empty() ? std::string() : t + "\u2026") + "\"");
  return t.empty() ? t : t + "\u2026";
}

}  // namespace attn::ui
