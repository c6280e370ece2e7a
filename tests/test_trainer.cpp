// Training in the window (ui/logic/trainer.h, train_text.h): the worker's run is core's training_step, snapshot by
// snapshot, and the view's words name what each head became.
#include <doctest/doctest.h>

#include "core/memory_budget.h"
#include "core/training.h"
#include "ui/logic/snapshot_gradients.h"
#include "ui/logic/train_text.h"
#include "ui/logic/trainer.h"

using namespace attn;
using namespace attn::ui;

namespace {

TrainSettings small_settings() {
  TrainSettings s;
  s.run.task = Task{TaskKind::Induction, 16, 12, {}};
  s.run.batch = 4;
  s.run.seed = 3;
  s.run.adamw.lr = 5e-3;
  s.shape.layers = 2;
  s.shape.heads = 2;
  s.shape.d_model = 8;
  s.steps = 10;
  s.snapshot_every = 4;
  return s;
}

HeadScores scores(int layer, int head, double prev, double ind, double dup, double first) {
  return HeadScores{layer, head, prev, ind, dup, first};
}

}  // namespace

TEST_CASE("the window's run gives the losses and weights of core's training steps, with a snapshot every few steps") {
  const TrainSettings s = small_settings();
  Trainer trainer;
  REQUIRE_FALSE(trainer.reset(s, limits::kDefaultMemoryBudget).has_value());
  CHECK(trainer.progress().snapshots.size() == 1);  // step 0, before any step
  trainer.step();
  trainer.wait_idle();
  trainer.poll();
  CHECK(trainer.step_count() == 1);
  trainer.run_until(100);  // stops at the run's 10 steps
  CHECK(trainer.step_count() == 10);
  CHECK(trainer.at_end());
  CHECK_FALSE(trainer.progress().running);

  TrainState t = start_training(resolve_model(task_model(s.run.task, s.shape, s.run.seed)));
  std::vector<double> losses;
  for (int i = 0; i < 10; ++i) losses.push_back(training_step(t, s.run).loss);
  CHECK(trainer.progress().losses == losses);

  const std::vector<std::shared_ptr<const TrainSnapshot>>& snaps = trainer.progress().snapshots;
  REQUIRE(snaps.size() == 4);  // steps 0, 4, 8 and the last, 10
  CHECK(snaps[1]->step == 4);
  CHECK(snaps[2]->step == 8);
  CHECK(snaps[3]->step == 10);
  CHECK(*snaps[3]->model->layers[0].weights.W_Q == *t.model.layers[0].weights.W_Q);
  const Evaluation e = evaluate(t.model, s.run.task);
  CHECK(snaps[3]->eval.loss == e.loss);
  CHECK(snaps[3]->eval.heads[3].induction == e.heads[3].induction);
  CHECK(snaps[3]->probe == probe_batch(s.run.task, 1).ids[0]);
  REQUIRE(snaps[3]->probe_attention.size() == 2);
  CHECK(snaps[3]->probe_attention[1][1].rows() == 12);
  CHECK(snapshot_at(trainer.progress(), 7)->step == 4);
  CHECK(snapshot_at(trainer.progress(), 8)->step == 8);
}

TEST_CASE("a run that cannot start says why and keeps the one before") {
  Trainer trainer;
  REQUIRE_FALSE(trainer.reset(small_settings(), limits::kDefaultMemoryBudget).has_value());
  TrainSettings bad = small_settings();
  bad.shape.d_model = 9;
  CHECK(trainer.reset(bad, limits::kDefaultMemoryBudget) == "d_model: must be a multiple of heads (2) but found 9");
  CHECK(trainer.settings().shape.d_model == 8);
  CHECK(trainer.ready());
  Model other = task_model(Task{TaskKind::Copy, 16, 12, {}}, small_settings().shape, 1);
  other.vocab[2] = "x";
  TrainSettings from_file = small_settings();
  from_file.start = std::make_shared<const Model>(other);
  CHECK(trainer.reset(from_file, limits::kDefaultMemoryBudget) ==
        "vocab[2]: the induction task's vocabulary has \"a\" here but found \"x\"");
}

TEST_CASE("start runs until pause, and a run that diverges stops and says so, with no NaN in its losses") {
  TrainSettings s = small_settings();
  s.steps = 100000;
  Trainer trainer;
  REQUIRE_FALSE(trainer.reset(s, limits::kDefaultMemoryBudget).has_value());
  trainer.start();
  while (trainer.step_count() < 3) trainer.poll();
  trainer.pause();
  trainer.wait_idle();
  trainer.poll();
  const int paused_at = trainer.step_count();
  CHECK(paused_at >= 3);
  CHECK_FALSE(trainer.progress().running);

  s.run.adamw.lr = 1e300;  // the first step sends the weights to infinity
  s.run.adamw.eps = 0;
  REQUIRE_FALSE(trainer.reset(s, limits::kDefaultMemoryBudget).has_value());
  trainer.run_until(20);
  CHECK(trainer.progress().stopped.starts_with("step "));
  CHECK(trainer.progress().stopped.find("try a lower learning rate") != std::string::npos);
  CHECK(trainer.at_end());
  for (double l : trainer.progress().losses) CHECK(std::isfinite(l));
}

TEST_CASE("a head's role is its highest score from 0.3 up, and each change is told in words") {
  CHECK(head_role(scores(0, 0, 0.1, 0.2, 0.05, 0.29)) == HeadRole::None);
  CHECK(head_role(scores(0, 0, 0.31, 0.2, 0.05, 0.1)) == HeadRole::PreviousToken);
  CHECK(head_role(scores(0, 0, 0.31, 0.6, 0.05, 0.1)) == HeadRole::Induction);
  CHECK(head_role(scores(0, 0, 0.0, 0.0, 0.4, 0.35)) == HeadRole::DuplicateToken);
  CHECK(head_role(scores(0, 0, 0.0, 0.0, 0.0, 0.9)) == HeadRole::FirstToken);
  const std::vector<HeadScores> before{scores(0, 0, 0.1, 0, 0, 0.1), scores(1, 2, 0.1, 0.1, 0, 0.1),
                                       scores(1, 3, 0.5, 0, 0, 0)};
  const std::vector<HeadScores> after{scores(0, 0, 0.1, 0, 0, 0.1), scores(1, 2, 0.1, 0.456, 0, 0.1),
                                      scores(1, 3, 0.2, 0, 0, 0)};
  CHECK(role_changes(before, after) ==
        std::vector<std::string>{
            "Head 1.2 now attends to the token after the previous copy of the current one: an induction head (score "
            "0.456).",
            "Head 1.3 has no clear pattern any more (it was a previous-token head)."});
  CHECK(task_story(Task{TaskKind::Induction, 64, 32, {}}).starts_with("Random symbols in which a segment of 3 to 8 "));
}

TEST_CASE("a folded page names every head's role in one sentence, grouped by role") {
  const std::vector<HeadScores> heads{scores(0, 0, 0.1, 0, 0, 0.1), scores(0, 1, 0.2, 0, 0, 0.1),
                                      scores(0, 2, 0.8, 0, 0, 0),   scores(0, 3, 0.7, 0, 0, 0),
                                      scores(1, 0, 0, 0.74, 0, 0),  scores(1, 1, 0, 0.92, 0, 0)};
  CHECK(roles_summary(heads) ==
        "Previous-token heads: 0.2 and 0.3. Induction heads: 1.0 and 1.1. No clear pattern yet: 0.0 and 0.1.");
  CHECK(roles_summary({scores(0, 0, 0.1, 0, 0, 0.1), scores(1, 0, 0, 0.1, 0, 0)}) ==
        "No clear pattern yet: 0.0 and 1.0.");
  CHECK(roles_summary({scores(0, 0, 0, 0, 0, 0.9), scores(1, 4, 0, 0, 0.5, 0), scores(1, 5, 0, 0, 0, 0.31)}) ==
        "Duplicate-token heads: 1.4. First-token heads: 0.0 and 1.5.");
}

TEST_CASE("the gradient tab names its norms and quotes the largest cells its colour bars end at") {
  Matrix dp(1, 3), ds(1, 3);
  dp << 3e-5, -4e-5, 1e-5;  // norm sqrt(9 + 16 + 1) e-5 = 5.10e-05, largest cell 4.00e-05
  ds << 0, 2e-9, 0;
  CHECK(gradient_sizes_text(0.9996, dp, ds) ==
        "Largest weight 1.000; the norms (square root of the sum of squares over the keys) |\u2202L/\u2202p| = "
        "5.10e-05 (largest cell 4.00e-05), |\u2202L/\u2202s| = 2.00e-09 (largest cell 2.00e-09).");
}

TEST_CASE("a paragraph the bottom edge of a scrolling box would cut starts below the edge") {
  CHECK(block_top_clear_of_edge(100, 50, 8, 200) == 100);   // fits
  CHECK(block_top_clear_of_edge(170, 50, 8, 200) == 200);   // cut: moved past the edge
  CHECK(block_top_clear_of_edge(200, 50, 8, 200) == 200);   // already below it
  CHECK(block_top_clear_of_edge(8, 250, 8, 200) == 8);      // at the box's top: nothing to gain by moving it
  CHECK(block_top_clear_of_edge(100, 250, 8, 200) == 200);  // taller than the box: its cut out of the first screen
  CHECK(sentence_ends("Loss 4.13 here. Then? No! End.") == std::vector<std::size_t>{15, 21, 25, 30});
  CHECK(sentence_ends("") == std::vector<std::size_t>{0});
}

TEST_CASE("the score chart names a layer whose heads end together once, and each other head by its number") {
  std::vector<HeadScores> heads;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h) heads.push_back(scores(l, h, 0, 0, 0, 0));
  // Step 1,100 of the induction run: layer 0 flat at 0, layer 1 spread from 0.55 to 0.85.
  CHECK(score_end_labels(heads, {0.01, 0.02, 0.0, 0.03, 0.55, 0.85, 0.76, 0.66}, 0.1) ==
        std::vector<std::string>{"layer 0", "", "", "", "1.0", "1.1", "1.2", "1.3"});
  // Step 600: every head near 0.
  CHECK(score_end_labels(heads, {0.01, 0.02, 0.0, 0.03, 0.05, 0.04, 0.02, 0.01}, 0.1) ==
        std::vector<std::string>{"all 8 heads", "", "", "", "", "", "", ""});
  // A layer from 0.7 to 0.78 is one group; one from 0.0 to 0.11 is not.
  CHECK(score_end_labels(heads, {0.0, 0.11, 0.05, 0.05, 0.7, 0.78, 0.75, 0.72}, 0.1) ==
        std::vector<std::string>{"0.0", "0.1", "0.2", "0.3", "layer 1", "", "", ""});
  CHECK(score_end_labels({heads[0]}, {0.5}, 0.1) == std::vector<std::string>{"0.0"});
}

TEST_CASE("a run from a given model (the Model view's) starts from its weights and is not the run of its shape") {
  TrainSettings s = small_settings();
  Model given = resolve_model(task_model(s.run.task, s.shape, 77));  // other weights than the shape's seed draws
  given.name = "given";
  s.start = std::make_shared<const Model>(given);
  Trainer trainer;
  REQUIRE_FALSE(trainer.reset(s, limits::kDefaultMemoryBudget).has_value());
  const TrainProgress& p = trainer.progress();
  REQUIRE(p.snapshots.size() == 1);
  CHECK(*p.snapshots[0]->model->embedding == *given.embedding);
  CHECK(*p.snapshots[0]->model->layers[1].weights.W_Q == *given.layers[1].weights.W_Q);
  CHECK(trained_model_description(s) ==
        "model \"given\": 2 layers \u00B7 d_model 8 \u00B7 Pre-LN \u00B7 attention only \u00B7 learned positions "
        "\u00B7 " +
            std::to_string(parameter_count(given)) + " parameters");
  TrainSettings shape_only = s;
  shape_only.start.reset();
  CHECK_FALSE(same_run(s, shape_only));
  CHECK(same_run(s, trainer.settings()));
  // A variant's own settings count only for that variant.
  TrainSettings a = shape_only, b = shape_only;
  a.shape.kv_heads = 2;  // b's default: half the 2 heads
  CHECK(same_run(a, b));
  a.shape.variant = b.shape.variant = Variant::Gqa;
  CHECK_FALSE(same_run(a, b));
  b.shape.kv_heads = 2;
  CHECK(same_run(a, b));
}

TEST_CASE("the score chart's circuit kind is the previous-token score in layer 0 and the induction score after it") {
  const HeadScores layer0 = scores(0, 2, 0.62, 0.05, 0.01, 0.02), layer1 = scores(1, 0, 0.03, 0.55, 0.04, 0.01);
  CHECK(head_score(layer0, kCircuitScore) == 0.62);
  CHECK(head_score(layer1, kCircuitScore) == 0.55);
  CHECK(head_score(layer0, 0) == 0.05);  // induction for every head
  CHECK(head_score(layer1, 1) == 0.03);  // previous-token for every head
  CHECK(head_score(layer0, 2) == 0.01);
  CHECK(head_score(layer0, 3) == 0.02);
  CHECK(score_chart_title(0) == "Induction score per head");
  CHECK(score_chart_title(2) == "Duplicate-token score per head");
  CHECK(score_chart_title(kCircuitScore) == "Previous-token (layer 0) and induction scores");
  CHECK(std::string(kScoreKinds[kCircuitScore]) == "circuit");
}

TEST_CASE("the gradient tab's backward pass: computed on a worker once per snapshot, the newest asked wins") {
  Trainer trainer;
  REQUIRE_FALSE(trainer.reset(small_settings(), limits::kDefaultMemoryBudget).has_value());
  trainer.run_until(100);
  const std::vector<std::shared_ptr<const TrainSnapshot>>& snaps = trainer.progress().snapshots;
  REQUIRE(snaps.size() == 4);
  SnapshotGradients gradients;
  CHECK(gradients.of(snaps[1]) == nullptr);  // asked: computed meanwhile
  CHECK(gradients.of(snaps[3]) == nullptr);  // the newest asked wins
  gradients.wait();                          // until the newest asked is computed and taken
  const std::vector<HeadGradients>* g = gradients.of(snaps[3]);
  REQUIRE(g != nullptr);
  // The backward pass core runs on that snapshot's model and probe sequence.
  const std::vector<HeadGradients> expected =
      attention_gradients(*snaps[3]->model, snaps[3]->probe, next_token_targets(snaps[3]->probe));
  REQUIRE(g->size() == 2);
  REQUIRE((*g)[1].d_scores.size() == 2);
  CHECK((*g)[1].d_scores[1].rows() == 12);
  CHECK((*g)[1].d_scores[1] == expected[1].d_scores[1]);
  CHECK((*g)[0].d_weights[0] == expected[0].d_weights[0]);
  CHECK(gradients.of(snaps[3]) == g);  // once per snapshot: the same result, not asked again
}
