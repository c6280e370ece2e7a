#pragma once
// The Train view's words: what each head has become by its scores (core/head_scores.h), what changed between two
// snapshots ("head 1.2 now attends to the token after the previous copy of the current one: an induction head"),
// and what each task asks of the model. Pure functions, so tests pin every sentence.
#include <string>
#include <string_view>
#include <vector>

#include "core/head_scores.h"
#include "core/matrix.h"
#include "core/tasks.h"

namespace attn::ui {

// A head's role is its highest score among the four, once that score reaches this.
inline constexpr double kHeadRoleScore = 0.3;
HeadRole head_role(const HeadScores& s);
std::string role_name(HeadRole r);  // "induction head", "no clear pattern"
// What a head has become in a word that fits under a thumbnail ("previous", "first token", "unclear"), and where
// the thumbnail is too narrow for the word ("prev", "ind", "dup", "first", "–").
std::string role_word(HeadRole r);
std::string role_abbreviation(HeadRole r);
std::string role_letter(HeadRole r);  // narrower still: "P", "I", "D", "F", "–"

// One sentence per head whose role changed from `before` to `now` (same heads, same order), "head L.H ..." ; a
// head that found a role first, in layer and head order.
std::vector<std::string> role_changes(const std::vector<HeadScores>& before, const std::vector<HeadScores>& now);

// Every head's role in one sentence, for a page whose thumbnails are folded: "Previous-token heads: 0.2 and 0.3.
// Induction heads: 1.0, 1.1, 1.2 and 1.3. No clear pattern yet: 0.0 and 0.1." (roles in the order of HeadRole). Every
// head is named, so a page that names heads shows them while the thumbnails are folded.
std::string roles_summary(const std::vector<HeadScores>& heads);

// The score chart's end labels, one per head (same order as `heads`, `last` their lines' last values): where every
// head ends within `close` of the others, one label "all 8 heads" on the first; else where a layer's heads all end
// within `close` of each other, "layer L" on its first head; else the head's name, "L.H". "": no label (the line is
// named by its group's). Eight names stacked at one end needed leaders as long as the plot is tall.
std::vector<std::string> score_end_labels(const std::vector<HeadScores>& heads, const std::vector<double>& last,
                                          double close);

// The score chart's kinds, as its menu names them: one score for every head, or the induction circuit's pair, the
// previous-token score in layer 0 (where such heads form) and the induction score in the layers after it: the two
// that rise together when the loss falls.
inline constexpr const char* kScoreKinds[] = {"induction", "previous-token", "duplicate-token", "first-token",
                                              "circuit"};
inline constexpr int kCircuitScore = 4;
double head_score(const HeadScores& h, int kind);
std::string score_chart_title(int kind);  // "Induction score per head"

// What the task asks and what to watch for, a short paragraph.
std::string task_story(const Task& t);

// The gradient tab's numbers for one query's row (`dp` = dL/dp, `ds` = dL/ds): its largest weight, and each gradient's
// norm named as one (the square root of the sum of squares, over every key) beside its largest cell, the end of its
// strip's colour bar. A norm quoted alone is larger than any cell, and the class read it against the bar as a mismatch.
std::string gradient_sizes_text(double largest_weight, const Matrix& dp, const Matrix& ds);

// Where a block `height` tall, due at `top` in a scrolling box whose first screen shows `box_top` to `edge` (content
// coordinates), starts instead: past the edge when the edge would cut it (the box shows no half sentence at the top
// of its scroll), else at `top`. A block at the box's top stays: it is cut wherever it starts.
float block_top_clear_of_edge(float top, float height, float box_top, float edge);

// Where each sentence of `text` ends (the byte after its ". ", "? " or "! ", the text's end last): a paragraph the
// box's edge would cut is split at one of them, its first sentences above the edge and the rest past it.
std::vector<std::size_t> sentence_ends(std::string_view text);

}  // namespace attn::ui
