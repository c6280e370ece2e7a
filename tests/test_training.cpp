// Training runs on tasks (core/training.h): the model a task starts from, the learning-rate schedule, the head
// scores, and steps that give the same bits at any thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/training.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

Task induction(int seq_len = 16) { return Task{TaskKind::Induction, 16, seq_len, {}}; }

TaskModelShape small_shape() {
  TaskModelShape s;
  s.layers = 2;
  s.heads = 2;
  s.d_model = 8;
  return s;
}

}  // namespace

TEST_CASE("the learning rate: linear warm-up, then cosine down to the floor") {
  const LrSchedule s{4, 14, 0.1};
  CHECK(scheduled_lr(1.0, s, 1) == 0.25);
  CHECK(scheduled_lr(1.0, s, 4) == 1.0);
  CHECK(scheduled_lr(1.0, s, 9) == doctest::Approx(0.1 + 0.9 * 0.5).epsilon(1e-15));  // halfway: cos = 0
  CHECK(scheduled_lr(1.0, s, 6) == doctest::Approx(0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi / 5))));
  CHECK(scheduled_lr(1.0, s, 14) == 0.1);
  CHECK(scheduled_lr(1.0, s, 20) == 0.1);
  CHECK(scheduled_lr(0.5, LrSchedule{}, 7) == 0.5);  // no schedule: constant
  CHECK(scheduled_lr(0.5, LrSchedule{2, 0, 0.0}, 1) == 0.25);
  CHECK(scheduled_lr(0.5, LrSchedule{2, 0, 0.0}, 100) == 0.5);
}

TEST_CASE("a task's model: its vocabulary and sequence length, causal mha layers with W_O, the shape asked for") {
  const Model m = task_model(induction(), small_shape(), 9);
  CHECK(m.vocab == task_vocab(induction()));
  CHECK(m.max_positions == 16);
  CHECK(m.d_model == 8);
  CHECK(m.seed == 9);
  REQUIRE(m.layers.size() == 2);
  CHECK(m.layers[1].attention.heads == 2);
  CHECK(m.layers[1].attention.head_dim == 4);
  CHECK(m.layers[1].attention.mask == MaskKind::Causal);
  CHECK(m.layers[1].attention.output_projection);
  CHECK(m.description ==
        "A model for the induction task: 2 layers of 2 heads, d_model 8, learned positions, norm pre, "
        "attention only.");
  TaskModelShape odd = small_shape();
  odd.d_model = 10;
  odd.heads = 4;
  CHECK_THROWS_WITH_AS(task_model(induction(), odd, 1), "d_model: must be a multiple of heads (4) but found 10",
                       InputError);
  odd = small_shape();
  odd.variant = Variant::Gqa;
  odd.kv_heads = 3;
  CHECK_THROWS_WITH_AS(task_model(induction(), odd, 1), "kv_heads: must divide heads (2) but found 3", InputError);
}

TEST_CASE("a task's model of any variant and positions: gqa's KV heads and mla's latent default from the shape") {
  TaskModelShape s = small_shape();  // 2 heads of 4, d_model 8
  s.heads = 4;
  s.variant = Variant::Gqa;
  Model m = task_model(induction(), s, 1);
  CHECK(m.layers[0].attention.variant == Variant::Gqa);
  CHECK(m.layers[0].attention.kv_heads == 2);
  CHECK(m.layers[0].attention.head_dim == 2);
  CHECK(shape_summary(s) ==
        "2 layers of 4 heads (gqa, 2 KV heads), d_model 8, learned positions, norm pre, "
        "attention only");
  s.variant = Variant::Mla;
  s.positions = Positions::Rope;
  m = task_model(induction(), s, 1);
  CHECK(m.layers[1].attention.latent_dim == 4);
  CHECK(m.layers[1].attention.rope_dim == 2);  // at least one pair
  CHECK(m.layers[1].attention.positions == Positions::Rope);
  CHECK(shape_summary(s) == "2 layers of 4 heads (mla, latent 4), d_model 8, rope positions, norm pre, attention only");
  s.heads = 1;
  s.d_model = 16;
  s.latent_dim = 5;
  m = task_model(induction(), s, 1);
  CHECK(m.layers[0].attention.latent_dim == 5);
  CHECK(m.layers[0].attention.rope_dim == 8);  // half of a head of 16
  s.variant = Variant::Mqa;
  s.positions = Positions::Sinusoidal;
  m = task_model(induction(), s, 1);
  CHECK(kv_head_count(m.layers[0].attention) == 1);
  CHECK(m.positions == Positions::Sinusoidal);
  const TrainingRun run{induction(), 4, 1, {}, {}};
  TrainState t = start_training(resolve_model(m));
  CHECK(training_step(t, run).diverged.empty());
}

TEST_CASE("a model file trains on a task only with the task's vocabulary and room for its sequences") {
  Model m = task_model(induction(), small_shape(), 1);
  CHECK_NOTHROW(check_task_model(m, induction()));
  CHECK_THROWS_WITH_AS(check_task_model(m, Task{TaskKind::Induction, 17, 16, {}}),
                       "vocab: the induction task's vocabulary has 17 tokens but found 16", InputError);
  m.vocab[3] = "B";
  CHECK_THROWS_WITH_AS(check_task_model(m, induction()),
                       "vocab[3]: the induction task's vocabulary has \"b\" here but found \"B\"", InputError);
  CHECK_THROWS_WITH_AS(check_task_model(task_model(induction(), small_shape(), 1), induction(20)),
                       "max_positions: the task's sequences have 20 tokens but the model takes at most 16", InputError);
}

TEST_CASE("head scores of heads that attend evenly: each score is the mean of 1 / (i + 1) over its positions") {
  Model m = resolve_model(task_model(induction(), small_shape(), 3));
  for (ModelLayer& l : m.layers) l.weights.W_Q = Matrix(Matrix::Zero(8, 8));  // every score 0: row i is 1 / (i + 1)
  const ProbeBatch probe = probe_batch(induction(), 4);
  double every = 0, repeated = 0;
  int n_every = 0, n_repeated = 0;
  for (const Repeat& r : probe.repeats) {
    for (int i = 1; i < 16; ++i, ++n_every) every += 1.0 / (i + 1);
    for (int k = 0; k < r.length; ++k, ++n_repeated) repeated += 1.0 / (r.second + k + 1);
  }
  const std::vector<HeadScores> scores = head_scores(m, probe);
  REQUIRE(scores.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(scores[i].layer == static_cast<int>(i / 2));
    CHECK(scores[i].head == static_cast<int>(i % 2));
    CHECK(scores[i].previous_token == doctest::Approx(every / n_every).epsilon(1e-14));
    CHECK(scores[i].first_token == doctest::Approx(every / n_every).epsilon(1e-14));
    CHECK(scores[i].induction == doctest::Approx(repeated / n_repeated).epsilon(1e-14));
    CHECK(scores[i].duplicate_token == doctest::Approx(repeated / n_repeated).epsilon(1e-14));
  }
}

TEST_CASE("training steps give the same losses and weights, bit for bit, on one thread or two") {
  TrainingRun run;
  run.task = induction();
  run.batch = 6;
  run.seed = 4;
  run.adamw.lr = 3e-3;
  run.schedule = {2, 5, 1e-4};
  const auto train = [&](int threads) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
    TrainState t = start_training(resolve_model(task_model(run.task, small_shape(), 2)));
    std::vector<double> losses;
    for (int s = 0; s < 5; ++s) losses.push_back(training_step(t, run).loss);
    return std::make_pair(losses, t.model);
  };
  const auto [losses_one, model_one] = train(1);
  const auto [losses_two, model_two] = train(2);
#ifdef _OPENMP
  omp_set_num_threads(omp_get_num_procs());
#endif
  CHECK(losses_one == losses_two);
  CHECK(*model_one.layers[1].weights.W_K == *model_two.layers[1].weights.W_K);
  CHECK(*model_one.unembedding == *model_two.unembedding);
  CHECK(losses_one[4] < losses_one[0]);
}

TEST_CASE("evaluation: loss and accuracy over the evaluation batch's targets, as run_model's probabilities give them") {
  const Model m = resolve_model(task_model(induction(), small_shape(), 5));
  double loss = 0;
  int counted = 0, right = 0;
  for (const Sequence& s : task_eval_batch(induction(), kEvalSequences)) {
    std::vector<std::string> tokens;
    for (int id : s.ids) tokens.push_back(m.vocab[static_cast<std::size_t>(id)]);
    const Matrix p = run_model(m, tokens).probabilities;
    for (Eigen::Index i = 0; i < p.rows(); ++i) {
      const int t = s.targets[static_cast<std::size_t>(i)];
      if (t == kNoTarget) continue;
      Eigen::Index best = 0;
      p.row(i).maxCoeff(&best);
      loss -= std::log(p(i, t));
      right += best == t;
      ++counted;
    }
  }
  const Evaluation e = evaluate(m, induction());
  CHECK(e.loss == doctest::Approx(loss / counted).epsilon(1e-12));
  CHECK(e.accuracy == static_cast<double>(right) / counted);
  CHECK(e.heads.size() == 4);
}

TEST_CASE("softmax's Jacobian: diag(p) - p pᵀ, and d scores is each row of d weights through it") {
  check_matrix(softmax_jacobian(mat({{0.5, 0.25, 0.25}})),
               mat({{0.25, -0.125, -0.125}, {-0.125, 0.1875, -0.0625}, {-0.125, -0.0625, 0.1875}}), 1e-16, "J");
  CHECK(softmax_jacobian(mat({{1.0, 0.0}})).isZero());  // a saturated row passes nothing back
  const Model m = resolve_model(task_model(induction(), small_shape(), 6));
  const std::vector<int> ids = probe_batch(induction(), 1).ids[0];
  const std::vector<HeadGradients> g = attention_gradients(m, ids, next_token_targets(ids));
  const std::vector<std::vector<Matrix>> p = attention_patterns(m, ids);
  REQUIRE(g.size() == 2);
  REQUIRE(g[1].d_scores.size() == 2);
  for (Eigen::Index i = 0; i < 16; ++i) {
    const Matrix row = p[1][0].row(i).leftCols(i + 1);
    const Matrix expected = g[1].d_weights[0].row(i).leftCols(i + 1) * softmax_jacobian(row);
    check_matrix(g[1].d_scores[0].row(i).leftCols(i + 1), expected, 1e-15, "d scores row " + std::to_string(i));
    CHECK(g[1].d_scores[0].row(i).rightCols(15 - i).isZero());  // keys the causal mask hides
  }
}

TEST_CASE("the evaluation reads at most 64 sequences of 32 tokens' worth, at least one sequence") {
  CHECK(eval_sequences(16) == 64);
  CHECK(eval_sequences(32) == 64);
  CHECK(eval_sequences(33) == 62);
  CHECK(eval_sequences(2048) == 1);
  CHECK(eval_sequences(4096) == 1);
  CHECK(probe_sequences(32) == 16);
  CHECK(probe_sequences(64) == 8);
  CHECK(probe_sequences(4096) == 1);
  const test::CliRun run =
      test::run_cli_capture({"train", "--task", "previous_token", "--seq-len", "1024", "--batch", "1", "--steps", "1",
                             "--layers", "1", "--heads", "1", "--d-model", "8", "--json"});
  REQUIRE(run.code == 0);
  const nlohmann::json out = nlohmann::json::parse(run.out);
  CHECK(out["eval"]["inputs"]["batch"].size() == 2);
  CHECK(out["eval"]["inputs"]["probe"].size() == 1);
}
