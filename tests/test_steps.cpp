// The pipeline's steps (ui/logic/steps, step_matrices): their order, names and headline matrices; the views' names.
#include "helpers.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/steps.h"
#include "ui/logic/views.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("the step list: ten steps in pipeline order, by number or by name") {
  REQUIRE(all_steps().size() == 10);
  CHECK(parse_step("0") == Step::Inputs);
  CHECK(parse_step("3") == Step::Scale);
  CHECK(parse_step("softmax") == Step::Softmax);
  CHECK(step_names() ==
        "inputs, projections, scores, scale, mask, softmax, weighted_sum, head_outputs, concat, output");
  CHECK(parse_step("weighted_sum") == Step::WeightedSum);
  CHECK(parse_step("9") == Step::Output);
  CHECK_FALSE(parse_step("10").has_value());
  CHECK_FALSE(parse_step("-1").has_value());
  CHECK_FALSE(parse_step("soft").has_value());
  CHECK(step_at(42) == Step::Output);
  CHECK(step_info(Step::Scores).name == "scores");
}

TEST_CASE("each step's headline matrix") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  CHECK(step_result(t, Step::Scores, 0).m == &t.heads[0].scores);
  const StepMatrix w = step_result(t, Step::Softmax, 0);
  CHECK(w.m == &t.heads[0].weights);
  CHECK(w.map == ColorMap::Sequential);
  CHECK(w.visible == &t.heads[0].mask);
  CHECK(step_result(t, Step::Output, 0).m == &t.output);
}

TEST_CASE("the views: names and titles written once, parsed back") {
  CHECK(view_names() == "pipeline, decode, compare, memory, cost");
  CHECK(view_names(" | ") == "pipeline | decode | compare | memory | cost");
  CHECK(view_title(View::Memory) == "Memory");
  CHECK(parse_view("cost") == View::Cost);
  CHECK_FALSE(parse_view("Cost").has_value());
}
