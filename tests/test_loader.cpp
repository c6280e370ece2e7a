// Scenario files: the shipped ones load, and every malformed one gets its own message naming the field,
// with exit code 2 from the command line.
#include <limits>
#include <sstream>

#include "app/cli/cli.h"
#include "core/decode.h"
#include "core/init.h"
#include "core/io/scenario_write.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

struct BadFile {
  const char* file;
  const char* message;  // what follows "attention-lab: <path>: "
};

const BadFile kBadFiles[] = {
    {"root_array.json", "scenario: expected an object but found array"},
    {"unknown_key.json",
     "atention: unknown key (expected one of: name, description, tokens, embeddings, context, attention, weights, "
     "seed, "
     "weight_scale)"},
    {"unknown_attention_key.json",
     "attention.heds: unknown key (expected one of: variant, heads, kv_heads, head_dim, latent_dim, query_latent_dim, "
     "mask, window, custom_mask, scale, kernel, output_projection, positions, rope_base, max_positions, rope_dim, "
     "position_offset, rope_pairing, rope_scaling, qkv_bias, output_bias, sparse)"},
    {"w_q_rows.json", "weights.W_Q: expected 4 rows (d_model) but found 3"},
    {"positions_unknown.json",
     "attention.positions: expected one of none | sinusoidal | learned | rope but found string \"alibi\""},
    {"rope_odd_head_dim.json",
     "attention.head_dim: rope turns pairs of dimensions, so it needs an even head_dim (found 3)"},
    {"rope_dim_odd.json", "attention.rope_dim: rope turns pairs of dimensions, so it must be even (found 3)"},
    {"position_offset_without_positions.json",
     "attention.position_offset: only used by positions other than \"none\" (this is positions \"none\")"},
    {"position_offset_negative.json", "attention.position_offset: must be >= 0 (found -1)"},
    {"position_offset_learned_too_far.json",
     "attention.position_offset: must be <= 4095 with learned positions (W_P has at most 4096 rows) but found 4096"},
    {"position_offset_past_max_positions.json",
     "attention.max_positions: must be >= 5 (one learned position per token of the longer side, after the shift "
     "position_offset) but found 4"},
    {"rope_dim_without_mla.json",
     "attention.rope_dim: only used by variant mla with positions \"rope\" (the decoupled RoPE key) (this is variant "
     "mha "
     "with positions \"rope\")"},
    {"top_k_zero.json", "attention.sparse.top_k: must be >= 1 (found 0)"},
    {"sparse_unknown_key.json",
     "attention.sparse.topk: unknown key (expected one of: top_k, indexer_heads, indexer_dim)"},
    {"w_p_rows.json", "weights.W_P: expected 3 rows (max_positions) but found 2"},
    {"w_p_too_few.json",
     "attention.max_positions: must be >= 3 (one learned position per token of the longer side) but found 2"},
    {"w_qr_without_rope.json",
     "weights.W_QR: given, but only mla with positions \"rope\" uses it (the decoupled RoPE)"},
    {"max_positions_without_learned.json",
     "attention.max_positions: only used by positions \"learned\" (this is positions \"rope\")"},
    {"rope_base_zero.json", "attention.rope_base: expected a number in [1, 1e12] but found 0"},
    {"w_qi_without_sparse.json", "weights.W_QI: given, but attention.sparse is not set"},
    {"w_v_cols.json", "weights.W_V: expected 3 columns (heads x head_dim = 1 x 3) but found 2"},
    {"heads_zero.json", "attention.heads: must be >= 1 (found 0)"},
    {"heads_huge.json", "attention.heads: must be <= 256 (found 100000000000)"},
    {"ragged_rows.json", "embeddings[2]: expected 4 numbers (as in row 0) but found 3"},
    {"string_in_matrix.json", "embeddings[2][1]: expected a number but found string \"x\""},
    {"embedding_rows.json", "embeddings: expected 3 rows (one per token) but found 2"},
    {"bad_mask.json",
     "attention.mask: expected one of none | causal | sliding_window | custom but found string \"diagonal\""},
    {"custom_mask_value.json", "attention.custom_mask[1][2]: expected 0 or 1 but found 0.5"},
    {"custom_mask_shape.json", "attention.custom_mask: expected 3 rows (N_Q, one per query token) but found 2"},
    {"window_missing.json", "attention.window: missing (required)"},
    {"head_dim_fraction.json", "attention.head_dim: expected an integer but found number 2.5"},
    {"context_width.json", "context.embeddings: expected 4 columns (d_model, as in embeddings) but found 3"},
    {"value_too_large.json", "embeddings[0][0]: magnitude must be <= 1e12 (found 1e+13)"},
    {"missing_tokens.json", "tokens: missing (required)"},
    {"variant_unknown.json", "attention.variant: expected one of mha | gqa | mqa | mla but found string \"sparse\""},
    {"empty_token.json", "tokens[1]: a token label must not be empty"},
    {"w_o_without_projection.json", "weights.W_O: given, but attention.output_projection is false"},
    {"negative_seed.json", "seed: expected a non-negative integer but found number -3"},
    {"scale_string.json", "attention.scale: expected true or false but found string \"yes\""},
    {"duplicate_key.json", "attention.heads: key appears twice in one object"},
    {"number_overflow.json", "line 1, column 50: number too large (found 1e999)"},
    {"syntax_error.json",
     "line 4, column 1: not valid JSON: found '}' where a value (a number, a string in double quotes, true, false, "
     "null, a list [...] or an object {...}) was expected"},
    {"empty.json", "the file is empty (expected a JSON object)"},
    {"binary.json",
     "line 1, column 1: not valid JSON: found the end of the file where a value (a number, a string in double quotes, "
     "true, false, null, a list [...] or an object {...}) was expected"},
    {"does_not_exist.json", "no such file"},
};

}  // namespace

TEST_CASE("every malformed scenario file gets its own message and exit code 2") {
  for (const BadFile& bad : kBadFiles) {
    const std::string path = data(std::string("bad/") + bad.file);
    CAPTURE(path);
    std::ostringstream out, err;
    const int code = attn::cli::run_cli(std::vector<std::string>{"trace", path}, out, err);
    CHECK(code == 2);
    CHECK(err.str() == "attention-lab: " + path + ": " + bad.message + "\n");
    CHECK(out.str().empty());
  }
}

TEST_CASE("the loader reports the field of a value that is not finite") {
  Scenario s = cat_sat();
  s.input.embeddings(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(validate(s), "embeddings[2][1]: not a finite number", InputError);
  s = cat_sat();
  s.weights.W_Q = with_cell(*s.weights.W_Q, 0, 2, std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH_AS(validate(s), "weights.W_Q[0][2]: not a finite number", InputError);
}

TEST_CASE("the shipped scenarios load with the values the file gives") {
  const Scenario s = cat_sat();
  CHECK(s.name == "the cat sat");
  CHECK(s.input.tokens == std::vector<std::string>{"the", "cat", "sat"});
  check_matrix(s.input.embeddings, mat({{1, 0, 1, 0}, {0, 2, 0, 2}, {1, 1, 1, 1}}), 0.0, "embeddings");
  CHECK(s.attention.heads == 1);
  CHECK(s.attention.head_dim == 3);
  CHECK(s.attention.mask == MaskKind::None);
  CHECK(s.attention.scale);
  CHECK(s.attention.kernel == Kernel::Softmax);
  CHECK_FALSE(s.attention.output_projection);
  REQUIRE(s.weights.W_Q.has_value());
  check_matrix(*s.weights.W_Q, mat({{1, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 1, 1}}), 0.0, "W_Q is 4 x 3, row-major");
  CHECK_FALSE(s.weights.W_O.has_value());
  CHECK(s.seed == 7);

  const Scenario cross = load_scenario_file(asset("cross_attention.json"));
  REQUIRE(cross.context.has_value());
  CHECK(cross.n_q() == 2);
  CHECK(cross.n_kv() == 3);
}

TEST_CASE("defaults: mask none, scale on, softmax, output_projection follows W_O, seed 1") {
  const Scenario s = parse_scenario(R"({"tokens": ["a", "b"], "embeddings": [[1, 2], [3, 4]],
                                        "attention": {"heads": 2, "head_dim": 1}})");
  CHECK(s.name == "untitled");
  CHECK(s.attention.mask == MaskKind::None);
  CHECK(s.attention.scale);
  CHECK(s.attention.kernel == Kernel::Softmax);
  CHECK_FALSE(s.attention.output_projection);
  CHECK(s.seed == 1);
  const Scenario with_wo = parse_scenario(R"({"tokens": ["a"], "embeddings": [[1, 2]],
      "attention": {"heads": 1, "head_dim": 1}, "weights": {"W_O": [[1, 0]]}})");
  CHECK(with_wo.attention.output_projection);
}

TEST_CASE(
    "weight_scale multiplies the weights drawn from the seed, not the given ones -- it must be above 0 and at most "
    "100") {
  const std::string head = R"({"tokens": ["a", "b"], "embeddings": [[1, 2, 3], [3, 4, 5]],
      "attention": {"heads": 1, "head_dim": 2}, "weights": {"W_K": [[1, 0], [0, 1], [1, 1]]}, "seed": 5)";
  const Scenario plain = parse_scenario(head + "}");
  const Scenario scaled = parse_scenario(head + R"(, "weight_scale": 0.25})");
  CHECK(plain.weight_scale == 1.0);
  CHECK(scaled.weight_scale == 0.25);
  const Weights a = resolve_weights(plain), b = resolve_weights(scaled);
  check_matrix(*b.W_Q, *a.W_Q * 0.25, 0.0, "W_Q (3 x 2), drawn, scaled");
  check_matrix(*b.W_V, *a.W_V * 0.25, 0.0, "W_V (3 x 2), drawn, scaled");
  check_matrix(*b.W_K, *a.W_K, 0.0, "W_K, given: as given");
  CHECK_FALSE(same_resolved_weights(plain, scaled));
  // Written only when it is not 1, and read back exactly.
  CHECK(scenario_to_text(plain).find("weight_scale") == std::string::npos);
  CHECK(scenario_to_text(scaled).find("\"weight_scale\": 0.25\n") != std::string::npos);
  CHECK(parse_scenario(scenario_to_text(scaled)).weight_scale == 0.25);
  CHECK_THROWS_WITH_AS(parse_scenario(head + R"(, "weight_scale": "small"})"),
                       "weight_scale: expected a number but found string \"small\"", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(head + R"(, "weight_scale": 0})"),
                       "weight_scale: expected a number in (0, 100] but found 0", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(head + R"(, "weight_scale": -0.5})"),
                       "weight_scale: expected a number in (0, 100] but found -0.5", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(head + R"(, "weight_scale": 101})"),
                       "weight_scale: expected a number in (0, 100] but found 101", InputError);
  Scenario nan = plain;
  nan.weight_scale = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(validate(nan), "weight_scale: expected a number in (0, 100] but found nan", InputError);
}

TEST_CASE("sliding window and custom masks are read from the file") {
  const Scenario w = parse_scenario(R"({"tokens": ["a", "b", "c"], "embeddings": [[1], [2], [3]],
      "attention": {"heads": 1, "head_dim": 1, "mask": "sliding_window", "window": 2}})");
  CHECK(w.attention.mask == MaskKind::SlidingWindow);
  CHECK(w.attention.window == 2);
  const Scenario c = parse_scenario(R"({"tokens": ["a", "b"], "embeddings": [[1], [2]],
      "attention": {"heads": 1, "head_dim": 1, "mask": "custom", "custom_mask": [[0, 1], [1, 0]]}})");
  check_matrix(c.attention.custom_mask, mat({{0, 1}, {1, 0}}), 0.0, "custom_mask");
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]],
      "attention": {"heads": 1, "head_dim": 1, "custom_mask": [[1]]}})"),
                       "attention.custom_mask: given, but attention.mask is not \"custom\"", InputError);
}

TEST_CASE("a repeated key is named by its full path, inside objects and arrays") {
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"context": {"tokens": ["x"], "tokens": ["y"]}})"),
                       "context.tokens: key appears twice in one object", InputError);
  CHECK_THROWS_WITH_AS(
      parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]], "weights": [{"a": 1}, {"b": [1, 2], "b": 3}]})"),
      "weights[1].b: key appears twice in one object", InputError);
}

TEST_CASE("files that are not scenario files say what they are") {
  CHECK_THROWS_WITH_AS(load_scenario_file(ATTN_TEST_DATA_DIR), "is a directory, not a file to load", InputError);
  CHECK_THROWS_WITH_AS(load_scenario_file("/dev/null"), "not a regular file", InputError);
}

TEST_CASE("token labels with control characters are refused -- window only with a sliding window") {
  CHECK_THROWS_WITH_AS(
      parse_scenario(
          R"({"tokens": ["a", "b\nc"], "embeddings": [[1], [2]], "attention": {"heads": 1, "head_dim": 1}})"),
      "tokens[1]: a token label must not contain control characters (found U+000A)", InputError);
  CHECK_THROWS_WITH_AS(
      parse_scenario(
          R"({"tokens": ["a"], "embeddings": [[1]], "attention": {"heads": 1, "head_dim": 1, "window": 2}})"),
      "attention.window: given, but attention.mask is not \"sliding_window\"", InputError);
  CHECK(parse_scenario(R"({"tokens": ["é", "b"], "embeddings": [[1], [2]], "attention": {"heads": 1, "head_dim": 1}})")
            .input.tokens[0] == "é");
}

TEST_CASE("hostile bytes never crash the loader") {
  const std::string deep(100000, '[');
  CHECK_THROWS_AS(parse_scenario(deep), InputError);
  CHECK_THROWS_AS(parse_scenario(deep + std::string(100000, ']')), InputError);
  CHECK_THROWS_AS(parse_scenario("{\"tokens\": \"\xff\xfe\"}"), InputError);
  CHECK_THROWS_AS(parse_scenario(std::string("{\"a\"\0:1}", 9)), InputError);
  CHECK_THROWS_WITH_AS(parse_scenario("null"), "scenario: expected an object but found null", InputError);
}

TEST_CASE("every shipped scenario loads, traces and decodes") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTN_ASSETS_DIR) + "/scenarios")) {
    CAPTURE(entry.path().string());
    const Scenario s = load_scenario_file(entry.path());
    CHECK_FALSE(s.description.empty());
    const Trace t = compute_trace(s);
    CHECK(t.output.allFinite());
    if (!s.context) CHECK(decode(s).steps.size() == s.input.tokens.size());
    ++count;
  }
  CHECK(count == 8);  // the cat sat, the lazy dog (MHA, GQA, MLA), cross-attention, scale, the dog saw the cat (and
                      // its sparse version)
}

TEST_CASE("positions and sparse attention load with their defaults, and save and load back unchanged") {
  const Scenario s = parse_scenario(R"({"tokens": ["a", "b", "c"], "embeddings": [[1, 0], [0, 1], [1, 1]],
      "attention": {"variant": "mla", "heads": 2, "head_dim": 2, "latent_dim": 3, "positions": "rope",
                    "rope_dim": 4, "sparse": {"top_k": 2}}})");
  const AttentionConfig& a = s.attention;
  CHECK(a.positions == Positions::Rope);
  CHECK(a.rope_base == 10000.0);
  CHECK(a.rope_dim == 4);
  REQUIRE(a.sparse);
  CHECK(a.sparse->top_k == 2);
  CHECK(a.sparse->indexer_heads == 1);
  CHECK(a.sparse->indexer_dim == 2);  // head_dim
  const Scenario back = parse_scenario(scenario_to_text(s));
  CHECK(back.attention.positions == Positions::Rope);
  CHECK(back.attention.rope_dim == 4);
  CHECK(back.attention.sparse->indexer_dim == 2);
  check_matrix(compute_trace(back).output, compute_trace(s).output, 0.0, "the same computation");

  const Scenario learned = parse_scenario(R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]],
      "attention": {"heads": 1, "head_dim": 2, "positions": "learned"}})");
  CHECK(learned.attention.max_positions == 2);  // one per token
  const Scenario given = parse_scenario(R"({"tokens": ["a"], "embeddings": [[1, 0]],
      "attention": {"heads": 1, "head_dim": 2, "positions": "learned"},
      "weights": {"W_P": [[1, 1], [2, 2], [3, 3]]}})");
  CHECK(given.attention.max_positions == 3);  // as many as W_P has rows
  const std::string text = scenario_to_text(given);
  CHECK(text.find("\"max_positions\": 3") != std::string::npos);
  CHECK(text.find("rope_base") == std::string::npos);
  const Scenario sinusoidal = parse_scenario(R"({"tokens": ["a"], "embeddings": [[1, 0]],
      "attention": {"heads": 1, "head_dim": 2, "positions": "sinusoidal", "rope_base": 100}})");
  CHECK(parse_scenario(scenario_to_text(sinusoidal)).attention.rope_base == 100.0);
}
