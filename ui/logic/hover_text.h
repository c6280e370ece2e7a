#pragma once
// What the app says when the pointer rests on one cell: the arithmetic that produced that number, with the live
// values of the trace. Pure functions returning UTF-8, so tests pin every string without a window.
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/text_format.h"  // short_number
#include "ui/logic/steps.h"

namespace attn::ui {

// Terms joined with " + "; more than 8 keep the first 3 and the last 2: "a + b + c + … + y + z".
std::string join_sum(const std::vector<std::string>& terms);

// The cell (row, col) of the result of `step` for query head `head`. Rows are queries (t.tokens), columns of
// the N_Q x N_KV steps are keys (t.context_tokens). Projections explains Q (see explain_projection for K, V);
// Concat and Output explain the final output and ignore `head`. Any index out of range gives "".
std::string explain_cell(const Trace& t, Step step, int head, int row, int col);

// One cell of X + P (the context's X_kv + P when `keys`): the embedding plus the position's row, with the sine or
// cosine it came from for sinusoidal positions.
std::string explain_position(const Trace& t, bool keys, int row, int col);
// One cell of RoPE(q) (RoPE(k) when `keys`) of `head`: the pair it belongs to turned by its position's angle; for
// MLA's [q | q_r] the part it comes from.
std::string explain_rope(const Trace& t, int head, bool keys, int row, int col);
// One angle of the rope step: position x base^(-2i/d).
std::string explain_rope_angle(const Trace& t, bool keys, int row, int pair);

// One cell of q, k or v of `head` (which = 'q', 'k' or 'v'): the input row times one column of the weight.
// Rows of k and v are keys (t.context_tokens). Anything out of range, or another letter, gives "".
// which: 'q', 'k', 'v', or 'c' for MLA's cached latent (head ignored).
std::string explain_projection(const Trace& t, char which, int head, int row, int col);

// A check of two computations that must agree (decoding against the full trace, MLA's absorbed form against
// q kᵀ): "✔ {claim} (largest difference 0){reason}" within rounding, else "✘ Not so: largest difference 0.012,
// more than rounding (10^-9). Expected: {claim}". A tick never stands beside a difference that matters.
inline constexpr double kAgreementTolerance = 1e-9;
struct Agreement {
  std::string text;
  bool ok = false;
};
Agreement agreement(double largest_difference, const std::string& claim, const std::string& reason = "");

// The normaliser, shift and entropy of one row of the weights, and what happened to a flagged row.
std::string explain_row_summary(const Trace& t, int head, int row);

}  // namespace attn::ui
