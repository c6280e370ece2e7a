// The edits the inputs panel makes (core/edits): tokens, context tokens, heads, variants, the scale slider.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>
#include "core/edits.h"
#include "core/init.h"
#include "core/memory_budget.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("set_token_count grows with seeded rows and fresh labels, and shrinks from the end") {
  Scenario s = cat_sat();
  s.input.tokens[1] = "t4";  // a label in use is skipped
  set_token_count(s, 6);
  CHECK(s.input.tokens == std::vector<std::string>{"the", "t4", "sat", "t3", "t5", "t6"});
  REQUIRE(s.input.embeddings.rows() == 6);
  for (int i = 3; i < 6; ++i)
    check_matrix(s.input.embeddings.row(i), seeded_embedding_row(s.seed, SeedStream::Embeddings, i, 4), 0.0, "row");
  check_matrix(s.input.embeddings.topRows(3), cat_sat().input.embeddings, 0.0, "the first rows are kept");
  set_token_count(s, 2);
  CHECK(s.input.tokens == std::vector<std::string>{"the", "t4"});
  check_matrix(s.input.embeddings, cat_sat().input.embeddings.topRows(2), 0.0, "shrunk");
  set_token_count(s, 0);  // ignored: at least one token
  CHECK(s.n_q() == 2);
}

TEST_CASE("set_token_count grows a custom mask as add_token does: the new tokens see the past and themselves") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 1, 0}, {0, 1, 0}, {1, 0, 1}});
  Scenario one_by_one = s;
  set_token_count(s, 5);
  add_token(one_by_one, "x");
  add_token(one_by_one, "y");
  check_matrix(s.attention.custom_mask, one_by_one.attention.custom_mask, 0.0, "custom mask");
  check_matrix(s.attention.custom_mask,
               mat({{1, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {1, 0, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}}), 0.0, "mask");
  set_token_count(s, 2);
  check_matrix(s.attention.custom_mask, mat({{1, 1}, {0, 1}}), 0.0, "shrunk mask");
}

TEST_CASE("adding a token: a seeded embedding row, the custom mask grows causally -- removing shrinks it back") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 0, 1}, {1, 1, 0}, {0, 1, 1}});
  add_token(s, fresh_token_label(s));
  CHECK(s.input.tokens.back() == "token 4");
  REQUIRE(s.input.embeddings.rows() == 4);
  check_matrix(s.input.embeddings.row(3), seeded_embedding_row(7, SeedStream::Embeddings, 3, 4), 0.0, "seeded row");
  check_matrix(s.attention.custom_mask, mat({{1, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {1, 1, 1, 1}}), 0.0,
               "grown mask");
  CHECK_NOTHROW(compute_trace(s));
  remove_token(s, 1);
  CHECK(s.input.tokens == std::vector<std::string>{"the", "sat", "token 4"});
  check_matrix(s.attention.custom_mask, mat({{1, 1, 0}, {0, 1, 0}, {1, 1, 1}}), 0.0, "shrunk mask");
  check_matrix(s.input.embeddings.row(1), mat({{1, 1, 1, 1}}), 0.0, "sat moved up");
  Scenario one = cat_sat();
  remove_token(one, 0);
  remove_token(one, 0);
  remove_token(one, 0);  // the last one stays
  CHECK(one.input.tokens.size() == 1);
}

TEST_CASE("changing heads redraws only the weights that no longer fit, and says so") {
  Scenario s = cat_sat();
  const std::vector<std::string> notes = set_head_shape(s, 1, 2);
  REQUIRE(notes.size() == 3);
  CHECK(notes[0] ==
        "weights.W_Q is 4 x 3 but now needs 4 x 2 (d_model by heads x head_dim = 1 x 2); drawn from seed 7 instead");
  CHECK_FALSE(s.weights.W_Q.has_value());
  CHECK(compute_trace(s).heads[0].q.cols() == 2);
  reseed_weights(s);
  CHECK(s.seed == 8);
}

TEST_CASE("switching variants keeps tokens and derives the weights: first head of each group, exact round trips") {
  const Scenario mha = load_scenario_file(asset("the_lazy_dog.json"));  // 4 heads of 2, seeded weights
  const Trace mha_trace = compute_trace(mha);

  Scenario gqa = mha;
  const std::string note = switch_variant(gqa, mha_trace.weights, Variant::Gqa, 2, 0, 0);
  CHECK(note == "GQA with 2 KV heads: each KV head takes W_K and W_V of the first query head of its group");
  const Trace gqa_trace = compute_trace(gqa);
  check_matrix(gqa_trace.kv_heads[0].k, mha_trace.heads[0].k, 1e-15, "KV head 0 = query head 0's keys");
  check_matrix(gqa_trace.kv_heads[1].v, mha_trace.heads[2].v, 1e-15, "KV head 1 = query head 2's values");
  check_matrix(*gqa_trace.weights.W_Q, *mha_trace.weights.W_Q, 0.0, "W_Q kept");
  check_matrix(*gqa_trace.weights.W_O, *mha_trace.weights.W_O, 0.0, "W_O kept");
  CHECK(gqa.input.tokens == mha.input.tokens);

  // Back to MHA: each query head gets its group's keys, so the attention is exactly the GQA one.
  Scenario back = gqa;
  CHECK(switch_variant(back, gqa_trace.weights, Variant::Mha, 4, 0, 0) ==
        "MHA with 4 KV heads: every query head keeps its own keys and values");
  check_matrix(compute_trace(back).output, gqa_trace.output, 1e-14, "MHA built from GQA computes the same");

  Scenario mqa = mha;
  switch_variant(mqa, mha_trace.weights, Variant::Mqa, 1, 0, 0);
  CHECK(compute_trace(mqa).kv_heads.size() == 1);

  // To MLA the latent weights come from the seed; from MLA, W_K = W_DKV W_UK is the same attention.
  Scenario mla = mha;
  CHECK(switch_variant(mla, mha_trace.weights, Variant::Mla, 0, 3, 0) ==
        "MLA: W_DKV, W_UK and W_UV drawn from seed 42; W_Q and W_O kept where they still apply");
  const Trace mla_trace = compute_trace(mla);
  CHECK(mla_trace.latent.cols() == 3);
  Scenario unrolled = mla;
  CHECK(
      switch_variant(unrolled, mla_trace.weights, Variant::Mha, 4, 0, 0) ==
      "MHA with 4 KV heads: W_K = W_DKV\u00B7W_UK and W_V = W_DKV\u00B7W_UV, then every query head keeps its own keys "
      "and values");
  check_matrix(compute_trace(unrolled).output, mla_trace.output, 1e-13, "MHA from MLA computes the same");
}

TEST_CASE("changing heads keeps a GQA grouping valid") {
  Scenario s = load_scenario_file(asset("the_lazy_dog_gqa.json"));  // 4 heads, 2 KV heads
  set_head_shape(s, 6, 2);
  CHECK(s.attention.kv_heads == 2);
  set_head_shape(s, 5, 2);
  CHECK(s.attention.kv_heads == 1);  // 2 does not divide 5
  CHECK_NOTHROW(compute_trace(s));
  CHECK(divisors(12) == std::vector<int>{1, 2, 3, 4, 6, 12});
}

TEST_CASE("context tokens of a cross-attention scenario: added with a seeded row, removed with their mask column") {
  Scenario s = load_scenario_file(asset("cross_attention.json"));
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 0, 1}, {0, 1, 1}});
  add_context_token(s, fresh_context_label(s));
  CHECK(s.context->tokens.back() == "key 4");
  check_matrix(s.context->embeddings.row(3), seeded_embedding_row(3, SeedStream::ContextEmbeddings, 3, 4), 0.0,
               "seeded row");
  check_matrix(s.attention.custom_mask, mat({{1, 0, 1, 1}, {0, 1, 1, 1}}), 0.0, "every query may see the new key");
  CHECK_NOTHROW(compute_trace(s));
  remove_context_token(s, 0);
  CHECK(s.context->tokens == std::vector<std::string>{"cat", "sat", "key 4"});
  check_matrix(s.attention.custom_mask, mat({{0, 1, 1}, {1, 1, 1}}), 0.0, "column 0 gone");
  CHECK(s.input.tokens.size() == 2);  // the queries are untouched
  CHECK(compute_trace(s).heads[0].scores().cols() == 3);
}

TEST_CASE("switching positions draws the weights they need from the seed and leaves out those they no longer use") {
  Scenario s = cat_sat();  // 3 tokens, d_model 4, head_dim 3
  std::vector<std::string> notes = set_positions(s, Positions::Learned, 2);
  CHECK(s.attention.max_positions == 3);
  CHECK(notes == std::vector<std::string>{"W_P (3 x 4) drawn from seed 7"});
  CHECK(s.attention.rope_dim == 0);  // only mla has a decoupled part
  s.weights.W_P = Matrix::Constant(3, 4, 0.5);
  notes = set_positions(s, Positions::Sinusoidal, 2);
  CHECK(notes == std::vector<std::string>{"weights.W_P is not used without learned positions; left out"});
  CHECK_FALSE(s.weights.W_P);
  CHECK(s.attention.max_positions == 0);
  s.weights = {};
  s.attention.variant = Variant::Mla;
  s.attention.latent_dim = 2;
  notes = set_positions(s, Positions::Rope, 4);
  CHECK(s.attention.rope_dim == 4);
  CHECK(notes == std::vector<std::string>{"W_QR (4 x 4) drawn from seed 7", "W_KR (4 x 4) drawn from seed 7"});
}

TEST_CASE("sparse attention on and off: the indexer's weights come and go with it") {
  Scenario s = cat_sat();
  std::vector<std::string> notes = set_sparse(s, SparseConfig{2, 2, 3});
  CHECK(notes == std::vector<std::string>{"W_QI (4 x 6) drawn from seed 7", "W_KI (4 x 3) drawn from seed 7",
                                          "W_wI (4 x 2) drawn from seed 7"});
  s.weights.W_KI = Matrix::Zero(4, 3);
  notes = set_sparse(s, std::nullopt);
  CHECK(notes == std::vector<std::string>{"weights.W_KI is not used without sparse attention; left out"});
  CHECK_FALSE(s.attention.sparse);
}

TEST_CASE("learned positions grow with the tokens: a given W_P keeps its rows and gains seeded ones") {
  Scenario s = cat_sat();
  set_positions(s, Positions::Learned, 0);
  s.weights.W_P = Matrix::Constant(3, 4, 0.5);
  add_token(s, "on");
  CHECK(s.attention.max_positions == 4);
  REQUIRE(s.weights.W_P->rows() == 4);
  check_matrix(s.weights.W_P->topRows(3), Matrix::Constant(3, 4, 0.5), 0.0, "the given rows");
  check_matrix(s.weights.W_P->row(3), seeded_matrix(7, SeedStream::W_P, 4, 4).row(3), 0.0, "a seeded row 3");
  set_token_count(s, 6);
  CHECK(s.attention.max_positions == 6);
  CHECK(s.weights.W_P->rows() == 6);
  CHECK_NOTHROW(compute_trace(s));
  set_token_count(s, 2);
  CHECK(s.attention.max_positions == 6);  // fewer tokens leave positions unused, not invalid
}

TEST_CASE("a shift of every position: learned positions grow to cover it, no positions means no shift") {
  Scenario s = cat_sat();  // 3 tokens
  set_positions(s, Positions::Learned, 0);
  s.weights.W_P = Matrix::Constant(3, 4, 0.5);
  std::vector<std::string> notes = set_position_offset(s, 2);
  CHECK(notes == std::vector<std::string>{"W_P grows from 3 to 5 rows, the new ones drawn from seed 7"});
  CHECK(s.attention.position_offset == 2);
  REQUIRE(s.weights.W_P->rows() == 5);
  check_matrix(s.weights.W_P->row(4), seeded_matrix(7, SeedStream::W_P, 5, 4).row(4), 0.0, "a seeded row 4");
  CHECK_NOTHROW(compute_trace(s));
  CHECK(set_position_offset(s, 1).empty());  // a smaller shift leaves the rows as they are
  CHECK(s.attention.max_positions == 5);
  set_positions(s, Positions::Rope, 0);
  CHECK(s.attention.position_offset == 1);  // rope keeps the shift
  set_positions(s, Positions::None, 0);
  CHECK(s.attention.position_offset == 0);  // as a saved file would have it
}

TEST_CASE("the tokens slider stops at the attention cells a trace may hold, and where the caller's bytes stop") {
  Scenario s = load_scenario_file(asset("scale.json"));
  const auto always = [](std::int64_t, std::int64_t) { return true; };
  CHECK(max_token_count(s, 4096, always) == 4096);  // 8 heads x 4096 x 4096 = 2^27 cells, the most a trace may hold
  CHECK(max_token_count(s, 100, always) == 100);
  std::vector<std::int64_t> keys_asked;
  const auto million = [&](std::int64_t n, std::int64_t keys) {
    return keys_asked.push_back(keys), n * keys <= 1000000;
  };
  CHECK(max_token_count(s, 4096, million) == 1000);
  CHECK(std::find(keys_asked.begin(), keys_asked.end(), 1001) != keys_asked.end());  // self-attention: keys grow too
  CHECK(max_token_count(s, 4096, [](std::int64_t, std::int64_t) { return false; }) == 1);  // never fewer than one
  s.attention.heads = 16;  // 16 heads of 32: 16 x 2896^2 = 134,189,056 cells, 16 x 2897^2 = 134,281,744
  s.attention.head_dim = 32;
  s.weights = {};
  CHECK(max_token_count(s, 4096, always) == 2896);
  Scenario at = s;
  set_token_count(at, 2896);
  CHECK_NOTHROW(validate(at));
  set_token_count(at, 2897);
  CHECK_THROWS_AS(validate(at), InputError);
  // Cross-attention: the keys are the context's, whatever the queries.
  const Scenario cross = load_scenario_file(asset("cross_attention.json"));
  keys_asked.clear();
  max_token_count(cross, 64, [&](std::int64_t, std::int64_t keys) { return keys_asked.push_back(keys), true; });
  CHECK(std::all_of(keys_asked.begin(), keys_asked.end(), [&](std::int64_t k) { return k == cross.n_kv(); }));
}

TEST_CASE("validate after an edit: a weight shared with the document before is not read again, a new one is") {
  const Scenario before = cat_sat();
  Scenario bad_shared = before;
  Matrix w_q = *before.weights.W_Q;
  w_q(1, 2) = std::numeric_limits<double>::quiet_NaN();
  bad_shared.weights.W_Q = w_q;  // a new matrix: checked whatever the document before
  const auto message = [](const Scenario& s, const Scenario* checked) {
    try {
      validate(s, checked);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(bad_shared, &before) == "weights.W_Q[1][2]: not a finite number");
  CHECK(message(bad_shared, nullptr) == "weights.W_Q[1][2]: not a finite number");
  // The same matrix as a document that passed: its values are taken as checked (here, against the contract, to see
  // that they are not read again); its shape still is.
  CHECK(message(bad_shared, &bad_shared) == "");
  Scenario reshaped = before;  // W_Q shared, but no longer of the shape the heads need
  reshaped.attention.head_dim = 2;
  CHECK(message(reshaped, &before) == "weights.W_Q: expected 2 columns (heads x head_dim = 1 x 2) but found 3");
  Scenario edited = before;
  edited.input.embeddings(0, 0) = std::numeric_limits<double>::infinity();  // embeddings are always read
  CHECK(message(edited, &before) == "embeddings[0][0]: not a finite number");
}

TEST_CASE("switching variants carries the biases: the group's first KV head's b_K and b_V, none for mla") {
  Scenario mha = load_scenario_file(asset("the_lazy_dog.json"));  // 4 heads of 2
  mha.attention.qkv_bias = true;
  mha.attention.output_bias = mha.attention.output_projection = true;
  mha.weights.b_Q = mat({{1, 2, 3, 4, 5, 6, 7, 8}});
  mha.weights.b_K = mat({{-1, -2, -3, -4, -5, -6, -7, -8}});
  mha.weights.b_V = mat({{10, 20, 30, 40, 50, 60, 70, 80}});
  mha.weights.b_O = Matrix::Constant(1, mha.d_model(), 0.5);
  const Trace mha_trace = compute_trace(mha);
  Scenario gqa = mha;
  switch_variant(gqa, mha_trace.weights, Variant::Gqa, 2, 0, 0);
  check_matrix(*gqa.weights.b_K, mat({{-1, -2, -5, -6}}), 0.0, "KV heads 0 and 1 take query heads 0 and 2's b_K");
  check_matrix(*gqa.weights.b_V, mat({{10, 20, 50, 60}}), 0.0, "and their b_V");
  check_matrix(*gqa.weights.b_Q, *mha.weights.b_Q, 0.0, "b_Q kept");
  const Trace gqa_trace = compute_trace(gqa);
  check_matrix(gqa_trace.kv_heads[1].k, mha_trace.heads[2].k, 1e-15, "KV head 1 = query head 2's biased keys");
  Scenario mla = mha;
  switch_variant(mla, mha_trace.weights, Variant::Mla, 0, 3, 0);
  CHECK_FALSE(mla.attention.qkv_bias);
  CHECK_FALSE(mla.weights.b_K.has_value());
  check_matrix(*mla.weights.b_O, *mha.weights.b_O, 0.0, "b_O kept");
  CHECK(compute_trace(mla).output.rows() == mha.n_q());
}

TEST_CASE("positions other than rope leave rope's pairing and scaling behind") {
  Scenario s = cat_sat();
  set_positions(s, Positions::Rope, 2);
  s.attention.rope_pairing = RopePairing::RotateHalf;
  s.attention.rope_scaling = RopeScaling{};
  set_positions(s, Positions::Sinusoidal, 2);
  CHECK(s.attention.rope_pairing == RopePairing::Interleaved);
  CHECK_FALSE(s.attention.rope_scaling.has_value());
  CHECK_NOTHROW(compute_trace(s));
}
