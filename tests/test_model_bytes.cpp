// What a model costs in memory from its shapes (core/model_bytes.h), against byte counts worked out here by hand, and
// a forward pass that keeps only the layers asked for (ModelRunOptions).
#include "core/io/model_json.h"
#include "core/model_bytes.h"
#include "core/text_format.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// One layer of 2 heads of 2 over d_model 4, 3 tokens in a vocabulary of 3: every count below is small enough to
// follow on paper.
Model bytes_model() {
  return parse_model(R"({"name": "small", "vocab": ["a", "b", "c"], "d_model": 4, "max_positions": 8,
    "positions": "none", "norm": "none",
    "layers": [{"attention": {"variant": "mha", "heads": 2, "head_dim": 2, "mask": "causal"}}]})");
}

}  // namespace

// The predictions against the peak resident set of `attention-lab train --task induction --steps 1` (Release, 2
// threads, /usr/bin/time -v), layers L, heads H, d_model D, sequences of N, batches of B:
//   L 2 H 4 D 64 N 512 B 2:   predicted 74,566,656, measured 77,004,800   (1.03)
//   L 4 H 8 D 64 N 1024 B 2:  predicted 706,409,472, measured 695,033,856 (0.98)
//   L 2 H 4 D 128 N 2048 B 2: predicted 1,013,209,088, measured 910,544,896 (0.90)
//   L 8 H 4 D 64 N 1024 B 1:  predicted 407,519,232, measured 750,739,456 (1.84), and 404,152,320 (0.99) with
//                             MALLOC_MMAP_THRESHOLD_=1048576: main.cpp keeps freed matrices up to 32 MiB in the heap
//                             (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD 1 GiB) for speed, and the evaluation after the step
//                             then finds the training's freed memory still held.
// And `run` of the 64-layer model of test_model_budget.cpp on 4,096 tokens: about 853 MB predicted, 1,010,585,600
// measured (1.18, the heap again).
TEST_CASE("a forward pass's and a training step's bytes are known from the shapes: a small model counted by hand") {
  const Model m = bytes_model();
  const std::int64_t D = 8;  // bytes of a double
  // Weights: embedding 3x4, unembedding 4x3, W_Q W_K W_V (4, 2*2) and W_O (2*2, 4): 12 + 12 + 48 + 16 = 88 numbers.
  const std::int64_t weights = 88 * D;
  // The layer's attention trace on 3 tokens: x and x_kv (3x4 each) 192; its four 4x4 weights 512; Q, K, V (3x4 each)
  // 288; each KV head's k and v (3x2, 2 heads) 192; the shared mask (3x3) 72; each head's q, k, v, output (3x2) 192,
  // scores and weights (3x3) 144, W_O^(h) (2x4) 64, row max, sum and entropy (3) 72 and 3 row statuses (4 bytes) 12:
  // 484 a head, 968 for 2; concat and output (3x4) 192. In all 2,416.
  const std::int64_t trace = 192 + 512 + 288 + 192 + 72 + 2 * (192 + 144 + 64 + 72 + 12) + 192;
  REQUIRE(trace == 2416);
  // Without the heads' scores and weights (2 heads x 2 x 3x3), with the two copies of 3 token labels (32 bytes each).
  const std::int64_t light = trace - 2 * 2 * 9 * D + 2 * 3 * 32;
  const std::int64_t stream = 3 * 4 * D;  // one (N, d_model) matrix
  // The weights, the embedded stream, the layer's 5 stream matrices, the layer's trace (kept: with every head's
  // weights, 2 x 3x3), 3 copies of the stream while the layer runs, final (3x4) and logits, probabilities and their
  // softmax (3x3 each).
  const std::int64_t output = stream + 3 * 9 * D;
  CHECK(predicted_model_run_bytes(m, 3, {}) == weights + stream + 5 * stream + light + 2 * 9 * D + 3 * stream + output);
  CHECK(predicted_model_run_bytes(m, 3, {}) == 4344);
  // Keeping no layer: the one being computed holds its trace without the heads' weights.
  CHECK(predicted_model_run_bytes(m, 3, {.kept = std::vector<int>{}}) == 4200);
  // An overview of at most 2 a side: 2 heads and the mask, 2x2 each.
  CHECK(predicted_model_run_bytes(m, 3, {.overview = 2}) == 4344 + 3 * 4 * D);

  // One sequence's activations: the stream (3x4) 96; the layer's cache: its input 96, 2 heads' q (3x2) 96, 2 KV heads'
  // k and v 192, the mask and 2 heads' weights (3x3 each) 216, concat (3x4) 96: 696; final (3x4) 96, logits and
  // probabilities (3x3 each) 144; the backward pass's scratch: d logits (3x3) 72, three 3x3 of one head 216, d q of 2
  // heads and d k, d v of 2 KV heads twice over (2 x 6 x 3x2) 576, four (3x4) 384.
  const std::int64_t activations = 96 + 696 + 96 + 144 + 72 + 216 + 576 + 384;
  CHECK(predicted_activation_bytes(m, 3) == activations);
  CHECK(activations == 2280);
  // Training on batches of 2: the model and its copy, AdamW's two moments and their copy, the summed gradient
  // (7 x the weights), and for each sequence its activations and its gradient.
  CHECK(predicted_training_bytes(m, 2, 3) == 7 * weights + 2 * (activations + weights));
  CHECK(predicted_training_bytes(m, 2, 3) == 10896);
  // run --json's gradients: the weights and the gradient, one sequence's activations, every head's d weights and
  // d scores (2 heads x 2 x 3x3).
  CHECK(predicted_attention_gradient_bytes(m, 3) == 2 * weights + activations + 2 * 2 * 9 * D);

  CHECK(model_run_what(m, 4096) == "running 1 layer on 4,096 tokens");
  CHECK(training_what(m, 2, 4096) == "training 1 layer on batches of 2 sequences of 4,096 tokens");
}

TEST_CASE("a forward pass keeps the heads of the layers asked for, and the others keep only their stream") {
  const Model m = resolve_model(load_model_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json"));
  const std::vector<std::string> tokens = split_words("<s> a b c a b");
  const ModelTrace all = run_model(m, tokens);
  const ModelTrace one = run_model(m, tokens, ModelRunOptions{.kept = std::vector<int>{1}, .overview = 4});
  REQUIRE(one.layers.size() == 2);
  const LayerTrace &dropped = one.layers[0], &kept = one.layers[1];
  CHECK_FALSE(dropped.kept);
  CHECK(dropped.attention.heads.empty());
  CHECK(dropped.ffn_hidden.size() == 0);
  // What the stream needs, the same bits as a run keeping everything.
  CHECK(dropped.attention.x == all.layers[0].attention.x);
  CHECK(dropped.attention.output == all.layers[0].attention.output);
  CHECK(dropped.residual_out == all.layers[0].residual_out);
  CHECK(kept.kept);
  REQUIRE(kept.attention.heads.size() == 2);
  for (std::size_t h = 0; h < 2; ++h)
    CHECK(kept.attention.heads[h].weights() == all.layers[1].attention.heads[h].weights());
  CHECK(one.probabilities == all.probabilities);
  // The layer not kept still has its overview: 6 tokens in blocks of rows and keys {0,1,2}... at most 4 a side:
  // blocks [0,1), [1,3), [3,4), [4,6) (i * 6 / 4).
  REQUIRE(dropped.weights_overview.size() == 2);
  const Matrix& w = all.layers[0].attention.heads[1].weights();
  const Matrix& o = dropped.weights_overview[1];
  REQUIRE(o.rows() == 4);
  REQUIRE(o.cols() == 4);
  CHECK(o(0, 0) == doctest::Approx(w(0, 0)));
  CHECK(o(1, 1) == doctest::Approx((w(1, 1) + w(1, 2) + w(2, 1) + w(2, 2)) / 4));
  CHECK(o(3, 0) == doctest::Approx((w(4, 0) + w(5, 0)) / 2));
  // The causal mask's share in the block of queries 1-2 and keys 1-2: 3 of 4 cells.
  CHECK(dropped.mask_overview(1, 1) == 0.75);
  CHECK(dropped.mask_overview(0, 3) == 0.0);
  // With the tokens as few as the overview's side, it is the weights themselves.
  const ModelTrace whole = run_model(m, tokens, ModelRunOptions{.kept = std::vector<int>{}, .overview = 64});
  CHECK(whole.layers[1].weights_overview[0] == all.layers[1].attention.heads[0].weights());
}
