// GQA, MQA and MLA through the one engine: head sharing, the equivalences between variants, and MLA's
// absorbed form agreeing with the explicit one.
#include "helpers.h"

#include "core/io/trace_json.h"

using namespace attn;
using namespace attn::test;

namespace {

// d_model 3, four heads of dimension 2: non-square everywhere.
Scenario four_heads(Variant v, int kv_heads) {
  Scenario s;
  s.name = "four heads";
  s.input = {{"a", "b", "c", "d", "e"}, mat({{1, 0, 2}, {0, 1, -1}, {2, 1, 0}, {-1, 3, 1}, {0.5, -0.5, 1}})};
  s.attention.variant = v;
  s.attention.heads = 4;
  s.attention.kv_heads = kv_heads;
  s.attention.head_dim = 2;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  s.seed = 11;
  return s;
}

Scenario mla(int latent_dim, int query_latent_dim) {
  Scenario s = four_heads(Variant::Mla, 4);
  s.attention.latent_dim = latent_dim;
  s.attention.query_latent_dim = query_latent_dim;
  return s;
}

}  // namespace

TEST_CASE("kv_head_for: query head h reads KV head h / (H/G)") {
  AttentionConfig a;
  a.heads = 8;
  a.variant = Variant::Gqa;
  a.kv_heads = 2;
  for (int h = 0; h < 8; ++h) CHECK(kv_head_for(a, h) == h / 4);
  a.variant = Variant::Mqa;
  for (int h = 0; h < 8; ++h) CHECK(kv_head_for(a, h) == 0);
  a.variant = Variant::Mha;
  for (int h = 0; h < 8; ++h) CHECK(kv_head_for(a, h) == h);
}

TEST_CASE("GQA: W_K and W_V have G*d columns, each KV head is listed once and shared by its group") {
  const Trace t = compute_trace(four_heads(Variant::Gqa, 2));
  CHECK(t.weights.W_K->rows() == 3);
  CHECK(t.weights.W_K->cols() == 4);  // G*d = 2*2, not H*d = 8
  CHECK(t.K.cols() == 4);
  REQUIRE(t.kv_heads.size() == 2);
  const int expected_kv[] = {0, 0, 1, 1};
  for (int h = 0; h < 4; ++h) {
    CAPTURE(h);
    CHECK(t.heads[h].kv_head == expected_kv[h]);
    check_matrix(t.heads[h].k, t.kv_heads[expected_kv[h]].k, 0.0, "k is the shared KV head's");
    check_matrix(t.heads[h].v, t.kv_heads[expected_kv[h]].v, 0.0, "v is the shared KV head's");
  }
  check_matrix(t.kv_heads[1].k, t.K.middleCols(2, 2), 0.0, "KV head 1 owns columns 2..3 of K");
  CHECK_FALSE(t.heads[0].weights().isApprox(t.heads[1].weights()));  // same keys, different queries
}

TEST_CASE("GQA with G = H and the same weights equals MHA") {
  Scenario gqa = four_heads(Variant::Gqa, 4);
  Scenario mha = four_heads(Variant::Mha, 4);
  const Trace g = compute_trace(gqa);
  const Trace m = compute_trace(mha);
  check_matrix(*g.weights.W_K, *m.weights.W_K, 0.0, "same seeded W_K");
  check_matrix(g.output, m.output, 0.0, "output");
  for (int h = 0; h < 4; ++h) check_matrix(g.heads[h].weights(), m.heads[h].weights(), 0.0, "weights");
}

TEST_CASE("GQA with G = 1 equals MQA") {
  const Trace g = compute_trace(four_heads(Variant::Gqa, 1));
  const Trace q = compute_trace(four_heads(Variant::Mqa, 1));
  REQUIRE(q.kv_heads.size() == 1);
  for (const HeadTrace& h : q.heads) CHECK(h.kv_head == 0);
  check_matrix(g.output, q.output, 0.0, "output");
  CHECK(q.weights.W_K->cols() == 2);
}

TEST_CASE("MLA: keys and values are expanded from the cached latent") {
  const Trace t = compute_trace(mla(3, 0));
  CHECK(t.latent.rows() == 5);
  CHECK(t.latent.cols() == 3);
  // Not bit for bit: Eigen may sum a product in another order depending on how it is written.
  check_matrix(t.latent, t.x * *t.weights.W_DKV, 1e-15, "latent = X W_DKV");
  check_matrix(t.K, t.latent * *t.weights.W_UK, 1e-15, "K = latent W_UK");
  check_matrix(t.V, t.latent * *t.weights.W_UV, 1e-15, "V = latent W_UV");
  CHECK(t.weights.W_UK->rows() == 3);
  CHECK(t.weights.W_UK->cols() == 8);
  CHECK_FALSE(t.weights.W_K.has_value());
  CHECK_FALSE(t.weights.W_DQ.has_value());
  CHECK(t.query_latent.size() == 0);
  CHECK(t.kv_heads.size() == 4);  // each head expands its own K, V from the one latent
}

TEST_CASE("MLA: the absorbed form agrees with the explicit form to 1e-9") {
  struct Case {
    int latent, query_latent;
    bool w_o;
    MaskKind mask;
  };
  for (const Case& c : {Case{3, 0, true, MaskKind::Causal}, Case{2, 2, true, MaskKind::None},
                        Case{5, 1, false, MaskKind::Causal}, Case{1, 0, false, MaskKind::None}}) {
    CAPTURE(c.latent);
    CAPTURE(c.query_latent);
    CAPTURE(c.w_o);
    Scenario s = mla(c.latent, c.query_latent);
    s.attention.output_projection = c.w_o;
    s.attention.mask = c.mask;
    const Trace t = compute_trace(s);
    REQUIRE(t.absorbed.has_value());
    const AbsorbedMla& m = *t.absorbed;
    const int d_q = c.query_latent > 0 ? c.query_latent : 3;
    for (int h = 0; h < 4; ++h) {
      CHECK(m.W_UQK[h].rows() == d_q);
      CHECK(m.W_UQK[h].cols() == c.latent);
      CHECK(m.queries[h].rows() == t.n_q());
      CHECK(m.queries[h].cols() == c.latent);
      check_matrix(m.scores[h], t.heads[h].scores(), 1e-9, "absorbed scores");
    }
    CHECK(m.latent_output.cols() == 4 * c.latent);
    CHECK(m.W_LO.rows() == 4 * c.latent);
    CHECK(m.W_LO.cols() == (c.w_o ? 3 : 8));
    check_matrix(m.output, t.output, 1e-9, "absorbed output");
  }
}

TEST_CASE("MLA with a query latent: Q = (X W_DQ) W_UQ") {
  const Trace t = compute_trace(mla(3, 2));
  CHECK_FALSE(t.weights.W_Q.has_value());
  check_matrix(t.query_latent, t.x * *t.weights.W_DQ, 0.0, "query_latent");
  check_matrix(t.Q, t.query_latent * *t.weights.W_UQ, 0.0, "Q");
  CHECK(t.weights.W_UQ->rows() == 2);
  CHECK(t.weights.W_UQ->cols() == 8);
}

TEST_CASE("variants in the JSON trace: kv_heads once, kv_head per head, latent for MLA") {
  const nlohmann::ordered_json g = trace_to_json(compute_trace(four_heads(Variant::Gqa, 2)));
  CHECK(g["kv_heads"].size() == 2);
  CHECK(g["kv_heads"][1]["k"].size() == 5);
  CHECK(g["kv_heads"][1]["k"][0].size() == 2);
  CHECK(g["heads"][3]["kv_head"] == 1);
  CHECK(g["attention"]["variant"] == "gqa");
  CHECK(g["attention"]["kv_heads"] == 2);
  CHECK_FALSE(g.contains("latent"));
  const nlohmann::ordered_json m = trace_to_json(compute_trace(mla(3, 2)));
  CHECK(m["latent"].size() == 5);
  CHECK(m["latent"][0].size() == 3);
  CHECK(m["query_latent"][0].size() == 2);
  CHECK(m["weights"].contains("W_DKV"));
  CHECK_FALSE(m["weights"].contains("W_K"));
  CHECK(m["absorbed"]["heads"].size() == 4);
}

TEST_CASE("variant configuration errors name the field") {
  Scenario s = four_heads(Variant::Gqa, 3);
  CHECK_THROWS_WITH_AS(compute_trace(s), "attention.kv_heads: must divide heads (4) but found 3", InputError);
  s = four_heads(Variant::Gqa, 8);
  CHECK_THROWS_WITH_AS(compute_trace(s), "attention.kv_heads: must be <= 4 (found 8)", InputError);
  s = mla(0, 0);
  CHECK_THROWS_WITH_AS(compute_trace(s), "attention.latent_dim: must be >= 1 (found 0)", InputError);
  s = mla(2, 0);
  s.weights.W_K = Matrix::Zero(3, 8);
  CHECK_THROWS_WITH_AS(
      compute_trace(s),
      "weights.W_K: not used by variant mla without query_latent_dim (it uses W_Q, W_O, W_DKV, W_UK, W_UV)",
      InputError);
  s = four_heads(Variant::Gqa, 2);
  s.weights.W_V = Matrix::Zero(3, 8);
  CHECK_THROWS_WITH_AS(compute_trace(s), "weights.W_V: expected 4 columns (kv_heads x head_dim = 2 x 2) but found 8",
                       InputError);
}

TEST_CASE("variant keys in scenario files") {
  const std::string head =
      R"({"tokens": ["a", "b"], "embeddings": [[1, 2], [3, 4]], "attention": {"heads": 4, "head_dim": 1, )";
  const Scenario g = parse_scenario(head + R"("variant": "gqa", "kv_heads": 2}})");
  CHECK(g.attention.variant == Variant::Gqa);
  CHECK(g.attention.kv_heads == 2);
  const Scenario m = parse_scenario(head + R"("variant": "mla", "latent_dim": 3, "query_latent_dim": 2}})");
  CHECK(m.attention.latent_dim == 3);
  CHECK(m.attention.query_latent_dim == 2);
  const std::pair<std::string, std::string> bad[] = {
      {R"("variant": "gqa"}})", "attention.kv_heads: missing (required)"},
      {R"("variant": "gqa", "kv_heads": 3}})", "attention.kv_heads: must divide heads (4) but found 3"},
      {R"("variant": "mha", "kv_heads": 2}})",
       "attention.kv_heads: mha has one KV head per query head, so 4, but found 2 (variant gqa shares KV heads in "
       "groups)"},
      {R"("variant": "mqa", "kv_heads": 2}})",
       "attention.kv_heads: mqa has a single KV head, so 1, but found 2 (variant gqa shares KV heads in groups)"},
      {R"("variant": "mla"}})", "attention.latent_dim: missing (required)"},
      {R"("variant": "mla", "latent_dim": 0}})", "attention.latent_dim: must be >= 1 (found 0)"},
      {R"("variant": "mla", "latent_dim": 2, "kv_heads": 4}})",
       "attention.kv_heads: only used by variant mha, gqa and mqa (this is mla)"},
      {R"("variant": "gqa", "kv_heads": 2, "latent_dim": 4}})",
       "attention.latent_dim: only used by variant mla (this is gqa)"},
  };
  for (const auto& [tail, message] : bad) {
    const auto captured = tail;  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(captured);
    CHECK_THROWS_WITH_AS(parse_scenario(head + tail), message.c_str(), InputError);
  }
}
