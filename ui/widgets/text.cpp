#include "ui/widgets/text.h"

#include <string>
#include <utility>

#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

std::vector<std::string> WrapAtSpaces(std::string_view text, float width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", i), text.size());
    const std::string_view word = text.substr(i, end - i);
    const std::string candidate = line.empty() ? std::string(word) : line + " " + std::string(word);
    if (!line.empty() && ImGui::CalcTextSize(candidate.c_str()).x > width) {
      lines.push_back(std::exchange(line, std::string(word)));
    } else {
      line = candidate;
    }
    if (end < text.size() && text[end] == '\n') lines.push_back(std::exchange(line, std::string()));
    i = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

void TextWrappedAtSpaces(std::string_view text, ImU32 colour) {
  if (colour) ImGui::PushStyleColor(ImGuiCol_Text, colour);
  for (const std::string& line : WrapAtSpaces(text, ImGui::GetContentRegionAvail().x))
    ImGui::TextUnformatted(line.c_str());
  if (colour) ImGui::PopStyleColor();
}

void TitleText(std::string_view text) {
  ImGui::PushFont(title_font());
  ImGui::TextUnformatted(text.data(), text.data() + text.size());
  ImGui::PopFont();
}

void TextDisabledWrapped(std::string_view text) {
  TextWrappedAtSpaces(text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
}

void AgreementBadge(const Agreement& a) {
  // On a light page the dark theme's light green is under 2:1 against white: deeper shades read at over 6:1.
  const bool light = light_page();
  const ImU32 ok = light ? IM_COL32(0, 110, 0, 255) : IM_COL32(115, 217, 115, 255);
  const ImU32 bad = light ? IM_COL32(190, 30, 20, 255) : IM_COL32(255, 102, 89, 255);
  TextWrappedAtSpaces(a.text, a.ok ? ok : bad);
}

void SameLineIfFits(float width, float spacing) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + spacing + width <= right) ImGui::SameLine(0, spacing);
}

float LabelledWidth(float field, const char* label) {
  return field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

std::string FitText(const std::string& s, float width, bool report) {
  if (ImGui::CalcTextSize(s.c_str()).x <= width) return s;
  std::string t = s;
  while (!t.empty()) {
    std::size_t n = t.size() - 1;
    while (n > 0 && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) --n;
    t.resize(n);
    if (ImGui::CalcTextSize((t + "\u2026").c_str()).x <= width) break;
  }
  if (report && LayoutCheckOn())
    ReportHere("label shortened: \"" + s + "\" drawn as \"" + (t.empty() ? std::string() : t + "\u2026") + "\"");
  return t.empty() ? t : t + "\u2026";
}

}  // namespace attn::ui
