#include "ui/widgets/text.h"

#include <string>
#include <utility>

#include "core/text_format.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/style.h"
#include "ui/widgets/theme.h"

namespace attn::ui {

namespace {

// A word wider than `width` ("HuggingFaceTB/SmolLM2-135M" in a narrow panel) in pieces that fit: each as long as fits,
// ending after its last '/', '-', '_' or '.' where it has one, never inside a UTF-8 character.
std::vector<std::string> split_word(std::string_view word, float width) {
  std::vector<std::string> pieces;
  while (!word.empty()) {
    std::size_t fits = 0;
    for (std::size_t n = 1; n <= word.size(); ++n) {
      if (n < word.size() && (static_cast<unsigned char>(word[n]) & 0xC0) == 0x80) continue;  // inside a character
      if (ImGui::CalcTextSize(word.data(), word.data() + n).x > width) break;
      fits = n;
    }
    if (fits == 0 || fits == word.size()) {  // not even one character fits: it overflows rather than vanishing
      std::size_t one = 1;
      while (one < word.size() && (static_cast<unsigned char>(word[one]) & 0xC0) == 0x80) ++one;
      fits = std::max(fits, std::min(one, word.size()));
    } else if (const std::size_t mark = word.substr(0, fits).find_last_of("/-_."); mark != std::string_view::npos) {
      fits = mark + 1;
    }
    pieces.emplace_back(word.substr(0, fits));
    word.remove_prefix(fits);
  }
  return pieces;
}

}  // namespace

std::vector<std::string> WrapAtSpaces(std::string_view text, float width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", i), text.size());
    std::string_view word = text.substr(i, end - i);
    if (width > 0 && ImGui::CalcTextSize(word.data(), word.data() + word.size()).x > width) {
      std::vector<std::string> pieces = split_word(word, width);
      if (!line.empty()) lines.push_back(std::exchange(line, std::string()));
      lines.insert(lines.end(), pieces.begin(), pieces.end() - 1);
      line = pieces.back();
      if (end < text.size() && text[end] == '\n') lines.push_back(std::exchange(line, std::string()));
      i = end + 1;
      continue;
    }
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
  ImGui::BeginGroup();
  TextWrappedAtSpaces(a.text, a.ok ? GetStyle().agree : GetStyle().disagree);
  ImGui::EndGroup();
  NoteInSight(SightKind::Verdict, "the check line", "\"" + shorten_label(a.text, 32) + "\"", ImGui::GetItemRectMin(),
              ImGui::GetItemRectMax());
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
