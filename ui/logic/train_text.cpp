#include "ui/logic/train_text.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text_format.h"
#include "ui/logic/hover_text.h"

namespace attn::ui {
namespace {

std::string what_it_does(HeadRole r) {
  switch (r) {
    case HeadRole::PreviousToken: return "attends to the token before the current one";
    case HeadRole::Induction: return "attends to the token after the previous copy of the current one";
    case HeadRole::DuplicateToken: return "attends to the previous copy of the current token";
    case HeadRole::FirstToken: return "rests on the first token, as a head with nothing to find does";
    case HeadRole::None: break;
  }
  return "has no clear pattern any more";
}

double role_score(const HeadScores& s) {
  switch (head_role(s)) {
    case HeadRole::PreviousToken: return s.previous_token;
    case HeadRole::Induction: return s.induction;
    case HeadRole::DuplicateToken: return s.duplicate_token;
    case HeadRole::FirstToken: return s.first_token;
    case HeadRole::None: break;
  }
  return 0.0;
}

std::string article(HeadRole r) { return r == HeadRole::Induction ? "an " : "a "; }

}  // namespace

HeadRole head_role(const HeadScores& s) {
  const std::array<std::pair<double, HeadRole>, 4> scores{{{s.previous_token, HeadRole::PreviousToken},
                                                           {s.induction, HeadRole::Induction},
                                                           {s.duplicate_token, HeadRole::DuplicateToken},
                                                           {s.first_token, HeadRole::FirstToken}}};
  std::pair<double, HeadRole> best{kHeadRoleScore, HeadRole::None};
  for (const auto& score : scores)
    if (score.first >= best.first) best = score;
  return best.second;
}

std::string role_letter(HeadRole r) {
  switch (r) {
    case HeadRole::PreviousToken: return "P";
    case HeadRole::Induction: return "I";
    case HeadRole::DuplicateToken: return "D";
    case HeadRole::FirstToken: return "F";
    case HeadRole::None: break;
  }
  return "\u2013";
}

std::string role_abbreviation(HeadRole r) {
  switch (r) {
    case HeadRole::PreviousToken: return "prev";
    case HeadRole::Induction: return "ind";
    case HeadRole::DuplicateToken: return "dup";
    case HeadRole::FirstToken: return "first";
    case HeadRole::None: break;
  }
  return "\u2013";
}

std::string role_word(HeadRole r) {
  switch (r) {
    case HeadRole::PreviousToken: return "previous";
    case HeadRole::Induction: return "induction";
    case HeadRole::DuplicateToken: return "duplicate";
    case HeadRole::FirstToken: return "first token";
    case HeadRole::None: break;
  }
  return "unclear";
}

std::string role_name(HeadRole r) {
  switch (r) {
    case HeadRole::PreviousToken: return "previous-token head";
    case HeadRole::Induction: return "induction head";
    case HeadRole::DuplicateToken: return "duplicate-token head";
    case HeadRole::FirstToken: return "first-token head";
    case HeadRole::None: break;
  }
  return "no clear pattern";
}

std::vector<std::string> role_changes(const std::vector<HeadScores>& before, const std::vector<HeadScores>& now) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < now.size() && i < before.size(); ++i) {
    const HeadRole was = head_role(before[i]), is = head_role(now[i]);
    if (was == is) continue;
    const std::string head = "Head " + std::to_string(now[i].layer) + "." + std::to_string(now[i].head);
    out.push_back(is == HeadRole::None
                      ? head + " " + what_it_does(is) + " (it was " + article(was) + role_name(was) + ")."
                      : head + " now " + what_it_does(is) + ": " + article(is) + role_name(is) + " (score " +
                            probability_text(role_score(now[i])) + ").");
  }
  return out;
}

namespace {

std::string head_label(const HeadScores& h) { return std::to_string(h.layer) + "." + std::to_string(h.head); }

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

// Whether the values at `at` lie within `close` of each other.
bool within(const std::vector<double>& last, const std::vector<std::size_t>& at, double close) {
  double lo = last[at.front()], hi = lo;
  for (const std::size_t i : at) lo = std::min(lo, last[i]), hi = std::max(hi, last[i]);
  return hi - lo <= close;
}

}  // namespace

std::string roles_summary(const std::vector<HeadScores>& heads) {
  const std::array<std::pair<HeadRole, const char*>, 5> kinds{{{HeadRole::PreviousToken, "Previous-token heads"},
                                                               {HeadRole::Induction, "Induction heads"},
                                                               {HeadRole::DuplicateToken, "Duplicate-token heads"},
                                                               {HeadRole::FirstToken, "First-token heads"},
                                                               {HeadRole::None, "No clear pattern yet"}}};
  std::string out;
  for (const auto& kind : kinds) {
    std::vector<std::string> names;
    for (const HeadScores& h : heads)
      if (head_role(h) == kind.first) names.push_back(head_label(h));
    if (names.empty()) continue;
    out += (out.empty() ? "" : " ") + std::string(kind.second) + ": " + and_list(names) + ".";
  }
  return out;
}

std::vector<std::string> score_end_labels(const std::vector<HeadScores>& heads, const std::vector<double>& last,
                                          double close) {
  std::vector<std::string> out(heads.size());
  if (heads.empty() || last.size() != heads.size()) return out;
  std::vector<std::size_t> all(heads.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (heads.size() > 1 && within(last, all, close)) {
    out[0] = "all " + std::to_string(heads.size()) + " heads";
    return out;
  }
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (i > 0 && heads[i].layer == heads[i - 1].layer) continue;  // the layer's first head decides for it
    std::vector<std::size_t> layer;
    for (std::size_t j = i; j < heads.size() && heads[j].layer == heads[i].layer; ++j) layer.push_back(j);
    const bool grouped = layer.size() > 1 && within(last, layer, close);
    for (const std::size_t j : layer) out[j] = grouped ? "" : head_label(heads[j]);
    if (grouped) out[i] = "layer " + std::to_string(heads[i].layer);
  }
  return out;
}

double head_score(const HeadScores& h, int kind) {
  switch (kind) {
    case 1: return h.previous_token;
    case 2: return h.duplicate_token;
    case 3: return h.first_token;
    case kCircuitScore: return h.layer == 0 ? h.previous_token : h.induction;
    default: return h.induction;
  }
}

std::string score_chart_title(int kind) {
  if (kind == kCircuitScore) return "Previous-token (layer 0) and induction scores";
  std::string name = kScoreKinds[std::clamp(kind, 0, kCircuitScore - 1)];
  name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name + " score per head";
}

std::string task_story(const Task& t) {
  switch (t.kind) {
    case TaskKind::Induction:
      return "Random symbols in which a segment of 3 to " + std::to_string(repeat_range(t.seq_len).max_length) +
             " repeats. The repeat can only be predicted by finding the earlier copy of the current symbol and "
             "reading what came after it. Watch the loss stay on a plateau, little better than a guess among the " +
             std::to_string(t.vocab - 2) +
             " symbols, until a previous-token head in layer 0 and induction heads in layer 1 form together; "
             "then it falls. Evaluation repeats at longer distances than training ever did, so only a real "
             "induction head passes it.";
    case TaskKind::PreviousToken:
      return "Predict the token before the current one: one head that attends to the previous position is enough.";
    case TaskKind::Copy: return "Write the symbols before | again after it: a head must look a fixed distance back.";
    case TaskKind::Reverse: return "Write the symbols before | in reverse after it: each answer looks further back.";
    case TaskKind::Sort:
      return "Write the symbols before | in sorted order (minGPT's demo): heads must find the next smallest symbol.";
    case TaskKind::Text:
      return "Predict the next character of ten Shakespeare sonnets. Evaluation reads the last tenth, never trained "
             "on.";
  }
  return {};
}

std::string gradient_sizes_text(double largest_weight, const Matrix& dp, const Matrix& ds) {
  // short_number: the colour bars' ends are written with it, so the largest cells read as the bars do.
  const auto sizes = [](const char* name, const Matrix& m) {
    return std::string("|") + name + "| = " + short_number(m.norm()) + " (largest cell " +
           short_number(m.cwiseAbs().maxCoeff()) + ")";
  };
  return "Largest weight " + format_number(largest_weight, 3) +
         "; the norms (square root of the sum of squares over the keys) " + sizes("\u2202L/\u2202p", dp) + ", " +
         sizes("\u2202L/\u2202s", ds) + ".";
}

float block_top_clear_of_edge(float top, float height, float box_top, float edge) {
  const bool cut = top < edge && top + height > edge;
  return cut && top > box_top ? edge : top;
}

std::vector<std::size_t> sentence_ends(std::string_view text) {
  std::vector<std::size_t> ends;
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    if ((text[i] == '.' || text[i] == '?' || text[i] == '!') && text[i + 1] == ' ') ends.push_back(i + 1);
  ends.push_back(text.size());
  return ends;
}

}  // namespace attn::ui
