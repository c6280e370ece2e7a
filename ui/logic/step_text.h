#pragma once
// The paragraph beside each step: its equation with the current shapes, what it just did to the current numbers,
// and why attention has the step at all. Pure functions returning UTF-8, so tests pin them without a window.
#include <string>

#include "core/attention.h"
#include "ui/logic/steps.h"

namespace attn::ui {

struct StepText {
  std::string title;    // the step's screen title, "Scores  Q Kᵀ"
  std::string formula;  // "scores = q kᵀ   [3×3] = [3×3] · [3×3]ᵀ"
  std::string what;     // 2-4 short sentences quoting the live numbers
  std::string why;      // 1-3 sentences: what the step is for
};

// The text for `step` as query head `head` sees it; steps that cover every head (Inputs, Projections' full
// matrices, HeadOutputs, Concat, Output) still quote `head` where one head is an example. A head out of
// range is read as head 0.
StepText explain_step(const Trace& t, Step step, int head);
// The row every sentence quotes: the first real distribution over at least two keys, else the first normal row.
int example_row(const HeadTrace& h);

// What the shift experiment found: the scores with every position shifted by position_offset against the scores
// with positions from 0 differ by at most `largest_change`. With RoPE that is rounding (a tick, from agreement());
// with absolute positions the change is real and the sentence says why.
struct ShiftFinding {
  std::string text;
  bool same = false;  // within rounding
};
ShiftFinding explain_shift(const AttentionConfig& a, double largest_change);

}  // namespace attn::ui
