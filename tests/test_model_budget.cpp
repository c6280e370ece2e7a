// The memory budget of models and training: run, train, the Model view and the Train view refuse what would hold
// more than the budget before computing anything, with both numbers, and a deep model's forward pass keeps one
// layer's heads (the expected byte counts are worked out here from the shapes).
#include <fstream>

#include "app/cli/units.h"
#include "core/io/model_json.h"
#include "core/text_format.h"
#include "helpers.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/model_document.h"
#include "ui/logic/trainer.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t D = 8;           // bytes of a double
constexpr std::int64_t N = 4096;        // tokens
constexpr std::int64_t Q2 = N * N * D;  // one (N, N) matrix: 128 MiB

// 64 layers of 8 heads of 8 over d_model 64, max_positions 4096, in 3.6 KB: a file far inside every limit.
std::string deep_model_text() {
  std::string layers;
  for (int l = 0; l < 64; ++l)
    layers += std::string(l > 0 ? "," : "") + R"({"attention":{"heads":8,"head_dim":8,"mask":"causal"}})";
  return R"({"name":"deep","vocab":["a","b"],"d_model":64,"max_positions":4096,"positions":"none","norm":"none",)"
         R"("layers":[)" +
         layers + "]}";
}

fs::path deep_model_file() {
  const fs::path p = fresh_dir("deep-model") / "deep.json";
  std::ofstream(p) << deep_model_text();
  return p;
}

std::string tokens_text(std::int64_t n) {
  std::string t;
  for (std::int64_t i = 0; i < n; ++i) t += i % 2 ? " b" : (i > 0 ? " a" : "a");
  return t;
}

// The deep model's numbers on N tokens, from its shapes: d_model 64, 8 heads of 8 (8 KV heads), vocabulary 2.
constexpr std::int64_t S = N * 64 * D;                                       // one (N, d_model) matrix: 2 MiB
constexpr std::int64_t kWeights = (2 * 64 + 64 * 2 + 64 * 4 * 64 * 64) * D;  // embedding, unembedding, W_Q W_K W_V W_O
// A layer's attention trace without any head's scores or weights: x, x_kv; W_Q, W_K, W_V, W_O (64x64 each); Q, K, V;
// each KV head's k and v (N x 8, 2 x 8 of them: 2 S); the mask; per head q, k, v, output (N x 8 each), W_O^(h)
// (8 x 64), row max, sum and entropy, N row statuses of 4 bytes; concat and output; two copies of N labels.
constexpr std::int64_t kLight = 2 * S + 4 * 64 * 64 * D + 3 * S + 2 * S + Q2 +
                                8 * (4 * N * 8 * D + 8 * 64 * D + 3 * N * D + N * 4) + 2 * S + 2 * N * 32;
// The forward pass keeping one layer's heads (8 (N, N) weights): the weights, the embedded stream, 5 stream matrices
// a layer, that layer's trace, the trace of a layer being computed, 3 copies of the stream, final, logits,
// probabilities and their softmax (N x 2 each).
constexpr std::int64_t kForwardOneLayer =
    kWeights + S + 64 * 5 * S + (kLight + 8 * Q2) + kLight + 3 * S + S + 3 * N * 2 * D;
// One sequence's activations for the backward pass: the stream; per layer its input, 8 heads' q, 8 KV heads' k and
// v, the mask and 8 heads' weights, concat; final, logits and probabilities; the backward's scratch: d logits, three
// (N, N), d q, d k, d v twice over (2 x 24 x N x 8), four (N, d_model).
constexpr std::int64_t kActivations = S + 64 * (S + 8 * N * 8 * D + 8 * 2 * N * 8 * D + 9 * Q2 + S) + S +
                                      2 * N * 2 * D + N * 2 * D + 3 * Q2 + 48 * N * 8 * D + 4 * S;

// How every refusal of the command line at --memory-budget 3G goes on after what the work needs.
const std::string kPastThreeGiB = " but the memory budget is 3,221,225,472 bytes (3.00 GiB); use --memory-budget, ";

}  // namespace

TEST_CASE("run --json of a 3 KB model of 64 layers on 4,096 tokens is refused with what it needs and the budget") {
  const std::string text = deep_model_text();
  CHECK(text.size() < 4000);
  const fs::path file = deep_model_file();
  // The JSON makes one layer's heads at a time, but the loss's gradients keep every layer's activations and every
  // head's d weights and d scores: the weights and the gradient, the activations, 2 x 512 (N, N).
  // And the program itself.
  const std::int64_t needs = kForwardOneLayer + 2 * kWeights + kActivations + 2 * 512 * Q2 + limits::kProgramBytes;
  const Run r = run({"run", file.string(), "--json", "--tokens", tokens_text(N), "--memory-budget", "3G"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "attention-lab: " + file.string() + ": running 64 layers on 4,096 tokens needs " +
                     cli::bytes_text(static_cast<std::uint64_t>(needs)) + kPastThreeGiB +
                     "--layer L (one layer's heads) or fewer tokens\n");
  // One layer's heads alone still needs every layer's activations for the gradient: refused, with its own number.
  const Run one =
      run({"run", file.string(), "--json", "--layer", "5", "--tokens", tokens_text(N), "--memory-budget", "3G"});
  CHECK(one.code == 2);
  CHECK(one.err == "attention-lab: " + file.string() + ": running 64 layers on 4,096 tokens needs " +
                       cli::bytes_text(static_cast<std::uint64_t>(kForwardOneLayer + 2 * kWeights + kActivations +
                                                                  2 * 8 * Q2 + limits::kProgramBytes)) +
                       kPastThreeGiB + "fewer tokens or layers\n");
  CHECK(run({"run", file.string(), "--layer", "5", "--tokens", "a b"}).code == 2);  // --layer is for --json
  // With a head knocked out there are no gradients to keep: the forward pass alone is counted.
  const Run ablated = run({"run", file.string(), "--json", "--layer", "5", "--ablate", "0.0", "--tokens",
                           tokens_text(N), "--memory-budget", "1G"});
  CHECK(ablated.code == 2);
  CHECK(ablated.err == "attention-lab: " + file.string() + ": running 64 layers on 4,096 tokens needs " +
                           cli::bytes_text(static_cast<std::uint64_t>(kForwardOneLayer + limits::kProgramBytes)) +
                           " but the memory budget is 1,073,741,824 bytes (1.00 GiB); use --memory-budget, fewer "
                           "tokens or layers\n");
}

TEST_CASE("run --json --layer L prints that layer's heads alone, and every layer's stream") {
  const std::string tiny = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const Run all = run({"run", tiny, "--json", "--tokens", "<s> a b a"});
  const Run one = run({"run", tiny, "--json", "--layer", "1", "--tokens", "<s> a b a"});
  REQUIRE(all.code == 0);
  REQUIRE(one.code == 0);
  const nlohmann::json a = nlohmann::json::parse(all.out), o = nlohmann::json::parse(one.out);
  REQUIRE(o["layers"].size() == 2);
  CHECK_FALSE(o["layers"][0]["attention"].contains("heads"));
  CHECK(o["layers"][0]["attention"]["output"] == a["layers"][0]["attention"]["output"]);
  CHECK(o["layers"][1]["attention"]["heads"] == a["layers"][1]["attention"]["heads"]);
  CHECK(o["layers"][1]["residual_out"] == a["layers"][1]["residual_out"]);
  CHECK(o["probabilities"] == a["probabilities"]);
  CHECK(o["loss"] == a["loss"]);
  CHECK(a["layers"][0]["attention"]["heads"].size() == 2);
}

TEST_CASE("train of 64 layers at 4,096 tokens is refused before its first step, with what it needs and the budget") {
  // The induction task's model: vocabulary 64, learned positions (4,096 x 64), Pre-LN without an FFN: embedding,
  // W_P, per layer LN1's gain and bias and W_Q W_K W_V W_O, LN_final's gain and bias, unembedding.
  const std::int64_t weights = (64 * 64 + N * 64 + 64 * (2 * 64 + 4 * 64 * 64) + 2 * 64 + 64 * 64) * D;
  // One sequence's activations: the deep model's, with Pre-LN's caches (N x 64 and N) for each layer's LN1 and
  // LN_final, and a vocabulary of 64 (final, logits, probabilities and d logits N x 64).
  const std::int64_t norm = S + N * D;
  const std::int64_t activations = S + 64 * (S + 8 * N * 8 * D + 8 * 2 * N * 8 * D + 9 * Q2 + S + norm) + norm + S +
                                   2 * S + S + 3 * Q2 + 48 * N * 8 * D + 4 * S;
  const std::int64_t needs = 7 * weights + 2 * (activations + weights) + limits::kProgramBytes;
  const Run r = run({"train", "--task", "induction", "--seq-len", "4096", "--layers", "64", "--heads", "8", "--d-model",
                     "64", "--steps", "1", "--batch", "2", "--memory-budget", "3G"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());  // no step was taken
  CHECK_FALSE(contains(r.err, "step"));
  CHECK(r.err == "attention-lab: train: training 64 layers on batches of 2 sequences of 4,096 tokens needs " +
                     cli::bytes_text(static_cast<std::uint64_t>(needs)) + kPastThreeGiB +
                     "a smaller batch, shorter sequences or fewer layers\n");
  CHECK(needs == 157218448384);  // 146 GiB
}

TEST_CASE("the Model view refuses a model whose forward pass would pass its budget, with both numbers") {
  const Model deep = parse_model(deep_model_text());
  ui::ModelDocument doc(ui::BasicHistory<ui::ModelInput>::kBytes, std::int64_t(1) << 30);
  const std::optional<std::string> refused = doc.open(ui::model_input(deep, tokens_text(N)), "deep.json");
  REQUIRE(refused.has_value());
  // The view keeps layer 0's heads whole and every layer's overview of at most 64 x 64 (8 heads and the mask); a
  // layer not kept makes its heads' weights one at a time for its overview.
  const std::int64_t needs = kForwardOneLayer + 64 * 9 * 64 * 64 * D + Q2;
  // With the program's 16 MiB and the undo history's share (an eighth of 1 GiB): both numbers, exact and in units,
  // and what to do, as the command line says them.
  CHECK(*refused ==
        "running 64 layers on 4,096 tokens needs 2,393,638,912 bytes (2.23 GiB) but the memory budget is "
        "1,073,741,824 bytes (1.00 GiB); use --memory-budget, fewer tokens");
  CHECK_FALSE(doc.loaded());
  // Within the budget of the window (3 GiB): one layer's heads instead of 64.
  CHECK(needs == 2242643968);  // 2.09 GiB
  CHECK_FALSE(
      ui::model_view_refusal(ui::model_input(deep, tokens_text(N)), 0, limits::kDefaultMemoryBudget).has_value());
}

TEST_CASE("the Train view refuses a run past its budget before it starts, with both numbers") {
  ui::TrainSettings s;
  s.shape.layers = 64;
  s.shape.heads = 8;
  s.shape.d_model = 64;
  s.run.task.seq_len = 1024;
  s.run.batch = 2;
  ui::Trainer trainer;
  const std::optional<std::string> refused = trainer.reset(s, limits::kDefaultMemoryBudget);
  REQUIRE(refused.has_value());
  CHECK(contains(*refused, "training 64 layers on batches of 2 sequences of 1,024 tokens needs "));
  CHECK(contains(*refused,
                 " but the memory budget is 3,221,225,472 bytes (3.00 GiB); use --memory-budget, a smaller "
                 "batch, shorter sequences, fewer steps or layers"));
  CHECK_FALSE(trainer.ready());
  ui::TrainSettings small;  // the default run: far inside
  CHECK(ui::predicted_train_view_bytes(small, ui::trained_model(small)) < (std::int64_t(100) << 20));
}
