// Knocking heads out (core/ablation.h), what a head does on a text (core/head_roles.h) and each next token's loss.
#include <doctest/doctest.h>

#include <cmath>

#include "core/ablation.h"
#include "core/attention.h"
#include "core/head_roles.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/model.h"
#include "core/validate.h"
#include "tests/helpers.h"

namespace attn::test {
namespace {

// Eight layers of four heads.
int eight_layers_of_four(int layer) { return layer < 8 ? 4 : -1; }

std::string ablation_refusal(const std::string& list) {
  try {
    parse_ablation(list, eight_layers_of_four, "--ablate");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

Model tiny_model() { return resolve_model(load_model_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json")); }

}  // namespace

TEST_CASE("parse_ablation reads layer.head and whole layers, sorted, each head once") {
  const Ablation a = parse_ablation("6, 5.3,5.1,5.3", eight_layers_of_four, "--ablate");
  CHECK(ablation_list(a) == "5.1,5.3,6.0,6.1,6.2,6.3");
  CHECK(a.ablates({6, 2}));
  CHECK_FALSE(a.ablates({5, 2}));
  CHECK(a.heads_of(5) == std::vector<int>{1, 3});
  CHECK(a.heads_of(7).empty());
  CHECK(head_name({12, 3}) == "12.3");
}

TEST_CASE("parse_ablation refuses what is not a head, naming the item and the model's sizes") {
  const std::string how = " is not a head (write layer.head, 0-based, like 5.1, or a layer alone like 5)";
  CHECK(ablation_refusal("x") == "--ablate: \"x\"" + how);
  CHECK(ablation_refusal("1.") == "--ablate: \"1.\"" + how);
  CHECK(ablation_refusal("1.2,,3") == "--ablate: \"\"" + how);
  CHECK(ablation_refusal("-1") == "--ablate: \"-1\"" + how);
  CHECK(ablation_refusal("1.2.3") == "--ablate: \"1.2.3\"" + how);
  CHECK(ablation_refusal("99999999999") == "--ablate: \"99999999999\"" + how);
  CHECK(ablation_refusal(" \t") == "--ablate: empty: name the heads to knock out (layer.head, like 5.1)");
  CHECK(ablation_list(parse_ablation("1.2\t", eight_layers_of_four, "--ablate")) == "1.2");
  CHECK(ablation_refusal("8.0") == "--ablate: \"8.0\": the model has 8 layers (0-7)");
  CHECK(ablation_refusal("0.4") == "--ablate: \"0.4\": layer 0 has 4 heads (0-3)");
  CHECK(parse_ablation_mode("mean") == AblationMode::Mean);
  CHECK_FALSE(parse_ablation_mode("half"));
}

TEST_CASE("parse_ablation against a model reads its layers and heads, --ablate-mode checked once") {
  const Model m = tiny_model();  // 2 layers of 2 heads
  CHECK(ablation_list(parse_ablation("1, 0.1", m, "--ablate")) == "0.1,1.0,1.1");
  CHECK_THROWS_WITH(parse_ablation("0.2", m, "--ablate"), "--ablate: \"0.2\": layer 0 has 2 heads (0-1)");
  CHECK_THROWS_WITH(parse_ablation("2", m, "ablation"), "ablation: \"2\": the model has 2 layers (0-1)");
  CHECK(parse_ablation_mode("zero", "--ablate-mode") == AblationMode::Zero);
  CHECK(parse_ablation_mode("mean", "--ablate-mode") == AblationMode::Mean);
  CHECK_THROWS_WITH(parse_ablation_mode("Mean\n", "--ablate-mode"),
                    "--ablate-mode: must be zero | mean (found \"Mean\\x0a\")");
}

TEST_CASE("ablate_heads replaces a head's columns by zeros or by their mean over the rows") {
  Matrix outputs(3, 4);   // two heads of head_dim 2
  outputs << 1, 2, 3, 4,  //
      5, 6, 7, 8,         //
      9, 10, 11, 12;
  Matrix zero = outputs, mean = outputs;
  ablate_heads(zero, 2, {1}, AblationMode::Zero);
  ablate_heads(mean, 2, {1}, AblationMode::Mean);
  Matrix expected_zero(3, 4), expected_mean(3, 4);
  expected_zero << 1, 2, 0, 0, 5, 6, 0, 0, 9, 10, 0, 0;
  expected_mean << 1, 2, 7, 8, 5, 6, 7, 8, 9, 10, 7, 8;
  CHECK(zero == expected_zero);
  CHECK(mean == expected_mean);
}

TEST_CASE("text_head_scores reads the four kinds of position from the weights and the ids") {
  Matrix w(4, 4);
  w << 1, 0, 0, 0,       //
      0.5, 0.5, 0, 0,    //
      0.2, 0.3, 0.5, 0,  //
      0.1, 0.2, 0.3, 0.4;
  const TextHeadScores s = text_head_scores(w, {7, 8, 7, 8});
  CHECK(*s.previous_token == doctest::Approx(1.1 / 3).epsilon(1e-15));  // 0.5, 0.3, 0.3
  CHECK(*s.first_token == doctest::Approx(0.8 / 3).epsilon(1e-15));     // 0.5, 0.2, 0.1
  CHECK(*s.duplicate_token == doctest::Approx(0.2).epsilon(1e-15));     // W[2,0], W[3,1]
  CHECK(*s.induction == doctest::Approx(0.3).epsilon(1e-15));           // W[2,1], W[3,2]
  const TextHeadScores none = text_head_scores(w, {1, 2, 3, 4});
  CHECK_FALSE(none.induction);
  CHECK_FALSE(none.duplicate_token);
  CHECK(score_of(none, HeadRole::PreviousToken) == s.previous_token);
  // A token repeated at once: its copy is the previous token, and nothing comes after the copy before it.
  const TextHeadScores adjacent = text_head_scores(w.topLeftCorner(2, 2), {5, 5});
  CHECK(*adjacent.duplicate_token == 0.5);
  CHECK_FALSE(adjacent.induction);
  const TextHeadScores one = text_head_scores(w.topLeftCorner(1, 1), {5});
  CHECK_FALSE(one.previous_token);
  CHECK_FALSE(one.first_token);
}

TEST_CASE("next_token_losses is -ln p of each next token, finite where p rounds to 0, mean_loss their mean") {
  Matrix logits(3, 2);
  logits << 0, 0, 1000, 0, 0, 0;
  const std::vector<double> losses = next_token_losses(logits, {0, 1, 1});
  REQUIRE(losses.size() == 2);
  CHECK(losses[0] == doctest::Approx(std::log(2.0)).epsilon(1e-15));
  CHECK(losses[1] == doctest::Approx(1000.0).epsilon(1e-15));
  CHECK(next_token_losses(logits.topRows(1), {0}).empty());
  CHECK(mean_loss(losses) == doctest::Approx((std::log(2.0) + 1000.0) / 2).epsilon(1e-15));
  CHECK(mean_loss({1.0, 2.0, 4.0}) == 7.0 / 3.0);
  CHECK(mean_loss({}) == 0.0);
  Matrix p(1, 4);
  p << 0.1, 0.4, 0.1, 0.4;
  CHECK(top_tokens(p, 0, 3) == std::vector<int>{1, 3, 0});
}

TEST_CASE("a zero-ablated head is the model with that head's rows of W_O set to zero") {
  const Model m = tiny_model();
  const std::vector<std::string> tokens{"<s>", "a", "b", "a", "b"};
  const ModelTrace ablated =
      run_model(m, tokens, ModelRunOptions{.ablation = {.heads = {{1, 0}}, .mode = AblationMode::Zero}});
  Model cut = m;
  Matrix W_O = *cut.layers[1].weights.W_O;  // (H*d, d_model): head 0 owns rows 0..3
  W_O.topRows(4).setZero();
  cut.layers[1].weights.W_O = W_O;
  const ModelTrace expected = run_model(cut, tokens);
  CHECK((ablated.logits - expected.logits).cwiseAbs().maxCoeff() < 1e-12);
  CHECK((ablated.layers[0].residual_out - run_model(m, tokens).layers[0].residual_out).norm() == 0.0);
  CHECK(ablated.layers[1].attention.ablated_heads == std::vector<int>{0});
  // The head's own trace is what it computed: its weights and output are the unablated ones.
  const ModelTrace plain = run_model(m, tokens);
  CHECK(ablated.layers[1].attention.heads[0].output == plain.layers[1].attention.heads[0].output);
  CHECK(ablated.layers[1].attention.concat.leftCols(4).isZero(0.0));
}

TEST_CASE("mean ablation gives every row the head's mean output, and MLA's absorbed form agrees") {
  Scenario s = load_scenario_file(asset("the_lazy_dog_mla.json"));
  const Trace t = compute_trace(s, {.ablated_heads = {1}, .ablation_mode = AblationMode::Mean});
  const int d = s.attention.head_dim;
  const Vector mean = t.heads[1].output.colwise().mean();
  for (Eigen::Index i = 0; i < t.concat.rows(); ++i) CHECK(t.concat.row(i).segment(d, d) == mean.transpose());
  REQUIRE(t.absorbed);
  CHECK((t.absorbed->output - t.output).cwiseAbs().maxCoeff() < 1e-9);
  CHECK_THROWS_WITH_AS(compute_trace(s, {.ablated_heads = {s.attention.heads}}), doctest::Contains("ablated head"),
                       InputError);
}

TEST_CASE("run MODEL --ablate: the JSON names what was knocked out and has no gradients") {
  const std::string model = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const Run r = run({"run", model, "--tokens", "a b a b", "--json", "--ablate", "1.1,0", "--ablate-mode", "mean"});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, R"("ablated":[[0,0],[0,1],[1,1]],"ablate_mode":"mean"})"));
  CHECK_FALSE(contains(r.out, "d_weights"));
  CHECK(contains(r.out, R"("head_scores":[{"layer":0,"head":0,"previous_token":)"));
  const Run plain = run({"run", model, "--tokens", "a b a b", "--json"});
  CHECK(contains(plain.out, "d_weights"));
  CHECK_FALSE(contains(plain.out, "ablated"));
  const Run bad = run({"run", model, "--tokens", "a b", "--ablate", "2"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "tiny.json: --ablate: \"2\": the model has 2 layers (0-1)\n"));
  const Run mode = run({"run", model, "--tokens", "a b", "--ablate-mode", "zero"});
  CHECK(mode.code == 2);
  CHECK(contains(mode.err, "--ablate-mode is for --ablate LIST"));
}

}  // namespace attn::test
