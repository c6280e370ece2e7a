// The model's loss gradient (core/model_gradient.h): its forward pass is run_model's, and every weight's gradient
// agrees with central differences of the loss.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "app/cli/matrix_text.h"
#include "core/adamw.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/model_gradient.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// A model of two layers; `norm` none, pre or post, `positions` none or learned, `ffn` a feed-forward kind.
Model gradient_model(const std::string& norm, const std::string& positions, const std::string& mask = "causal",
                     const std::string& ffn = "none") {
  Model m = resolve_model(parse_model(R"({"name": "grad", "vocab": ["a", "b", "c", "d", "e", "f"], "d_model": 8,
    "max_positions": 8, "positions": ")" +
                                      positions + R"(", "norm": ")" + norm + R"(",
    "ffn": {"kind": ")" + ffn + (ffn == "none" ? R"("})" : R"(", "d_ff": 6})") +
                                      R"(,
    "layers": [{"attention": {"heads": 2, "head_dim": 4, "mask": ")" +
                                      mask + R"("}},
               {"attention": {"heads": 2, "head_dim": 4, "mask": ")" +
                                      mask + R"("}}], "seed": 7})"));
  // Gains and biases away from 1 and 0, so that their gradients are tested where they matter.
  std::uint64_t seed = 11;
  const auto jitter = [&seed](SharedMatrix& w, double scale) {
    if (w) w = *w + scale * seeded_matrix(seed++, SeedStream::Embeddings, 1, static_cast<int>(w->cols()));
  };
  jitter(m.final_gain, 0.3);
  jitter(m.final_bias, 0.2);
  for (ModelLayer& l : m.layers) {
    jitter(l.own.ln1_gain, 0.3);
    jitter(l.own.ln1_bias, 0.2);
    jitter(l.own.ln2_gain, 0.3);
    jitter(l.own.ln2_bias, 0.2);
    jitter(l.own.b_1, 0.5);
    jitter(l.own.b_2, 0.2);
  }
  return m;
}

// A model of two layers whose attention is `attention` (the inside of a layer's attention block), with gains and
// biases away from 1 and 0.
Model attention_model(const std::string& attention, const std::string& positions, const std::string& norm = "pre") {
  const std::string layer = R"({"attention": {)" + attention + "}}";
  Model m = resolve_model(parse_model(R"({"name": "grad", "vocab": ["a", "b", "c", "d", "e", "f"], "d_model": 8,
    "max_positions": 8, "positions": ")" +
                                      positions + R"(", "norm": ")" + norm +
                                      R"(", "ffn": {"kind": "gelu", "d_ff": 6}, "layers": [)" + layer + ", " + layer +
                                      R"(], "seed": 7})"));
  std::uint64_t seed = 11;
  for (ModelLayer& l : m.layers)
    if (l.own.ln1_gain) l.own.ln1_gain = *l.own.ln1_gain + 0.3 * seeded_matrix(seed++, SeedStream::Embeddings, 1, 8);
  return m;
}

// Every kind of attention a model can have, each a layer configuration and the positions it is trained with.
const std::pair<const char*, const char*> kAttentionKinds[] = {
    {R"("variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2, "mask": "causal")", "learned"},
    {R"("variant": "mqa", "heads": 2, "head_dim": 4, "mask": "sliding_window", "window": 3)", "sinusoidal"},
    {R"("variant": "mha", "heads": 2, "head_dim": 4, "mask": "causal")", "rope"},
    {R"("variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2, "mask": "none", "scale": false)", "rope"},
    {R"("variant": "mla", "heads": 2, "head_dim": 4, "latent_dim": 3, "mask": "causal")", "learned"},
    {R"("variant": "mla", "heads": 2, "head_dim": 3, "latent_dim": 3, "query_latent_dim": 5, "mask": "causal")",
     "none"},
    {R"("variant": "mla", "heads": 2, "head_dim": 3, "latent_dim": 3, "rope_dim": 2, "mask": "causal")", "rope"},
    {R"("variant": "mla", "heads": 2, "head_dim": 3, "latent_dim": 4, "query_latent_dim": 5, "rope_dim": 4,
        "mask": "sliding_window", "window": 2)",
     "rope"},
    {R"("variant": "mha", "heads": 2, "head_dim": 4, "mask": "causal", "kernel": "linear")", "learned"},
    {R"("variant": "mqa", "heads": 2, "head_dim": 4, "mask": "causal",
        "sparse": {"top_k": 3, "indexer_heads": 2, "indexer_dim": 3})",
     "rope"},
};

const std::vector<int> kIds = {0, 3, 1, 3, 1, 5, 2};

// Central differences on every cell of every trained weight against the gradient.
void check_against_differences(Model m) {
  const std::vector<int> targets = next_token_targets(kIds);
  LossGradient r = loss_gradient(m, kIds, targets);
  const std::vector<TrainedWeight> slots = trained_weights(m), grads = trained_weights(r.gradient);
  REQUIRE(slots.size() == grads.size());
  std::int64_t numbers = 0;
  for (const TrainedWeight& w : slots) numbers += (*w.slot)->size();
  std::int64_t indexer = 0;  // a sparse layer's indexer keeps its weights
  for (const ModelLayer& l : m.layers)
    for (const SharedMatrix* w : {&l.weights.W_QI, &l.weights.W_KI, &l.weights.W_wI})
      if (*w) indexer += (*w)->size();
  CHECK(numbers == parameter_count(m) - indexer);  // every other weight the model has is trained
  constexpr double h = 1e-6;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const Matrix w = **slots[s].slot;
    REQUIRE_MESSAGE(grads[s].slot->has_value(), slots[s].field);
    const Matrix& g = **grads[s].slot;
    REQUIRE(g.rows() == w.rows());
    REQUIRE(g.cols() == w.cols());
    double worst = 0.0;
    for (Eigen::Index i = 0; i < w.rows(); ++i)
      for (Eigen::Index j = 0; j < w.cols(); ++j) {
        *slots[s].slot = with_cell(w, i, j, w(i, j) + h);
        const double up = model_loss(m, kIds, targets);
        *slots[s].slot = with_cell(w, i, j, w(i, j) - h);
        const double down = model_loss(m, kIds, targets);
        worst = std::max(worst, std::abs((up - down) / (2 * h) - g(i, j)));
      }
    *slots[s].slot = w;
    CHECK_MESSAGE(worst < 1e-8, slots[s].field << ": max |numeric - analytic| = " << worst);
  }
}

std::vector<std::string> token_names(const Model& m, const std::vector<int>& ids) {
  std::vector<std::string> tokens;
  for (int id : ids) tokens.push_back(m.vocab[static_cast<std::size_t>(id)]);
  return tokens;
}

// The mean next-token cross-entropy from run_model's probabilities: what the gradient's forward pass must give.
double next_token_loss(const ModelTrace& t, const std::vector<int>& ids) {
  double loss = 0.0;
  for (std::size_t i = 0; i + 1 < ids.size(); ++i)
    loss -= std::log(t.probabilities(static_cast<Eigen::Index>(i), ids[i + 1]));
  return loss / static_cast<double>(ids.size() - 1);
}

}  // namespace

TEST_CASE("the gradient's forward pass is run_model's: the loss from its probabilities, to 1e-13") {
  for (const auto& config : {std::pair{"none", "none"}, {"pre", "gelu"}, {"post", "swiglu"}, {"pre", "relu"}}) {
    const std::string norm = config.first, ffn = config.second;  // clang's CAPTURE cannot take structured bindings
    CAPTURE(norm);
    CAPTURE(ffn);
    const Model m = gradient_model(norm, "learned", "causal", ffn);
    const ModelTrace t = run_model(m, token_names(m, kIds));
    const double expected = next_token_loss(t, kIds);
    CHECK(std::abs(model_loss(m, kIds, next_token_targets(kIds)) - expected) < 1e-13);
    CHECK(std::abs(loss_gradient(m, kIds, next_token_targets(kIds)).loss - expected) < 1e-13);
  }
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (no norm, no positions)") {
  check_against_differences(gradient_model("none", "none"));
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (Pre-LN, learned positions)") {
  check_against_differences(gradient_model("pre", "learned"));
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (Post-LN, a GELU FFN)") {
  check_against_differences(gradient_model("post", "learned", "causal", "gelu"));
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (Pre-LN, a SwiGLU FFN)") {
  check_against_differences(gradient_model("pre", "none", "causal", "swiglu"));
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (no norm, a ReLU FFN)") {
  check_against_differences(gradient_model("none", "learned", "causal", "relu"));
}

TEST_CASE("every weight's gradient agrees with central differences of the loss (no mask, unscaled)") {
  Model m = gradient_model("pre", "learned", "none");
  m.layers[1].attention.scale = false;
  check_against_differences(m);
}

TEST_CASE("the loss leaves out positions without a target, and bad targets and untrainable models are refused") {
  const Model m = gradient_model("none", "learned");
  std::vector<int> only_last(kIds.size(), kNoTarget);
  only_last[2] = 4;
  const Matrix p = run_model(m, {"a", "d", "b"}).probabilities;
  CHECK(std::abs(model_loss(m, kIds, only_last) + std::log(p(2, 4))) < 1e-13);  // causal: later tokens do not matter
  CHECK(next_token_targets({4, 2, 9}) == std::vector<int>{2, 9, kNoTarget});
  CHECK_THROWS_WITH_AS(model_loss(m, kIds, {1, 2}), "targets: expected one per token (7) but found 2", InputError);
  CHECK_THROWS_WITH_AS(model_loss(m, kIds, std::vector<int>(kIds.size(), kNoTarget)),
                       "targets: expected at least one position with a target but found none", InputError);
  CHECK_THROWS_WITH_AS(model_loss(m, {0, 6}, {1, kNoTarget}), "tokens[1]: must be <= 5 (found 6)", InputError);
  Model custom = m;
  custom.layers[1].attention.mask = MaskKind::Custom;
  CHECK_THROWS_WITH_AS(check_trainable(custom),
                       "layers[1].attention.mask: a custom mask: training does not support it (a model's masks are "
                       "none, causal or sliding_window)",
                       InputError);
}

TEST_CASE("the gradient's forward pass is run_model's for every kind of attention, positions and mask, to 1e-13") {
  for (const auto& [attention, positions] : kAttentionKinds) {
    const std::string config = attention, where = positions;
    CAPTURE(config);
    CAPTURE(where);
    const Model m = attention_model(attention, positions);
    const ModelTrace t = run_model(m, token_names(m, kIds));
    const double expected = next_token_loss(t, kIds);
    CHECK(std::abs(model_loss(m, kIds, next_token_targets(kIds)) - expected) < 1e-13);
    const std::vector<std::vector<Matrix>> patterns = attention_patterns(m, kIds);
    // A linear kernel divides by Z, a sum that may nearly cancel: its weights carry rounding a compiler's other
    // order of operations (clang's, the sanitizer build's) moves by a few 1e-13.
    const double tolerance = contains(config, "linear") ? 1e-11 : 1e-13;
    for (std::size_t l = 0; l < t.layers.size(); ++l)
      for (std::size_t h = 0; h < t.layers[l].attention.heads.size(); ++h)
        CHECK((patterns[l][h] - t.layers[l].attention.heads[h].weights()).cwiseAbs().maxCoeff() < tolerance);
  }
}

TEST_CASE("every weight's gradient agrees with central differences for every kind of attention and positions") {
  for (const auto& [attention, positions] : kAttentionKinds) {
    const std::string config = attention, where = positions;
    CAPTURE(config);
    CAPTURE(where);
    check_against_differences(attention_model(attention, positions));
  }
}

TEST_CASE("Post-LN with RoPE and MLA's decoupled RoPE: the gradient agrees with central differences") {
  check_against_differences(attention_model(kAttentionKinds[6].first, "rope", "post"));
  check_against_differences(attention_model(kAttentionKinds[2].first, "rope", "none"));
}

TEST_CASE("a sparse layer trains around its indexer: the indexer's weights have no gradient and keep their values") {
  const Model m = attention_model(kAttentionKinds[9].first, "rope");
  TrainState t = start_training(m);
  const StepResult r = train_step(t, {{kIds, next_token_targets(kIds)}}, AdamWConfig{});
  REQUIRE(r.diverged.empty());
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    CHECK(*t.model.layers[l].weights.W_QI == *m.layers[l].weights.W_QI);
    CHECK(*t.model.layers[l].weights.W_KI == *m.layers[l].weights.W_KI);
    CHECK(*t.model.layers[l].weights.W_wI == *m.layers[l].weights.W_wI);
    CHECK_FALSE(*t.model.layers[l].weights.W_Q == *m.layers[l].weights.W_Q);
  }
  Model copy = m;
  for (const TrainedWeight& w : trained_weights(copy)) CHECK_FALSE(w.field.ends_with("I"));
}

TEST_CASE("a gradient has every trained weight of its model, in the same order and shapes") {
  for (const auto& [norm, positions] : {std::pair{"none", "none"}, {"pre", "learned"}}) {
    Model m = gradient_model(norm, positions);
    LossGradient r = loss_gradient(m, kIds, next_token_targets(kIds));
    const std::vector<TrainedWeight> w = trained_weights(m), g = trained_weights(r.gradient);
    REQUIRE(w.size() == g.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
      CHECK(w[k].field == g[k].field);
      CHECK((*w[k].slot)->rows() == (*g[k].slot)->rows());
      CHECK((*w[k].slot)->cols() == (*g[k].slot)->cols());
    }
    CHECK(w.front().field == "embedding");
    CHECK(w.back().field == "unembedding");
  }
}

TEST_CASE("a batch's loss is the mean over all its targets, and its gradient agrees with central differences") {
  const Model m = gradient_model("pre", "learned");
  const std::vector<Sequence> batch = {{{0, 3, 1}, next_token_targets({0, 3, 1})},
                                       {{2, 2, 5, 4, 1, 0}, next_token_targets({2, 2, 5, 4, 1, 0})}};
  const double first = model_loss(m, batch[0].ids, batch[0].targets),
               second = model_loss(m, batch[1].ids, batch[1].targets);
  LossGradient r = batch_loss_gradient(m, batch);
  CHECK(std::abs(r.loss - (2 * first + 5 * second) / 7) < 1e-14);  // 2 and 5 targets
  Model probe = m;
  const auto loss_at = [&](double delta) {
    probe.layers[1].weights.W_K = with_cell(*m.layers[1].weights.W_K, 3, 2, (*m.layers[1].weights.W_K)(3, 2) + delta);
    return batch_loss_gradient(probe, batch).loss;
  };
  const double numeric = (loss_at(1e-6) - loss_at(-1e-6)) / 2e-6;
  CHECK(std::abs(numeric - (*r.gradient.layers[1].weights.W_K)(3, 2)) < 1e-8);
  CHECK_THROWS_WITH_AS(batch_loss_gradient(m, {}), "batch: expected at least one sequence but found none", InputError);
}

TEST_CASE("a step that diverges is not taken: training goes back to the last weights whose loss was a number") {
  const std::vector<Sequence> batch = {{kIds, next_token_targets(kIds)}};
  TrainState t = start_training(gradient_model("pre", "learned"));
  AdamWConfig c;
  c.lr = 10.0;              // far too high: within a few steps the loss overflows
  std::vector<Model> seen;  // the weights each step started from
  StepResult r;
  for (int k = 0; k < 20 && r.diverged.empty(); ++k) {
    seen.push_back(t.model);
    r = train_step(t, batch, c);
  }
  REQUIRE_FALSE(r.diverged.empty());
  const int steps = static_cast<int>(seen.size());  // the last one diverged
  REQUIRE(steps >= 2);
  CHECK(r.diverged == "step " + std::to_string(steps) +
                          ": the loss is +inf; training stopped with the weights after step " +
                          std::to_string(steps - 2) + ", the last whose loss was a number (try a lower learning rate)");
  CHECK(model_to_text(t.model) == model_to_text(seen[static_cast<std::size_t>(steps - 2)]));
  CHECK(std::isfinite(model_loss(t.model, kIds, next_token_targets(kIds))));
  CHECK(t.adam.step == steps - 2);
  const StepResult again = train_step(t, batch, c);  // it can go on from there (with a lower rate, say)
  CHECK(std::isfinite(again.loss));
}

TEST_CASE("train on the command line: the losses, the saved weights, and a divergence stopping with exit 2") {
  const std::filesystem::path dir = fresh_dir("train-cli");
  save_model_file(gradient_model("none", "learned"), dir / "model.json");
  std::ofstream(dir / "batches.json") << R"({"batches": [[[0, 3, 1, 3, 1, 5, 2]]]})";
  const Run ok = run({"train", "--model", (dir / "model.json").string(), "--batches", (dir / "batches.json").string(),
                      "--steps", "2", "--save", (dir / "out.json").string()});
  CHECK(ok.code == 0);
  CHECK(ok.err.empty());
  const double first = model_loss(gradient_model("none", "learned"), kIds, next_token_targets(kIds));
  CHECK(ok.out.starts_with("step 1: loss " + format_number(first, 6) + "\nstep 2: loss "));
  CHECK_FALSE(model_to_text(load_model_file(dir / "out.json")) == model_to_text(gradient_model("none", "learned")));

  const Run diverged = run({"train", "--model", (dir / "model.json").string(), "--batches",
                            (dir / "batches.json").string(), "--steps", "50", "--lr", "10"});
  CHECK(diverged.code == 2);
  CHECK(contains(diverged.err, "the loss is +inf; training stopped with the weights after step "));
  std::ofstream(dir / "bad.json") << R"({"batches": [[[0, 3, 9]]]})";
  const Run bad = run(
      {"train", "--model", (dir / "model.json").string(), "--batches", (dir / "bad.json").string(), "--steps", "1"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "attention-lab: " + (dir / "bad.json").string() + ": batches[0][0][2]: must be <= 5 (found 9)\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("train's shape options: a variant's own options are refused beside another variant") {
  const Run kv = run({"train", "--task", "copy", "--steps", "1", "--kv-heads", "2"});
  CHECK(kv.code == 2);
  CHECK(kv.err == "attention-lab: train: --kv-heads is for --variant gqa, but the variant is mha\n");
  const Run latent = run({"train", "--task", "copy", "--steps", "1", "--variant", "gqa", "--latent-dim", "4"});
  CHECK(latent.code == 2);
  CHECK(latent.err == "attention-lab: train: --latent-dim is for --variant mla, but the variant is gqa\n");
  const Run indivisible = run({"train", "--task", "copy", "--steps", "1", "--variant", "gqa", "--kv-heads", "3"});
  CHECK(indivisible.code == 2);
  CHECK(indivisible.err == "attention-lab: train: kv_heads: must divide heads (4) but found 3\n");
  const Run bogus = run({"train", "--task", "copy", "--steps", "1", "--variant", "bogus"});
  CHECK(bogus.err == "attention-lab: train: --variant expects mha | gqa | mqa | mla but found 'bogus'\n");
}

TEST_CASE("train's options that cannot work, or that the run would not use, are refused before the first step") {
  const Run eps = run({"train", "--task", "copy", "--steps", "3", "--batch", "2", "--eps", "0"});
  CHECK(eps.code == 2);
  CHECK(eps.err == "attention-lab: --eps: must be > 0 (found 0)\n");
  CHECK(eps.out.empty());
  const Run min_lr = run({"train", "--task", "copy", "--steps", "20", "--batch", "2", "--cosine", "--min-lr", "1"});
  CHECK(min_lr.code == 2);
  CHECK(min_lr.err ==
        "attention-lab: train: --min-lr: must be at most --lr, 0.001 (found 1): --cosine decays the "
        "rate from --lr down to --min-lr\n");
  const Run no_cosine = run({"train", "--task", "copy", "--steps", "2", "--min-lr", "1e-4"});
  CHECK(no_cosine.code == 2);
  CHECK(no_cosine.err ==
        "attention-lab: train: --min-lr is for --cosine (the rate it decays to), but --cosine is not given\n");
  const Run text = run({"train", "--task", "induction", "--steps", "1", "--text", "nonexist"});
  CHECK(text.code == 2);
  CHECK(text.err == "attention-lab: train: --text is for --task text, but the task is induction\n");
  const Run vocab = run({"train", "--task", "text", "--steps", "1", "--vocab", "10"});
  CHECK(vocab.code == 2);
  CHECK(vocab.err ==
        "attention-lab: train: --vocab is for the symbol tasks (induction, previous_token, copy, "
        "reverse, sort), but the task is text: its vocabulary is its text's characters\n");
  const Run batch = run({"train", "--model", std::string(ATTN_ASSETS_DIR) + "/models/tiny.json", "--batches", "b.json",
                         "--steps", "1", "--batch", "8"});
  CHECK(batch.code == 2);
  CHECK(batch.err ==
        "attention-lab: train: --batch is for --task, but this run trains on --batches (the model and "
        "the batches file give the vocabulary and the sequences)\n");
  // A warm-up longer than the run is allowed: the rate stays below --lr, as --help says.
  const Run warmup = run({"train", "--task", "copy", "--steps", "3", "--batch", "2", "--warmup", "100"});
  CHECK(warmup.code == 0);
  CHECK(contains(run({"train", "--help"}).out, "a warm-up longer than S ends the run"));
}

TEST_CASE("biases on q, k, v and o, with rotate_half RoPE and llama3 scaling: the gradient agrees with differences") {
  Model m = attention_model(
      R"("variant": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 2, "mask": "causal", "qkv_bias": true,
         "output_bias": true)",
      "rope");
  m.rope_pairing = RopePairing::RotateHalf;
  m.rope_scaling = RopeScaling{8, 1, 4, 8};
  set_model_positions(m, Positions::Rope);
  std::uint64_t seed = 21;  // biases away from 0, so that they change the numbers
  for (ModelLayer& l : m.layers)
    for (SharedMatrix* b : {&l.weights.b_Q, &l.weights.b_K, &l.weights.b_V, &l.weights.b_O})
      *b = **b + 0.4 * seeded_matrix(seed++, SeedStream::Embeddings, 1, static_cast<int>((*b)->cols()));
  const ModelTrace t = run_model(m, token_names(m, kIds));
  CHECK(std::abs(model_loss(m, kIds, next_token_targets(kIds)) - next_token_loss(t, kIds)) < 1e-13);
  check_against_differences(m);
}
