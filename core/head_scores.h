#pragma once
// What each head of a model attends to, measured as Olsson et al. (2022, "In-context Learning and Induction Heads",
// appendix on head activation evaluators) do: the mean attention weight a head puts on one kind of position, over
// a fixed probe batch (tasks.h) of random symbols with one repeated segment.
#include <vector>

#include "core/head_roles.h"
#include "core/model.h"
#include "core/tasks.h"

namespace attn {

struct HeadScores {
  int layer = 0, head = 0;
  double previous_token = 0.0;   // on position i - 1, over every position i >= 1
  double induction = 0.0;        // from each token of the repeat to the token after its earlier copy (prefix matching)
  double duplicate_token = 0.0;  // from each token of the repeat to its earlier copy
  double first_token = 0.0;      // on position 0, over every position i >= 1
};

// Every layer's heads, layer by layer. `resolved`: every weight present; a model check_trainable accepts.
std::vector<HeadScores> head_scores(const Model& resolved, const ProbeBatch& probe);

}  // namespace attn
