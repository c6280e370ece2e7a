// Decoding token by token through a KV cache reproduces the full causal trace, for every variant, while the
// cache grows by exactly the per-token size the variant promises.
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli.h"
#include "core/decode.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

Scenario six_tokens(Variant v) {
  Scenario s;
  s.name = "six tokens";
  s.input = {{"a", "b", "c", "d", "e", "f"},
             mat({{1, 0, 2}, {0, 1, -1}, {2, 1, 0}, {-1, 3, 1}, {0.5, -0.5, 1}, {0, 0, 1}})};
  s.attention.variant = v;
  s.attention.heads = 4;
  s.attention.kv_heads = v == Variant::Gqa ? 2 : v == Variant::Mqa ? 1 : 4;
  s.attention.head_dim = 2;
  s.attention.latent_dim = v == Variant::Mla ? 3 : 0;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  s.seed = 5;
  return s;
}

void check_decode_matches_trace(const Scenario& s) {
  const DecodeTrace d = decode(s);
  const Trace t = compute_trace(s);
  REQUIRE(d.steps.size() == t.tokens.size());
  for (const DecodeStep& step : d.steps) {
    CAPTURE(step.t);
    CHECK(step.token == t.tokens[step.t]);
    // Relative to the largest output: a linear kernel's small Z can make outputs of 100 and more.
    const double tol = 1e-12 * std::max(1.0, t.output.cwiseAbs().maxCoeff());
    check_matrix(step.output, t.output.row(step.t), tol, "output of step t = row t of the full trace");
    REQUIRE(step.weights.size() == t.heads.size());
    for (std::size_t h = 0; h < t.heads.size(); ++h) {
      // Relative too: a linear kernel's weights of 1,000 and more (Z near 0) differ in their last bits with the
      // order of the sums, which depends on the CPU's vector width.
      const Eigen::RowVectorXd row = t.heads[h].weights().row(step.t).head(step.t + 1);
      check_matrix(step.weights[h], row, 1e-12 * std::max(1.0, row.cwiseAbs().maxCoeff()), "weights over the cache");
    }
  }
}

}  // namespace

TEST_CASE("the cat sat: decoding reproduces the causal reference row by row") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::None;  // decoding is causal anyway
  const DecodeTrace d = decode(s);
  REQUIRE(d.steps.size() == 3);
  check_matrix(d.steps[0].output, mat({{1, 2, 3}}), 1e-6, "step 0");
  check_matrix(d.steps[1].output, mat({{1.996901, 7.981405, 0.009298}}), 1e-6, "step 1");
  check_matrix(d.steps[2].output, mat({{1.998519, 7.690910, 0.454751}}), 1e-6, "step 2");
  CHECK(d.elements_per_token == 6);
  CHECK(d.steps[0].cache_elements == 6);
  CHECK(d.steps[2].cache_elements == 18);
  CHECK(d.steps[2].cache_tokens == 3);
  check_matrix(d.cache.k[0], mat({{0, 2, 1}, {4, 2, 2}, {2, 3, 2}}), 0.0, "cached K");
  check_matrix(d.cache.v[0], mat({{1, 2, 3}, {2, 8, 0}, {2, 6, 3}}), 0.0, "cached V");
}

TEST_CASE("step t equals row t of the full causal trace, for every variant") {
  for (Variant v : {Variant::Mha, Variant::Gqa, Variant::Mqa, Variant::Mla}) {
    CAPTURE(to_string(v));
    check_decode_matches_trace(six_tokens(v));
    Scenario no_wo = six_tokens(v);
    no_wo.attention.output_projection = false;
    check_decode_matches_trace(no_wo);
    Scenario window = six_tokens(v);
    window.attention.mask = MaskKind::SlidingWindow;
    window.attention.window = 2;
    check_decode_matches_trace(window);
    Scenario linear = six_tokens(v);
    linear.attention.kernel = Kernel::Linear;
    check_decode_matches_trace(linear);
  }
  Scenario q_latent = six_tokens(Variant::Mla);
  q_latent.attention.query_latent_dim = 2;
  check_decode_matches_trace(q_latent);
}

TEST_CASE("step t equals row t with positions of every kind and sparse attention, for every variant") {
  for (Variant v : {Variant::Mha, Variant::Gqa, Variant::Mqa, Variant::Mla})
    for (Positions p : {Positions::None, Positions::Sinusoidal, Positions::Learned, Positions::Rope})
      for (int top_k : {0, 1, 3}) {
        CAPTURE(to_string(v));
        CAPTURE(to_string(p));
        CAPTURE(top_k);
        Scenario s = six_tokens(v);
        s.input.embeddings.row(5) = s.input.embeddings.row(0);  // a repeated token: ties for the indexer
        s.attention.positions = p;
        s.attention.max_positions = p == Positions::Learned ? 8 : 0;
        s.attention.rope_dim = v == Variant::Mla && p == Positions::Rope ? 2 : 0;
        if (top_k > 0) s.attention.sparse = SparseConfig{top_k, 2, 3};
        check_decode_matches_trace(s);
        s.attention.query_latent_dim = v == Variant::Mla ? 2 : 0;
        s.attention.kernel = Kernel::Linear;
        check_decode_matches_trace(s);
      }
}

TEST_CASE("cross-attention decoding with rope and sparse attention: the context is turned by its own positions") {
  for (Variant v : {Variant::Mha, Variant::Mla}) {
    CAPTURE(to_string(v));
    Scenario s = load_scenario_file(asset("cross_attention.json"));
    s.weights = {};
    s.attention.variant = v;
    s.attention.head_dim = 2;
    s.attention.latent_dim = v == Variant::Mla ? 3 : 0;
    s.attention.positions = Positions::Rope;
    s.attention.rope_dim = v == Variant::Mla ? 4 : 0;
    s.attention.sparse = SparseConfig{2, 1, 2};
    const Trace t = compute_trace(s);
    const DecodeTrace d = decode(s);
    for (const DecodeStep& step : d.steps) {
      CAPTURE(step.t);
      check_matrix(step.output, t.output.row(step.t), 1e-12, "output row");
      check_matrix(step.selected, t.indexer->selected.row(step.t), 0.0, "the same selection");
    }
    if (v == Variant::Mla) check_matrix(d.cache.k_r, t.heads[0].k_r, 1e-15, "cached k_r is turned");
    else check_matrix(d.cache.k[0], t.heads[0].k_rope, 1e-15, "cached keys are turned");
  }
}

TEST_CASE("the cache holds exactly what the variant promises, and grows by it every step") {
  const std::pair<Variant, std::int64_t> per_token[] = {
      {Variant::Mha, 2 * 4 * 2}, {Variant::Gqa, 2 * 2 * 2}, {Variant::Mqa, 2 * 1 * 2}, {Variant::Mla, 3}};
  for (const auto& [v, elements] : per_token) {
    const std::string variant(to_string(v));  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(variant);
    const Scenario s = six_tokens(v);
    const DecodeTrace d = decode(s);
    CHECK(d.elements_per_token == elements);
    CHECK(cache_elements_per_token(s.attention) == elements);
    for (const DecodeStep& step : d.steps) CHECK(step.cache_elements == elements * (step.t + 1));
    const Trace t = compute_trace(s);
    if (v == Variant::Mla) {
      CHECK(d.cache.k.empty());
      check_matrix(d.cache.latent, t.latent, 1e-15, "the cached latent is X W_DKV");
    } else {
      REQUIRE(d.cache.k.size() == t.kv_heads.size());
      for (std::size_t g = 0; g < t.kv_heads.size(); ++g) {
        check_matrix(d.cache.k[g], t.kv_heads[g].k, 1e-15, "cached k");
        check_matrix(d.cache.v[g], t.kv_heads[g].v, 1e-15, "cached v");
      }
    }
  }
}

TEST_CASE("cross-attention decoding: the context's cache is computed once, and step t is row t of the full trace") {
  for (Variant v : {Variant::Mha, Variant::Gqa, Variant::Mla}) {
    CAPTURE(to_string(v));
    Scenario s = load_scenario_file(asset("cross_attention.json"));
    if (v == Variant::Gqa) {
      s.attention.variant = Variant::Gqa;
      s.attention.kv_heads = 1;
    } else if (v == Variant::Mla) {
      s.attention.variant = Variant::Mla;
      s.attention.latent_dim = 3;
    }
    s.weights = {};
    const Trace t = compute_trace(s);
    const DecodeTrace d = decode(s);
    CHECK(d.cross_attention);
    REQUIRE(d.steps.size() == 2);  // "le", "chat": the decoder's tokens
    for (const DecodeStep& step : d.steps) {
      CAPTURE(step.t);
      CHECK(step.cache_tokens == 3);  // the whole context from the first step on; nothing appended
      CHECK(step.cache_elements == 3 * d.elements_per_token);
      check_matrix(step.output, t.output.row(step.t), 1e-12, "output row");
      for (std::size_t h = 0; h < step.weights.size(); ++h)
        check_matrix(step.weights[h], t.heads[h].weights().row(step.t), 1e-12, "weights row");
    }
    CHECK(d.cache.tokens == 3);
    if (v == Variant::Mla) {
      check_matrix(d.cache.latent, t.latent, 1e-15, "cached latent = X_kv W_DKV");
    } else {
      for (std::size_t g = 0; g < t.kv_heads.size(); ++g) {
        check_matrix(d.cache.k[g], t.kv_heads[g].k, 1e-15, "cached k = X_kv W_K");
        check_matrix(d.cache.v[g], t.kv_heads[g].v, 1e-15, "cached v = X_kv W_V");
      }
    }
  }
}

TEST_CASE("cross-attention decoding keeps the scenario's mask over the context") {
  Scenario s = load_scenario_file(asset("cross_attention.json"));
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 0, 1}, {0, 1, 1}});
  const Trace t = compute_trace(s);
  const DecodeTrace d = decode(s);
  CHECK(d.steps[0].weights[0](0, 1) == 0.0);  // "le" may not look at "cat"
  CHECK(d.steps[1].weights[1](0, 0) == 0.0);  // "chat" may not look at "the"
  for (const DecodeStep& step : d.steps) check_matrix(step.output, t.output.row(step.t), 1e-12, "output row");
}

TEST_CASE("attention-lab decode: text and JSON") {
  std::ostringstream out, err;
  REQUIRE(cli::run_cli(std::vector<std::string>{"decode", asset("the_cat_sat.json")}, out, err) == 0);
  CHECK(out.str().find("step 1  'cat'  cache: 2 tokens, 12 numbers\n"
                       "  appended to KV head 0:  k = 4.0000  2.0000  2.0000   v = 2.0000  8.0000  0.0000\n"
                       "  weights of head 0:  the 0.0031  cat 0.9969\n"
                       "  output:            1.9969  7.9814  0.0093\n") != std::string::npos);
  std::ostringstream json_out;
  REQUIRE(cli::run_cli(std::vector<std::string>{"decode", asset("the_cat_sat.json"), "--json", "--variant", "mla",
                                                "--latent-dim", "2"},
                       json_out, err) == 0);
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  REQUIRE(j["steps"].size() == 3);
  CHECK(j["steps"][2]["t"] == 2);
  CHECK(j["steps"][2]["token"] == "sat");
  CHECK(j["steps"][2]["output"].size() == 3);
  CHECK(j["steps"][2]["cache_elements"] == 6);  // 3 tokens x latent_dim 2
  CHECK(j["elements_per_token"] == 2);
  CHECK(j["cache"]["latent"].size() == 3);
  std::ostringstream cross_out, cross_err;
  REQUIRE(cli::run_cli(std::vector<std::string>{"decode", asset("cross_attention.json"), "--json"}, cross_out,
                       cross_err) == 0);
  const nlohmann::json c = nlohmann::json::parse(cross_out.str());
  CHECK(c["cross_attention"] == true);
  CHECK(c["steps"].size() == 2);
  CHECK(c["steps"][0]["cache_tokens"] == 3);
}

TEST_CASE("decode_step: one step with a cache of t tokens is decode()'s step t, for every variant") {
  for (Variant v : {Variant::Mha, Variant::Gqa, Variant::Mqa, Variant::Mla}) {
    CAPTURE(to_string(v));
    const Scenario s = six_tokens(v);
    const DecodeTrace d = decode(s);
    const Weights w = resolve_weights(s);
    const Matrix mask = decode_mask(s.attention, s.n_q());
    for (int t = 0; t < s.n_q(); ++t) {
      CAPTURE(t);
      // A cache holding the first t tokens, with no room to spare: the step must grow it.
      KvCache cache = make_kv_cache(s.attention, t);
      if (v == Variant::Mla) cache.latent = d.cache.latent.topRows(t);
      for (std::size_t g = 0; g < cache.k.size(); ++g) {
        cache.k[g] = d.cache.k[g].topRows(t);
        cache.v[g] = d.cache.v[g].topRows(t);
      }
      cache.tokens = t;
      // mla absorbs for this step alone when given nothing: the same numbers.
      const DecodeStep step = decode_step(s.attention, w, cache, s.input.embeddings.row(t), mask.row(t).head(t + 1));
      CHECK(step.t == t);
      CHECK(step.cache_tokens == t + 1);
      CHECK(step.cache_elements == d.steps[t].cache_elements);
      CHECK(cache.tokens == t + 1);
      check_matrix(step.output, d.steps[t].output, 0.0, "output of step t");
      REQUIRE(step.weights.size() == d.steps[t].weights.size());
      for (std::size_t h = 0; h < step.weights.size(); ++h) {
        check_matrix(step.weights[h], d.steps[t].weights[h], 0.0, "weights of step t");
        CHECK(step.status[h] == d.steps[t].status[h]);
      }
      if (v == Variant::Mla) {
        check_matrix(cache.latent.topRows(t + 1), d.cache.latent.topRows(t + 1), 0.0, "appended latent");
      } else {
        for (std::size_t g = 0; g < cache.k.size(); ++g) {
          check_matrix(cache.k[g].topRows(t + 1), d.cache.k[g].topRows(t + 1), 0.0, "appended k");
          check_matrix(cache.v[g].topRows(t + 1), d.cache.v[g].topRows(t + 1), 0.0, "appended v");
        }
      }
    }
  }
}
