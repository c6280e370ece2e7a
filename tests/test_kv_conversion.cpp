// The same model with a smaller cache: GQA by pooled key/value heads, MLA by the truncated SVD of [W_K | W_V], the
// layers and limits they are given, and mla's two new forms (biases beside the latent, RoPE turning the expanded
// keys) in the trace, its absorbed form and decoding.
#include <cmath>

#include <Eigen/SVD>
#include <nlohmann/json.hpp>

#include "core/attention.h"
#include "core/decode.h"
#include "core/io/model_json.h"
#include "core/kv_conversion.h"
#include "core/kv_tradeoff.h"
#include "core/text_quality.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;
using nlohmann::json;

namespace {

// Numbers that are not round and not random: a different wave for every (rows, cols, phase).
Matrix wavy(int rows, int cols, double phase) {
  Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = std::sin(1.7 * r + 0.61 * c + phase) * 0.5;
  return m;
}

// GPT-2's shape in small (learned positions, biases on q/k/v and the output, 4 heads of 2), or a Qwen2-like one
// (rope, rms_norm, swiglu, GQA 4/2 with q/k/v biases). Biases drawn from the seed are zero: these are set.
Model small_model(bool rope) {
  json attention = {{"heads", 4}, {"head_dim", 2}, {"qkv_bias", true}};
  json j = {{"name", rope ? "qwen-like" : "gpt-like"},
            {"vocab", {"a", "b", "c", "d", "e", "f"}},
            {"d_model", 8},
            {"max_positions", 8},
            {"norm", "pre"},
            {"layers", json::array()}};
  if (rope) {
    attention["variant"] = "gqa";
    attention["kv_heads"] = 2;
    j.update({{"positions", "rope"}, {"norm_function", "rms_norm"}, {"ffn", {{"kind", "swiglu"}, {"d_ff", 12}}}});
  } else {
    attention["output_bias"] = true;
    j.update({{"positions", "learned"}, {"ffn", {{"kind", "gelu_tanh"}, {"d_ff", 12}}}});
  }
  for (int l = 0; l < 2; ++l) j["layers"].push_back({{"attention", attention}});
  Model m = resolve_model(model_from_json(j));
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    Weights& w = m.layers[l].weights;
    const double p = static_cast<double>(l);
    w.b_Q = wavy(1, static_cast<int>(w.W_Q->cols()), p + 0.1);
    w.b_K = wavy(1, static_cast<int>(w.W_K->cols()), p + 0.2);
    w.b_V = wavy(1, static_cast<int>(w.W_V->cols()), p + 0.3);
  }
  return m;
}

const std::vector<std::string> kTokens{"a", "c", "b", "f", "e", "a", "d"};

ModelTrace run_converted(const Model& m, const KvConversion& c) {
  const ResolvedWeights base(m);
  const Model after = converted_model(m, c);
  const ConvertedAttention attention = convert_attention(base, m, c);
  const ConvertedWeights w(base, after, attention);
  return run_model(after, kTokens, token_ids(m, kTokens), w, {});
}

KvConversion every_layer(KvTarget to, int g, int c) {
  return {.to = to, .kv_heads = g, .latent_dim = c, .layers = {0, 1}};
}

std::string conversion_refusal(const Model& m, const KvConversion& c) {
  try {
    check_kv_conversion(m, c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

std::string layers_refusal(const std::string& text) {
  try {
    parse_layer_list(text, 6, "--layers");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("kv conversion: the model's own G and a full-rank latent give its logits back to 1e-9") {
  for (const bool rope : {false, true}) {
    CAPTURE(rope);
    const Model m = small_model(rope);
    const Matrix logits = run_model(m, kTokens).logits;
    const int g0 = kv_head_count(m.layers[0].attention);
    check_matrix(run_converted(m, every_layer(KvTarget::Gqa, g0, 1)).logits, logits, 1e-9, "G = G0");
    const int rank = kv_rank_bound(m.layers[0].attention, m.d_model);
    CHECK(rank == 8);  // min(8, 2·4·2 = 16) and min(8, 2·2·2 = 8)
    check_matrix(run_converted(m, every_layer(KvTarget::Mla, 1, rank)).logits, logits, 1e-9, "full rank");
    // A narrower latent changes the predictions: the check above can fail.
    CHECK((run_converted(m, every_layer(KvTarget::Mla, 1, 2)).logits - logits).cwiseAbs().maxCoeff() > 1e-3);
  }
}

TEST_CASE("kv conversion: GQA pools each group of key/value heads into their mean, by hand") {
  ModelLayer layer;
  layer.attention.heads = 4;
  layer.attention.head_dim = 1;
  layer.attention.qkv_bias = true;
  layer.weights.W_K = mat({{1, 3, 5, 9}, {0, 2, 0, 2}});
  layer.weights.W_V = mat({{2, 2, 4, 4}, {1, 1, 1, 1}});
  layer.weights.b_K = mat({{1, 2, 3, 4}});
  layer.weights.b_V = mat({{0, 0, 8, 8}});
  const ConvertedLayer g = pool_kv_heads(layer, 2);
  CHECK(g.layer.attention.variant == Variant::Gqa);
  CHECK(g.layer.attention.kv_heads == 2);
  check_matrix(*g.layer.weights.W_K, mat({{2, 7}, {1, 1}}), 0.0, "W_K");
  check_matrix(*g.layer.weights.W_V, mat({{2, 4}, {1, 1}}), 0.0, "W_V");
  check_matrix(*g.layer.weights.b_K, mat({{1.5, 3.5}}), 0.0, "b_K");
  check_matrix(*g.layer.weights.b_V, mat({{0, 8}}), 0.0, "b_V");
  // W_K' = [[2, 2, 7, 7], [1, 1, 1, 1]]: off by (1, 1, 2, 2) and (1, 1, 1, 1), so ||W' - W|| = sqrt(14);
  // ||W_K|| = sqrt(1 + 9 + 25 + 81 + 4 + 4) = sqrt(124). W_V's pairs are equal already.
  CHECK(g.error.k_error == doctest::Approx(std::sqrt(14.0 / 124.0)).epsilon(1e-15));
  CHECK(g.error.v_error == 0.0);
  const ConvertedLayer q = pool_kv_heads(layer, 1);
  CHECK(q.layer.attention.variant == Variant::Mqa);
  check_matrix(*q.layer.weights.W_K, mat({{4.5}, {1}}), 0.0, "MQA W_K");
}

TEST_CASE("kv conversion: MLA's error at d_c is the root of the discarded squared singular values") {
  const Model m = small_model(false);
  const ModelLayer& layer = m.layers[1];
  Eigen::MatrixXd A(8, 16);
  A << *layer.weights.W_K, *layer.weights.W_V;
  const Vector sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues();  // another algorithm than kv_svd's
  const KvSvd svd = kv_svd(layer);
  check_matrix(Matrix(svd.sigma.transpose()), Matrix(sigma.transpose()), 1e-12, "singular values");
  for (int c = 1; c <= 8; ++c) {
    CAPTURE(c);
    const ConvertedLayer f = factorise_kv(layer, svd, c);
    const double k = f.error.k_error * layer.weights.W_K->norm(), v = f.error.v_error * layer.weights.W_V->norm();
    CHECK(std::hypot(k, v) == doctest::Approx(sigma.tail(8 - c).norm()).epsilon(1e-9).scale(A.norm()));
    // W_DKV = U_c Σ_c: its columns are orthogonal with the singular values as lengths.
    const Matrix gram = f.layer.weights.W_DKV->transpose() * *f.layer.weights.W_DKV;
    check_matrix(gram, Matrix(sigma.head(c).array().square().matrix().asDiagonal()), 1e-12, "W_DKV^T W_DKV");
  }
}

TEST_CASE("kv conversion: mla with biases beside the latent, absorbed and decoded, agrees with its explicit form") {
  const Model m = small_model(false);
  const ModelLayer layer = factorise_kv(m.layers[0], kv_svd(m.layers[0]), 3).layer;
  REQUIRE(layer.attention.variant == Variant::Mla);
  REQUIRE(layer.attention.qkv_bias);
  const Scenario s = layer_scenario(m, layer, 0, kTokens, wavy(7, 8, 0.4));
  const Trace t = compute_trace(s);
  REQUIRE(t.absorbed);
  check_matrix(t.absorbed->output, t.output, 1e-9, "absorbed output");
  for (int h = 0; h < 4; ++h) check_matrix(t.absorbed->scores[h], t.heads[h].scores(), 1e-9, "absorbed scores");
  const Trace zeroed = compute_trace(s, {.ablated_heads = {1, 3}, .ablation_mode = AblationMode::Mean});
  check_matrix(zeroed.absorbed->output, zeroed.output, 1e-9, "absorbed output, heads 1 and 3 at their mean");
  const DecodeTrace d = decode(s);
  for (std::size_t i = 0; i < d.steps.size(); ++i)
    check_matrix(d.steps[i].output, t.output.row(static_cast<Eigen::Index>(i)), 1e-9, "decoded row");
}

TEST_CASE("kv conversion: mla turning its expanded keys has no absorbed form and equals MHA on W_DKV W_UK") {
  const Model m = small_model(true);
  const ModelLayer layer = factorise_kv(m.layers[1], kv_svd(m.layers[1]), 3).layer;
  REQUIRE(rope_turns_heads(layer.attention));
  REQUIRE_FALSE(decoupled_rope(layer.attention));
  const Scenario s = layer_scenario(m, layer, 1, kTokens, wavy(7, 8, 0.9));
  const Trace t = compute_trace(s);
  CHECK_FALSE(t.absorbed);
  Scenario mha = s;
  mha.attention.variant = Variant::Mha;
  mha.attention.latent_dim = 0;
  mha.attention.kv_heads = 4;
  mha.weights.W_K = Matrix(*layer.weights.W_DKV * *layer.weights.W_UK);
  mha.weights.W_V = Matrix(*layer.weights.W_DKV * *layer.weights.W_UV);
  mha.weights.W_DKV = mha.weights.W_UK = mha.weights.W_UV = SharedMatrix();
  check_matrix(t.output, compute_trace(mha).output, 1e-12, "the same attention");
  const DecodeTrace d = decode(s);
  for (std::size_t i = 0; i < d.steps.size(); ++i)
    check_matrix(d.steps[i].output, t.output.row(static_cast<Eigen::Index>(i)), 1e-9, "decoded row");
}

TEST_CASE("kv conversion: mla with biases and a decoupled RoPE key decodes as its trace computes") {
  const Model m = small_model(true);
  ModelLayer layer = factorise_kv(m.layers[0], kv_svd(m.layers[0]), 3).layer;
  layer.attention.rope_dim = 2;  // W_QR and W_KR drawn from the seed
  REQUIRE(decoupled_rope(layer.attention));
  const Scenario s = layer_scenario(m, layer, 0, kTokens, wavy(7, 8, 1.3));
  const Trace t = compute_trace(s);
  REQUIRE(t.absorbed);
  check_matrix(t.absorbed->output, t.output, 1e-9, "absorbed output");
  for (int h = 0; h < 4; ++h) {
    // The key bias's part: q_i . b_K^(h), the same along row i.
    const Vector key_bias = t.Q.middleCols(2 * h, 2) * s.weights.b_K->middleCols(2 * h, 2).transpose();
    Matrix scores = t.absorbed->latent_scores[h] + t.heads[h].q_r * t.heads[h].k_r.transpose();
    scores.colwise() += key_bias;
    check_matrix(scores, t.heads[h].scores(), 1e-9, "latent_scores + q . b_K + q_r k_r^T");
  }
  const DecodeTrace d = decode(s);
  for (std::size_t i = 0; i < d.steps.size(); ++i)
    check_matrix(d.steps[i].output, t.output.row(static_cast<Eigen::Index>(i)), 1e-9, "decoded row");
}

TEST_CASE("kv conversion: only the layers named are converted, and the cache per token counts them") {
  const Model m = small_model(false);
  const KvConversion c{.to = KvTarget::Gqa, .kv_heads = 1, .layers = {1}};
  const Model after = converted_model(m, c);
  CHECK(after.layers[0].attention.variant == Variant::Mha);
  CHECK(after.layers[1].attention.variant == Variant::Mqa);
  CHECK(kv_bytes_per_token(m, 2) == 2 * (2 * 4 * 2) * 2);          // two layers of 2·H·d numbers, 2 bytes each
  CHECK(kv_bytes_per_token(after, 2) == (2 * 4 * 2 + 2 * 2) * 2);  // and one of 2·d
  CHECK(kv_bytes_per_token(converted_model(m, every_layer(KvTarget::Mla, 1, 5)), 2) == 2 * 5 * 2);
  const ConvertedAttention a = convert_attention(ResolvedWeights(m), m, c);
  CHECK_FALSE(a.weights[0]);
  CHECK(a.errors[0].k_error == 0.0);
  CHECK(a.errors[1].k_error > 0.0);
  CHECK(converted_attention_bytes(after, c) == 8 * (2 * 8 * 2 + 2 * 2));
}

TEST_CASE("kv conversion: bad G, latent widths and layer lists are refused with what would do") {
  const Model gpt = small_model(false), qwen = small_model(true);
  CHECK(conversion_refusal(gpt, every_layer(KvTarget::Gqa, 3, 1)) ==
        "--kv-heads: must divide the 4 key/value heads of layer 0 (1, 2, 4) but found 3");
  CHECK(conversion_refusal(qwen, every_layer(KvTarget::Gqa, 4, 1)) ==
        "--kv-heads: must divide the 2 key/value heads of layer 0 (1, 2) but found 4");
  CHECK(conversion_refusal(gpt, every_layer(KvTarget::Mla, 1, 9)) ==
        "--latent-dim: must be at most 8, the rank of layer 0's [W_K | W_V] (at most min(d_model 8, 2 x 4 key/value "
        "heads x head_dim 2)) but found 9");
  CHECK(conversion_refusal(gpt, every_layer(KvTarget::Mla, 1, 8)) == "accepted");
  Model mla = converted_model(gpt, {.to = KvTarget::Mla, .latent_dim = 2, .layers = {1}});
  CHECK(conversion_refusal(mla, every_layer(KvTarget::Gqa, 1, 1)) ==
        "--layers: layer 1 is mla already: its keys and values come from a latent");
  CHECK(parse_layer_list("0-2,5", 6, "--layers") == std::vector<int>{0, 1, 2, 5});
  CHECK(parse_layer_list("4,1", 6, "--layers") == std::vector<int>{1, 4});
  CHECK(layers_refusal("6") == "--layers: the model has layers 0..5 but found 6");
  CHECK(layers_refusal("3-1") == "--layers: the range 3-1 runs backwards (write 1-3)");
  CHECK(layers_refusal("0-2,2") == "--layers: layer 2 is given twice");
  CHECK(layers_refusal("") == "--layers: expected a layer or a range such as 0-5 but found \"\"");
  CHECK(layers_refusal("1,") == "--layers: expected a layer or a range such as 0-5 but found \"\"");
  CHECK(layers_refusal("-1") == "--layers: expected a layer or a range such as 0-5 but found \"-1\"");
  CHECK(layers_refusal("1-2-3") == "--layers: expected a layer or a range such as 0-5 but found \"1-2-3\"");
  CHECK(layers_refusal("99999999999") == "--layers: expected a layer or a range such as 0-5 but found \"99999999999\"");
}

TEST_CASE("text quality: loss, agreement and KL of two models over windows, by hand") {
  // One model against itself: KL 0, every position agrees, the loss is run_model's.
  const Model m = small_model(false);
  const ResolvedWeights w(m);
  const std::vector<int> ids = token_ids(m, kTokens);
  const EvalModel original{m, w};
  const PredictionSums same = evaluate_text(original, &original, ids, kTokens, 8);
  CHECK(same.predicted == 6);
  CHECK(same.agreed == 6);
  CHECK(same.kl == 0.0);
  CHECK(same.mean_loss() == doctest::Approx(mean_loss(next_token_losses(run_model(m, kTokens).logits, ids))));
  // Windows of 3 tokens sharing their boundary token: 0-2, 2-4 and 4-6, each predicting 2, every token 1..6 once.
  const PredictionSums windows = evaluate_text(original, nullptr, ids, kTokens, 3);
  CHECK(windows.predicted == 6);
  CHECK(window_count(7, 3) == 3);
  CHECK(window_count(65, 64) == 2);
  CHECK(window_count(64, 64) == 1);
  CHECK(window_count(127, 64) == 2);
  CHECK(window_count(128, 64) == 3);
  double expected = 0;
  for (const int first : {0, 2, 4}) {
    const std::vector<std::string> piece(kTokens.begin() + first, kTokens.begin() + first + 3);
    const std::vector<int> piece_ids(ids.begin() + first, ids.begin() + first + 3);
    expected += mean_loss(next_token_losses(run_model(m, piece).logits, piece_ids)) * 2;
  }
  CHECK(windows.loss == doctest::Approx(expected).epsilon(1e-12));
  // A window of one token would predict nothing: 4 tokens in windows of 3 are 0-2 and 2-3, predicting 3.
  const std::vector<int> four(ids.begin(), ids.begin() + 4);
  const std::vector<std::string> four_pieces(kTokens.begin(), kTokens.begin() + 4);
  CHECK(evaluate_text(original, nullptr, four, four_pieces, 3).predicted == 3);
}

TEST_CASE("kv conversion: a RoPE model as mla expands every cached latent into keys again, 2 d_c H d FLOPs each") {
  const Model qwen = small_model(true), gpt = small_model(false);
  // 4 heads of 2, latent 3, both layers: 2 x 3 x 8 = 48 FLOPs a cached token and layer; 96 for two layers.
  const KvConversion both{.to = KvTarget::Mla, .latent_dim = 3, .layers = {0, 1}};
  CHECK(key_reexpansion_flops(converted_model(qwen, both), 1) == 96);
  CHECK(key_reexpansion_flops(converted_model(qwen, both), 100) == 9600);
  CHECK(key_reexpansion_flops(converted_model(qwen, {.to = KvTarget::Mla, .latent_dim = 3, .layers = {1}}), 10) == 480);
  // Learned positions absorb W_UK; gqa keeps its keys; the model as shipped expands nothing.
  CHECK(key_reexpansion_flops(converted_model(gpt, both), 100) == 0);
  CHECK(key_reexpansion_flops(converted_model(qwen, {.to = KvTarget::Gqa, .kv_heads = 1, .layers = {0, 1}}), 100) == 0);
  CHECK(key_reexpansion_flops(qwen, 100) == 0);
}
