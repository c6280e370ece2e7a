#include "core/head_scores.h"

#include <algorithm>

#include "core/model_gradient.h"

namespace attn {
namespace {

// The sums behind one head's scores and how many positions each averages over.
struct ScoreSums {
  double previous = 0, induction = 0, duplicate = 0, first = 0;
  int every = 0, repeated = 0;
};

void add_sequence(const Matrix& weights, const Repeat& r, ScoreSums& s) {  // weights (N, N)
  for (Eigen::Index i = 1; i < weights.rows(); ++i) {
    s.previous += weights(i, i - 1);
    s.first += weights(i, 0);
    ++s.every;
  }
  for (int k = 0; k < r.length; ++k) {
    s.induction += weights(r.second + k, r.first + k + 1);
    s.duplicate += weights(r.second + k, r.first + k);
    ++s.repeated;
  }
}

}  // namespace

std::vector<HeadScores> head_scores(const Model& resolved, const ProbeBatch& probe) {
  std::vector<std::vector<ScoreSums>> sums(resolved.layers.size());
  for (std::size_t l = 0; l < sums.size(); ++l)
    sums[l].resize(static_cast<std::size_t>(resolved.layers[l].attention.heads));
  for (std::size_t b = 0; b < probe.ids.size(); ++b) {
    const std::vector<std::vector<Matrix>> patterns = attention_patterns(resolved, probe.ids[b]);
    for (std::size_t l = 0; l < patterns.size(); ++l)
      for (std::size_t h = 0; h < patterns[l].size(); ++h) add_sequence(patterns[l][h], probe.repeats[b], sums[l][h]);
  }
  std::vector<HeadScores> scores;
  for (std::size_t l = 0; l < sums.size(); ++l)
    for (std::size_t h = 0; h < sums[l].size(); ++h) {
      const ScoreSums& s = sums[l][h];
      const double every = std::max(s.every, 1), repeated = std::max(s.repeated, 1);
      scores.push_back({static_cast<int>(l), static_cast<int>(h), s.previous / every, s.induction / repeated,
                        s.duplicate / repeated, s.first / every});
    }
  return scores;
}

}  // namespace attn
