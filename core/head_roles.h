#pragma once
// What a head does on one text, read from its attention weights: the same four kinds of position as the probe batch's
// scores (head_scores.h), found by the text's own token ids rather than a known repeat.
#include <optional>
#include <vector>

#include "core/matrix.h"

namespace attn {

// Each a mean attention weight over the queries it is defined for; nullopt when the text has none.
struct TextHeadScores {
  std::optional<double> previous_token;   // W[i, i-1] over i = 1..N-1
  std::optional<double> induction;        // sum of W[i, j+1] over earlier copies j (j + 1 < i) of token i, over the
                                          // queries that have one: the token after the earlier copy (prefix matching)
  std::optional<double> duplicate_token;  // sum of W[i, j] over earlier copies j < i of token i, over those queries
  std::optional<double> first_token;      // W[i, 0] over i = 1..N-1: the first token as a sink
};

// What a head does, by the kind of position it attends to (None: no clear pattern).
enum class HeadRole { None, PreviousToken, Induction, DuplicateToken, FirstToken };
inline constexpr HeadRole kHeadRoles[] = {HeadRole::PreviousToken, HeadRole::Induction, HeadRole::DuplicateToken,
                                          HeadRole::FirstToken};
std::optional<double> score_of(const TextHeadScores& s, HeadRole role);

// weights (N, N) of a causal head over tokens with these ids (N of them).
TextHeadScores text_head_scores(const Matrix& weights, const std::vector<int>& ids);

}  // namespace attn
