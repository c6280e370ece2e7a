// The pipeline's steps (ui/logic/steps, step_matrices): their order, names and headline matrices; the views' names.
#include "helpers.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/steps.h"
#include "ui/logic/views.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("the step list: ten steps for plain attention, by number or by name") {
  const AttentionConfig plain;
  REQUIRE(step_count(plain) == 10);
  CHECK(all_steps().size() == 13);
  CHECK(parse_step("0", plain) == Step::Inputs);
  CHECK(parse_step("3", plain) == Step::Scale);
  CHECK(parse_step("softmax", plain) == Step::Softmax);
  CHECK(step_names(plain) ==
        "inputs, projections, scores, scale, mask, softmax, weighted_sum, head_outputs, concat, output");
  CHECK(parse_step("weighted_sum", plain) == Step::WeightedSum);
  CHECK(parse_step("9", plain) == Step::Output);
  CHECK_FALSE(parse_step("10", plain).has_value());
  CHECK_FALSE(parse_step("-1", plain).has_value());
  CHECK_FALSE(parse_step("soft", plain).has_value());
  CHECK_FALSE(parse_step("rope", plain).has_value());  // plain attention has no rope step
  CHECK(step_at(42, plain) == Step::Output);
  CHECK(step_info(Step::Scores).name == "scores");
}

TEST_CASE("positions and sparse attention add their steps where they act") {
  AttentionConfig a;
  a.positions = Positions::Sinusoidal;
  CHECK(step_names(a) ==
        "inputs, positions, projections, scores, scale, mask, softmax, weighted_sum, head_outputs, concat, output");
  a.positions = Positions::Rope;
  a.sparse = SparseConfig{2, 1, 1};
  CHECK(step_names(a) ==
        "inputs, projections, rope, scores, scale, mask, selection, softmax, weighted_sum, "
        "head_outputs, concat, output");
  CHECK(step_count(a) == 12);
  CHECK(parse_step("2", a) == Step::Rope);
  CHECK(parse_step("7", a) == Step::Softmax);
  CHECK(step_index(Step::Selection, a) == 6);
  // A step the configuration lacks counts as the one before it: losing rope leaves the view on the projections.
  a.positions = Positions::None;
  CHECK(applying_step(Step::Rope, a) == Step::Projections);
  CHECK(step_index(Step::Rope, a) == 1);
  CHECK(applying_step(Step::Positions, a) == Step::Inputs);
}

TEST_CASE("each step's headline matrix") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  CHECK(step_result(t, Step::Scores, 0).m == &t.heads[0].scores());
  const StepMatrix w = step_result(t, Step::Softmax, 0);
  CHECK(w.m == &t.heads[0].weights());
  CHECK(w.map == ColourMap::Sequential);
  CHECK(w.visible == &*t.heads[0].mask);
  CHECK(step_result(t, Step::Output, 0).m == &t.output);
}

TEST_CASE("the views: names and titles written once, parsed back") {
  CHECK(view_names() == "pipeline, decode, compare, memory, cost, model, train, real");
  CHECK(view_names(" | ") == "pipeline | decode | compare | memory | cost | model | train | real");
  CHECK(view_title(View::Memory) == "Memory");
  CHECK(parse_view("cost") == View::Cost);
  CHECK_FALSE(parse_view("Cost").has_value());
}
