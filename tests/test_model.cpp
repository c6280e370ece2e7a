// A transformer around attention: LayerNorm, the feed-forward kinds, pre/post/no norm, the layer as a scenario, the
// model file's checks and the run and trace commands, each against numbers worked by hand.
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/model.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;
using nlohmann::json;

namespace {

// Two tokens of width 2, one layer, one head of width 2 whose queries and keys are 0: every visible key gets the
// same weight, so with causal attention row i's attention output is the mean of the values of rows 0..i.
json averaging_model(const std::string& norm, const json& ffn) {
  json m = {{"name", "averaging"},
            {"vocab", {"x", "y"}},
            {"d_model", 2},
            {"max_positions", 4},
            {"norm", norm},
            {"layers",
             {{{"attention", {{"heads", 1}, {"head_dim", 2}}},
               {"weights",
                {{"W_Q", {{0, 0}, {0, 0}}},
                 {"W_K", {{0, 0}, {0, 0}}},
                 {"W_V", {{1, 0}, {0, 1}}},
                 {"W_O", {{1, 0}, {0, 1}}}}}}}},
            {"embedding", {{1, 0}, {0, 3}}},
            {"unembedding", {{1, 0}, {0, 1}}}};
  if (!ffn.is_null()) m["ffn"] = ffn;
  return m;
}

Model model(const json& j) { return resolve_model(model_from_json(j)); }

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

// The refusal a model file gets: its field and message.
std::string refusal(const json& j) {
  try {
    model_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("LayerNorm by hand: centred, divided by sqrt(biased variance + 1e-5), then gain and bias") {
  const Matrix x = mat({{1, 2, 3, 4}, {2, 2, 2, 2}});
  const double s = std::sqrt(1.25 + 1e-5);  // mean 2.5, variance (2.25 + 0.25) * 2 / 4
  check_matrix(layer_norm(x, mat({{1, 1, 1, 1}}), mat({{0, 0, 0, 0}})),
               mat({{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, {0, 0, 0, 0}}), 1e-15, "plain");
  check_matrix(layer_norm(x, mat({{2, 1, 1, 1}}), mat({{0, 0, 0, 7}})),
               mat({{-3 / s, -0.5 / s, 0.5 / s, 1.5 / s + 7}, {0, 0, 0, 7}}), 1e-15, "gain and bias per column");
}

TEST_CASE("no norm, no FFN: the stream plus the mean of the earlier rows, and the unembedding reads it") {
  const ModelTrace t = run_model(model(averaging_model("none", nullptr)), {"x", "y", "y"});
  check_matrix(t.embedded, mat({{1, 0}, {0, 3}, {0, 3}}), 0.0, "embedding rows");
  // Row 1: (0, 3) + mean((1, 0), (0, 3)); row 2: (0, 3) + mean of all three.
  const Matrix expected = mat({{2, 0}, {0.5, 4.5}, {1.0 / 3, 5}});
  check_matrix(t.layers[0].attention.output, expected - t.embedded, 1e-15, "attention output");
  check_matrix(t.layers[0].residual_out, expected, 1e-15, "residual");
  CHECK(t.layers[0].ffn_out.size() == 0);
  check_matrix(t.logits, expected, 1e-15, "logits = x I");
  const double e = std::exp(4.5 - 0.5);
  CHECK(t.probabilities(1, 1) == doctest::Approx(e / (1 + e)).epsilon(1e-14));
  CHECK(t.probabilities.rowwise().sum().isOnes(1e-14));
}

TEST_CASE("the FFN kinds by hand on the averaging model (no norm)") {
  const json relu = {{"kind", "relu"}, {"d_ff", 2}};
  json j = averaging_model("none", relu);
  j["layers"][0]["weights"]["W_1"] = {{1, -1}, {0.5, 2}};
  j["layers"][0]["weights"]["b_1"] = {0.25, -3};
  j["layers"][0]["weights"]["W_2"] = {{1, 2}, {-1, 0.5}};
  j["layers"][0]["weights"]["b_2"] = {0.5, 0};
  // Row 0 after attention: (2, 0). Pre-activation (2, -2) + b_1 = (2.25, -5).
  SUBCASE("relu") {
    const ModelTrace t = run_model(model(j), {"x"});
    check_matrix(t.layers[0].ffn_hidden, mat({{2.25, 0}}), 0.0, "relu");
    check_matrix(t.layers[0].ffn_out, mat({{2.75, 4.5}}), 1e-15, "hidden W_2 + b_2");
    check_matrix(t.layers[0].residual_out, mat({{4.75, 4.5}}), 1e-15, "x + FFN(x)");
  }
  SUBCASE("gelu, exact with erf") {
    j["ffn"]["kind"] = "gelu";
    const ModelTrace t = run_model(model(j), {"x"});
    check_matrix(t.layers[0].ffn_hidden, mat({{gelu(2.25), gelu(-5)}}), 1e-15, "gelu");
  }
  SUBCASE("swiglu: silu(x W_1) * (x W_3), no biases") {
    j["ffn"]["kind"] = "swiglu";
    j["layers"][0]["weights"].erase("b_1");
    j["layers"][0]["weights"].erase("b_2");
    j["layers"][0]["weights"]["W_3"] = {{0.5, 1}, {1, 1}};
    const ModelTrace t = run_model(model(j), {"x"});
    const double silu0 = 2 / (1 + std::exp(-2.0)), silu1 = -2 / (1 + std::exp(2.0));
    check_matrix(t.layers[0].ffn_hidden, mat({{silu0 * 1, silu1 * 2}}), 1e-15, "gate times up");
    check_matrix(t.layers[0].ffn_out, mat({{silu0 - 2 * silu1, 2 * silu0 + silu1}}), 1e-15, "hidden W_2");
  }
}

TEST_CASE("pre and post norm: where LayerNorm sits, and the final norm of pre") {
  const ModelTrace pre = run_model(model(averaging_model("pre", nullptr)), {"x", "y"});
  // Pre: attention reads LN1(x): each row of width 2 normalises to (+-1, -+1) times 1/sqrt(1 + 1e-5 / a^2).
  const Matrix ln = layer_norm(pre.embedded, mat({{1, 1}}), mat({{0, 0}}));
  check_matrix(pre.layers[0].attention.x, ln, 0.0, "attention reads LN1(x)");
  check_matrix(pre.layers[0].residual_out, pre.embedded + pre.layers[0].attention.output, 1e-15, "x + Attn(LN1 x)");
  check_matrix(pre.final, layer_norm(pre.layers[0].residual_out, mat({{1, 1}}), mat({{0, 0}})), 0.0, "LN_final");
  const ModelTrace post = run_model(model(averaging_model("post", nullptr)), {"x", "y"});
  check_matrix(post.layers[0].attention.x, post.embedded, 0.0, "post: attention reads the stream");
  check_matrix(post.layers[0].residual_out,
               layer_norm(post.embedded + post.layers[0].attention.output, mat({{1, 1}}), mat({{0, 0}})), 0.0,
               "LN1(x + Attn x)");
  check_matrix(post.final, post.layers[0].residual_out, 0.0, "no final norm");
}

TEST_CASE("a layer's attention is a scenario: its trace is the model's, and the shipped tiny model runs") {
  const Model m = resolve_model(load_model_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json"));
  REQUIRE(m.layers.size() == 2);
  const std::vector<std::string> tokens{"<s>", "a", "b", "a", "b"};
  const ModelTrace t = run_model(m, tokens);
  const Trace layer1 = compute_trace(layer_scenario(m, 1, tokens, t.layers[1].attention.x));
  check_matrix(layer1.output, t.layers[1].attention.output, 0.0, "the same numbers");
  check_matrix(t.layers[1].residual_in, t.layers[0].residual_out, 0.0, "layers chain");
  CHECK(t.probabilities.rows() == 5);
  CHECK(t.probabilities.cols() == 8);
  // Seeded weights: the same file gives the same numbers, and the gains start at 1.
  check_matrix(
      run_model(resolve_model(load_model_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json")), tokens).logits,
      t.logits, 0.0, "deterministic");
  CHECK(m.layers[0].own.ln1_gain->isOnes());
  CHECK(m.layers[0].own.b_1->isZero());
  CHECK(m.layers[1].weights.W_O.has_value());
}

TEST_CASE("bad model files name the field, what was expected and what was found") {
  const json good = averaging_model("none", nullptr);
  auto with = [&](auto change) {
    json j = good;
    change(j);
    return refusal(j);
  };
  CHECK(refusal(good) == "accepted");
  CHECK(with([](json& j) { j["vocab"] = json::array(); }) == "vocab: expected at least one token but found none");
  CHECK(with([](json& j) { j["vocab"] = {"x", "x"}; }) == "vocab[1]: \"x\" is already in the vocabulary");
  CHECK(with([](json& j) {
          j["vocab"] = {"x", "y z"};
        }) == "vocab[1]: \"y z\" cannot be typed: a token is a non-empty word without spaces");
  // run_model heads its tables with the vocabulary's words, so the loader refuses what it would refuse.
  CHECK(with([](json& j) {
          j["vocab"] = {"x", "y\u001f"};
        }) == "vocab[1]: a token label must not contain control characters (found U+001F)");
  CHECK(with([](json& j) {
          j["vocab"] = {"x", "\u007f"};
        }) == "vocab[1]: a token label must not contain control characters (found U+007F)");
  CHECK(with([](json& j) {
          j["vocab"] = json::array();
          j["embedding"] = json::array();
        }) == "vocab: expected at least one token but found none");
  CHECK(with([](json& j) { j["colour"] = 1; }).starts_with("colour: unknown key"));
  CHECK(with([](json& j) { j["layers"][0]["attention"]["positions"] = "rope"; }) ==
        "layers[0].attention.positions: belongs to the model, not to a layer (the model's \"positions\" applies to "
        "every layer)");
  CHECK(with([](json& j) { j["layers"][0]["attention"]["heads"] = 0; }) ==
        "layers[0].attention.heads: must be >= 1 (found 0)");
  CHECK(
      with([](json& j) { j["layers"][0]["attention"]["mask"] = "custom"; }).starts_with("layers[0].attention.mask: "));
  CHECK(with([](json& j) {
          j["layers"][0]["weights"]["W_V"] = {{1, 0, 0}, {0, 1, 0}};
        }) == "layers[0].weights.W_V: expected 2 columns (heads x head_dim = 1 x 2) but found 3");
  CHECK(with([](json& j) {
          j["layers"][0]["weights"]["b_1"] = {1, 2};
        }) == "layers[0].weights.b_1: given, but this model does not use it");
  CHECK(with([](json& j) { j["embedding"] = {{1, 0}}; }) == "embedding: expected 2 rows (vocab) but found 1");
  CHECK(with([](json& j) { j["ffn"] = {{"kind", "gelu"}}; }) == "ffn.d_ff: missing (required)");
  CHECK(with([](json& j) { j["ffn"] = {{"kind", "none"}, {"d_ff", 4}}; }).starts_with("ffn.d_ff: only used by"));
  CHECK(with([](json& j) { j["norm"] = "middle"; }) ==
        "norm: expected one of none | pre | post but found string \"middle\"");
  CHECK(with([](json& j) { j["layers"] = json::array(); }) == "layers: expected at least one layer but found none");
  CHECK(with([](json& j) { j["final_gain"] = {1, 1}; }) == "final_gain: given, but this model does not use it");
  CHECK(with([](json& j) {
          j["norm"] = "pre";
          j["final_gain"] = {1, "x"};
        }) == "final_gain[1]: expected a number but found string \"x\"");
  CHECK(with([](json& j) { j["layers"][0]["attention"]["position_offset"] = 2; }) ==
        "layers[0].attention.position_offset: is for scenarios: a model's positions start at 0");
  // A weight drawn from the seed is bounded like a given one: this 1 KB file would draw 64 x 3 matrices of 32M.
  CHECK(with([](json& j) {
          j["d_model"] = 4096;
          j.erase("embedding");
          j.erase("unembedding");
          j["layers"][0].erase("weights");
          j["ffn"] = {{"kind", "swiglu"}, {"d_ff", 8192}};
        }) ==
        "layers[0].weights.W_1: would be 4096 x 8192 (d_model by d_ff) = 33,554,432 numbers, more than the "
        "4,194,304 a matrix may hold");
  CHECK(with([](json& j) {
          j["d_model"] = 512;
          j.erase("embedding");
          j.erase("unembedding");
          j["layers"] = json::array();
          for (int l = 0; l < 40; ++l) j["layers"].push_back({{"attention", {{"heads", 8}, {"head_dim", 64}}}});
          j["ffn"] = {{"kind", "gelu"}, {"d_ff", 2048}};
        }) ==
        "model: its weights, given or drawn from the seed, would hold 125,933,568 numbers, more than the 33,554,432 "
        "a "
        "model may hold");
  CHECK_THROWS_WITH_AS(run_model(model(good), {"x", "y", "x", "y", "x"}),
                       "tokens: must be <= 4, the model's max_positions (found 5)", InputError);
  json one_token = good;  // a vocabulary of one, its embedding and unembedding drawn from the seed
  one_token["vocab"] = {"x"};
  one_token.erase("embedding");
  one_token.erase("unembedding");
  CHECK_THROWS_WITH_AS(run_model(model(one_token), {"x", "z"}), "tokens[1]: \"z\" is not in the vocabulary of 1 token",
                       InputError);
  CHECK_THROWS_WITH_AS(option_token_ids(model(one_token), {"z"}, "--tokens"),
                       "--tokens: word 1, \"z\", is not in the model's vocabulary of 1 token", InputError);
  CHECK_THROWS_WITH_AS(run_model(model(good), {"x", "z"}), "tokens[1]: \"z\" is not in the vocabulary of 2 tokens",
                       InputError);
}

TEST_CASE("run prints the likeliest next tokens, --json has every layer, trace --layer traces one as a scenario") {
  const std::string tiny = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const CliRun text = run_cli_capture({"run", tiny, "--tokens", "<s> a b"});
  REQUIRE(text.code == 0);
  CHECK(text.out.starts_with("tiny: the 5 likeliest next tokens at each position\nafter '<s>' (position 0):"));
  const CliRun j = run_cli_capture({"run", tiny, "--tokens", "<s> a b", "--json"});
  REQUIRE(j.code == 0);
  const json out = json::parse(j.out);
  CHECK(out["tokens"] == json({"<s>", "a", "b"}));
  REQUIRE(out["layers"].size() == 2);
  CHECK(out["layers"][1]["attention"]["heads"].size() == 2);
  CHECK(out["layers"][1]["attention"]["heads"][0]["weights"][0][1].is_number());  // causal: 0, not null
  CHECK(out["probabilities"].size() == 3);
  CHECK(out["logits"][0].size() == 8);
  const CliRun layer = run_cli_capture({"trace", tiny, "--layer", "1", "--tokens", "<s> a b", "--json"});
  REQUIRE(layer.code == 0);
  CHECK(json::parse(layer.out)["output"] == out["layers"][1]["attention"]["output"]);
  const CliRun bad = run_cli_capture({"run", tiny, "--tokens", "<s> q"});
  CHECK(bad.code == 2);
  CHECK(bad.err.ends_with("tiny.json: --tokens: word 2, \"q\", is not in the model's vocabulary of 8 tokens\n"));
  CHECK(run_cli_capture({"trace", tiny, "--layer", "0", "--tokens", "<s> a q"})
            .err.ends_with("tiny.json: --tokens: word 3, \"q\", is not in the model's vocabulary of 8 tokens\n"));
  CHECK(run_cli_capture({"run", tiny, "--tokens", " "})
            .err.ends_with("tiny.json: --tokens: no tokens given (write them separated by spaces, each from the "
                           "model's vocabulary)\n"));
  const CliRun no_layer = run_cli_capture({"trace", tiny, "--tokens", "a"});
  CHECK(no_layer.code == 2);
  CHECK(no_layer.err.find("--layer: a model file needs --layer L and --tokens") != std::string::npos);
  const CliRun high = run_cli_capture({"trace", tiny, "--layer", "2", "--tokens", "a"});
  CHECK(high.err.find("--layer: the model has layers 0..1 but found 2") != std::string::npos);
}

TEST_CASE("weights that grow the stream past what attention accepts are refused at the layer, never run into Inf") {
  json j = averaging_model("none", nullptr);
  j["layers"][0]["weights"]["W_V"] = {{1e6, 0}, {0, 1e6}};
  j["layers"].push_back(j["layers"][0]);
  j["layers"].push_back(j["layers"][0]);
  // x = 1, then 1 + 1e6, then (1 + 1e6)(1 + 1e6): past 1e12 entering layer 2.
  CHECK_THROWS_WITH_AS(run_model(model(j), {"x"}),
                       "layers[2]: the residual stream reaches 1.000002e+12 (row 0, column 0), beyond the 1e12 "
                       "attention accepts: these weights grow it without bound",
                       InputError);
  j["norm"] = "pre";  // LayerNorm keeps what attention reads near 1
  CHECK(run_model(model(j), {"x"}).logits.allFinite());
}

TEST_CASE("a model written and read back is the same model, its weights to the last bit") {
  const std::string tiny = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const Model given = load_model_file(tiny);
  const std::string text = model_to_text(given);
  CHECK(model_to_text(parse_model(text)) == text);  // what the file gave: no weights, as it was
  CHECK(text.find("\"embedding\"") == std::string::npos);
  const Model resolved = resolve_model(given);
  const std::filesystem::path dir = fresh_dir("model-write");
  save_model_file(resolved, dir / "tiny_resolved.json");
  const Model back = load_model_file(dir / "tiny_resolved.json");
  REQUIRE(back.embedding.has_value());
  CHECK(*back.embedding == *resolved.embedding);
  CHECK(*back.layers[1].own.W_2 == *resolved.layers[1].own.W_2);
  CHECK(*back.layers[1].weights.W_O == *resolved.layers[1].weights.W_O);
  CHECK(*back.final_gain == *resolved.final_gain);
  const std::vector<std::string> tokens{"<s>", "c", "a", "g"};
  CHECK(run_model(resolve_model(back), tokens).logits == run_model(resolved, tokens).logits);
  // Post-LN swiglu with rope and an mla layer: rope_dim is the layer's, rope_base the model's.
  json j = averaging_model("post", {{"kind", "swiglu"}, {"d_ff", 3}});
  j["positions"] = "rope";
  j["rope_base"] = 500;
  j["layers"][0] = {
      {"attention", {{"variant", "mla"}, {"heads", 1}, {"head_dim", 2}, {"latent_dim", 2}, {"rope_dim", 2}}}};
  const Model mla = resolve_model(model_from_json(j));
  const Model mla_back = parse_model(model_to_text(mla));
  CHECK(mla_back.layers[0].attention.rope_dim == 2);
  CHECK(mla_back.rope_base == 500);
  CHECK(run_model(mla_back, {"x", "y"}).logits == run_model(mla, {"x", "y"}).logits);
}

TEST_CASE("changing a model's shape leaves out the weights that no longer fit, and says which") {
  json j = averaging_model("none", {{"kind", "relu"}, {"d_ff", 2}});
  j["layers"][0]["weights"]["W_1"] = {{1, -1}, {0.5, 2}};
  j["layers"][0]["weights"]["b_1"] = {0.25, -3};
  Model m = model_from_json(j);
  m.ffn = {FfnKind::Swiglu, 2};
  m.d_model = 2;
  CHECK(drop_unfit_model_weights(m) ==
        std::vector<std::string>{"layers[0].weights.b_1 is not used by this model any more; left out"});
  CHECK(m.layers[0].own.W_1.has_value());
  m.ffn.d_ff = 3;
  CHECK(drop_unfit_model_weights(m) ==
        std::vector<std::string>{"layers[0].weights.W_1 is 2 x 2 but now needs 2 x 3 (d_model by d_ff); drawn from "
                                 "the seed instead"});
  m.layers[0].attention.head_dim = 4;
  const std::vector<std::string> notes = drop_unfit_model_weights(m);
  REQUIRE(notes.size() == 4);  // W_Q, W_K, W_V and W_O
  CHECK(notes[0].starts_with("layers[0].weights.W_Q is 2 x 2 but now needs 2 x 4"));
  CHECK_NOTHROW(check_model(m));
  set_layer_count(m, 3);
  CHECK(m.layers.size() == 3);
  CHECK(m.layers[2].attention.head_dim == 4);
  CHECK_FALSE(m.layers[2].weights.W_Q.has_value());
  CHECK(run_model(resolve_model(m), {"x", "y"}).logits.allFinite());
  set_layer_count(m, 1);
  CHECK(m.layers.size() == 1);
  CHECK_THROWS_WITH_AS(set_layer_count(m, 0), "layers: must be >= 1 (found 0)", InputError);
}
