// AdamW and clipping (core/adamw.h) on numbers worked by hand from the update rule of Loshchilov and Hutter, in
// torch.optim.AdamW's form.
#include <doctest/doctest.h>

#include <cmath>

#include "core/adamw.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("one AdamW step: decoupled decay, then the bias-corrected moments") {
  Model model, gradient;
  model.embedding = mat({{1.0, -2.0}});
  gradient.embedding = mat({{0.5, 0.25}});
  AdamWState state;
  const AdamWConfig c{0.1, 0.9, 0.999, 1e-8, 0.01, 0.0};
  const double norm = adamw_step(model, gradient, state, c);
  CHECK(norm == std::sqrt(0.5 * 0.5 + 0.25 * 0.25));
  CHECK(state.step == 1);
  // m = 0.1 g, v = 0.001 g^2; corrected: m / 0.1 = g, sqrt(v / 0.001) = |g|: each weight moves by lr * g / (|g| + eps).
  check_matrix(state.m[0], mat({{0.05, 0.025}}), 1e-16, "m");
  check_matrix(state.v[0], mat({{0.00025, 0.0000625}}), 1e-18, "v");
  check_matrix(*model.embedding, mat({{0.999 - 0.1 * 0.5 / (0.5 + 1e-8), -1.998 - 0.1 * 0.25 / (0.25 + 1e-8)}}), 1e-15,
               "the weights after one step");
}

TEST_CASE("clipping scales the gradient to the norm asked for, and leaves a smaller one alone") {
  Model model, gradient;
  model.embedding = mat({{0.0, 0.0}});
  gradient.embedding = mat({{3.0, 4.0}});  // norm 5
  AdamWState state;
  AdamWConfig c;
  c.clip = 1.0;
  CHECK(adamw_step(model, gradient, state, c) == 5.0);
  const double coef = 1.0 / (5.0 + 1e-6);
  check_matrix(state.m[0], mat({{0.1 * 3.0 * coef, 0.1 * 4.0 * coef}}), 1e-16, "m after clipping");
  AdamWState unclipped;
  c.clip = 10.0;
  adamw_step(model, gradient, unclipped, c);
  check_matrix(unclipped.m[0], mat({{0.3, 0.4}}), 1e-15, "m of a gradient under the bound");
}
