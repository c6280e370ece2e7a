#include "core/head_roles.h"

namespace attn {

std::optional<double> score_of(const TextHeadScores& s, HeadRole role) {
  switch (role) {
    case HeadRole::PreviousToken: return s.previous_token;
    case HeadRole::Induction: return s.induction;
    case HeadRole::DuplicateToken: return s.duplicate_token;
    case HeadRole::FirstToken: return s.first_token;
    case HeadRole::None: break;
  }
  return std::nullopt;
}

namespace {

// The mean of `sum` over `count` queries, or nullopt without any.
std::optional<double> mean_over(double sum, int count) {
  return count > 0 ? std::optional<double>(sum / count) : std::nullopt;
}

}  // namespace

TextHeadScores text_head_scores(const Matrix& weights, const std::vector<int>& ids) {  // weights (N, N)
  const auto n = static_cast<Eigen::Index>(ids.size());
  double previous = 0, first = 0, induction = 0, duplicate = 0;
  int inducing = 0, duplicated = 0;
  for (Eigen::Index i = 1; i < n; ++i) {
    previous += weights(i, i - 1);
    first += weights(i, 0);
    bool copy = false, copy_before = false;
    for (Eigen::Index j = 0; j < i; ++j) {
      if (ids[static_cast<std::size_t>(j)] != ids[static_cast<std::size_t>(i)]) continue;
      copy = true;
      duplicate += weights(i, j);
      if (j + 1 < i) {
        copy_before = true;
        induction += weights(i, j + 1);
      }
    }
    duplicated += copy;
    inducing += copy_before;
  }
  return {mean_over(previous, static_cast<int>(n) - 1), mean_over(induction, inducing),
          mean_over(duplicate, duplicated), mean_over(first, static_cast<int>(n) - 1)};
}

}  // namespace attn
