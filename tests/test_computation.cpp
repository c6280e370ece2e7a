// What the views read, computed from the document (ui/logic/computation, recompute): big documents on the
// worker thread while the views keep the last complete trace, the newest edit wins, stale results are
// dropped, and the weights edits start from are the document's.
#include <functional>
#include <vector>
#include "app/gui/soak.h"
#include "core/edits.h"
#include "core/init.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/app_state.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {

// 8 heads of 8 over d_model 16: 128 n^2 multiply-adds of attention, and 3 n 1024 of projections.
Scenario wide(int n) {
  Scenario s = cat_sat();
  s.input.embeddings = seeded_matrix(3, SeedStream::Embeddings, 3, 16) * 0.1;
  s.weights = {};
  s.attention.heads = 8;
  s.attention.head_dim = 8;
  s.attention.mask = MaskKind::Causal;
  set_token_count(s, n);
  return s;
}

void check_same_trace(const Trace& shown, const Scenario& document) {
  CHECK(gui::compare_traces(shown, compute_trace(document)) == "");  // every intermediate, bit for bit
}

}  // namespace

TEST_CASE("the work a document takes decides where it is computed") {
  // 2 H N_Q N_KV d = 54, and three 4x3 projections of 3 tokens = 108; every weight given.
  CHECK(work_estimate(cat_sat()) == 162);
  CHECK_FALSE(compute_in_background(cat_sat()));
  // The scale scenario at 3 tokens: 2*8*3*3*64 = 9,216 of attention, four 512x512 projections of 3 tokens
  // (3,145,728) and four 512x512 weights drawn from the seed (4 x 1,048,576).
  const Scenario scale = load_scenario_file(std::string(ATTN_ASSETS_DIR) + "/scenarios/scale.json");
  CHECK(work_estimate(scale) == 9216 + 3145728 + 4194304);
  CHECK(compute_in_background(scale));
  CHECK_FALSE(compute_in_background(wide(110)));
  CHECK(compute_in_background(wide(130)));
}

TEST_CASE("a big edit is computed on the worker: the views keep the last complete trace until it is done") {
  AppState state(wide(190), "");
  CHECK(compute_in_background(state.scenario()));
  CHECK_FALSE(state.computing());
  REQUIRE(state.edit([](Scenario& d) { set_token_count(d, 200); }));
  CHECK(state.computing());              // nothing is taken before poll()
  CHECK(state.trace().n_q() == 190);     // the previous trace is still shown
  CHECK(state.scenario().n_q() == 200);  // the document already has the edit
  state.wait();
  CHECK_FALSE(state.computing());
  CHECK(state.shown_ticket() == state.ticket());
  check_same_trace(state.trace(), state.scenario());
  CHECK(state.last_recompute_seconds() > 0.0);
}

TEST_CASE("the newest edit wins: a burst of big edits ends on the last one") {
  AppState state(wide(190), "");
  for (int i = 0; i < 6; ++i) {
    const double v = 0.1 * i;
    REQUIRE(state.edit([v](Scenario& d) { d.input.embeddings(0, 0) = v; }));
    const std::uint64_t shown = state.shown_ticket();
    state.poll();  // a frame in between: it may show an intermediate result, never an older one
    CHECK(state.shown_ticket() >= shown);
  }
  state.wait();
  CHECK(state.shown_ticket() == state.ticket());
  CHECK(state.trace().x(0, 0) == 0.5);
  check_same_trace(state.trace(), state.scenario());
}

TEST_CASE("a stale result is dropped: undo back to a small document while the big one computes") {
  AppState state(wide(3), "");
  CHECK_FALSE(compute_in_background(state.scenario()));
  REQUIRE(state.edit([](Scenario& d) { set_token_count(d, 400); }));
  CHECK(state.computing());
  REQUIRE(state.undo());  // small again: computed at once
  CHECK_FALSE(state.computing());
  CHECK(state.trace().n_q() == 3);
  state.wait();  // the worker finishes the 400-token document, and poll meets its result: a revision that is gone
  CHECK(state.trace().n_q() == 3);
  CHECK_FALSE(state.computing());
  check_same_trace(state.trace(), state.scenario());
}

TEST_CASE("switching the variant while the shown trace is an older revision's uses the document's own weights") {
  Scenario s = load_scenario_file(asset("the_lazy_dog.json"));  // 4 heads of 2
  const Weights shown = compute_trace(s).weights;
  set_head_shape(s, 2, 3);  // the document moved on: 2 heads of 3, weights redrawn
  Scenario from_stale = s, from_own = s;
  switch_variant(from_stale, shown, Variant::Gqa, 1, 0, 0);
  switch_variant(from_own, compute_trace(s).weights, Variant::Gqa, 1, 0, 0);
  CHECK(scenario_to_text(from_stale) == scenario_to_text(from_own));
  CHECK_NOTHROW(compute_trace(from_stale));
}

TEST_CASE("while a big edit computes, edits that start from weights start from the document's, not the shown trace's") {
  AppState state(wide(190), "");
  REQUIRE(state.edit(reseed_weights));  // every weight redrawn from the next seed, computed on the worker
  REQUIRE(state.computing());
  const Weights doc = *state.document_weights();
  check_matrix(*doc.W_Q, *resolve_weights(state.scenario()).W_Q, 0.0, "W_Q of the document");
  CHECK((*doc.W_Q - *state.trace().weights.W_Q).cwiseAbs().maxCoeff() > 0.0);  // the shown one is the old seed's
  state.wait();
  check_matrix(*state.document_weights()->W_Q, *state.trace().weights.W_Q, 0.0, "once shown, the trace's");
}

TEST_CASE(
    "while edits of the embeddings compute, the document's weights are drawn once, and again when the seed changes") {
  AppState state(wide(190), "");
  const auto nudge = [](Scenario& d) { d.input.embeddings(0, 0) += 0.1; };
  REQUIRE(state.edit(nudge));
  REQUIRE(state.computing());
  const std::shared_ptr<const Weights> first = state.document_weights();
  check_matrix(*first->W_Q, *state.trace().weights.W_Q, 0.0, "W_Q, as the shown trace's (same seed)");
  REQUIRE(state.edit(nudge));
  CHECK(state.document_weights() == first);  // the same object: nothing drawn again
  REQUIRE(state.edit(reseed_weights));
  REQUIRE(state.computing());
  const std::shared_ptr<const Weights> reseeded = state.document_weights();
  CHECK(reseeded != first);
  check_matrix(*reseeded->W_Q, *resolve_weights(state.scenario()).W_Q, 0.0, "W_Q of the new seed");
  CHECK((*reseeded->W_Q - *first->W_Q).cwiseAbs().maxCoeff() > 0.0);
  CHECK(*first->W_Q == *state.trace().weights.W_Q);  // a view still holding the old ones reads them intact
}

TEST_CASE(
    "compute_trace_with_weights and decode_with_weights: the same, bit for bit, as drawing them -- weights that do not "
    "fit are refused") {
  const Scenario s = wide(40);  // every weight drawn from the seed
  const Weights drawn = resolve_weights(s);
  CHECK(gui::compare_traces(compute_trace_with_weights(s, drawn), compute_trace(s)).empty());
  const DecodeTrace kept = decode_with_weights(s, drawn), fresh = decode(s);
  REQUIRE(kept.steps.size() == 40);
  for (std::size_t t = 0; t < kept.steps.size(); ++t) CHECK(kept.steps[t].output == fresh.steps[t].output);
  CHECK(kept.cache.k[0] == fresh.cache.k[0]);
  CHECK_THROWS_AS(decode_with_weights(s, Weights{}), std::invalid_argument);
  Weights missing = drawn;
  missing.W_V.reset();
  CHECK_THROWS_WITH_AS(compute_trace_with_weights(s, missing), "the resolved weights lack W_V as the scenario needs it",
                       std::invalid_argument);
  Weights narrow = drawn;
  narrow.W_Q = Matrix::Zero(16, 63);
  CHECK_THROWS_AS(compute_trace_with_weights(s, narrow), std::invalid_argument);
}

TEST_CASE("same_resolved_weights: embeddings and mask do not matter -- seed, shapes, variant and given weights do") {
  const Scenario a = wide(4);
  Scenario b = a;
  b.input.embeddings(1, 1) = 0.7;
  b.attention.mask = MaskKind::None;
  CHECK(same_resolved_weights(a, b));
  for (const auto& change : std::vector<std::function<void(Scenario&)>>{
           [](Scenario& s) { ++s.seed; }, [](Scenario& s) { s.attention.heads = 4; },
           [](Scenario& s) { s.attention.output_projection = !s.attention.output_projection; },
           [](Scenario& s) { s.attention.variant = Variant::Mqa; },
           [](Scenario& s) { s.weights.W_Q = Matrix::Zero(16, 64); }}) {
    Scenario c = a;
    change(c);
    CHECK_FALSE(same_resolved_weights(a, c));
  }
  Scenario given = a, other = a;
  given.weights.W_Q = other.weights.W_Q = Matrix::Zero(16, 64);
  CHECK(same_resolved_weights(given, other));
  other.weights.W_Q =
      with_cell(*other.weights.W_Q, 15, 63, 0.1);  // the last cell: a comparison that stops early would miss it
  CHECK_FALSE(same_resolved_weights(given, other));
}

TEST_CASE("a sparse document also computes its dense output, given indexer weights and all") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  s.attention.sparse = SparseConfig{1, 1, 2};
  s.weights.W_KI = Matrix::Constant(4, 2, 0.5);  // given: the dense version must leave it out
  const Computed c = compute_all(s, 1);
  REQUIRE(c.dense_output);
  Scenario dense = s;
  dense.attention.sparse.reset();
  dense.weights.W_KI.reset();
  check_matrix(*c.dense_output, compute_trace(dense).output, 0.0, "the dense output");
  CHECK_FALSE(compute_all(cat_sat(), 2).dense_output);
}

TEST_CASE("an MLA document also computes, for every head, its scores with the expanded keys turned") {
  const auto mla = [](int heads, int head_dim) {
    Scenario s = cat_sat();
    s.weights = {};  // drawn from the seed at these sizes
    s.attention.heads = heads;
    s.attention.head_dim = head_dim;
    switch_variant(s, resolve_weights(s), Variant::Mla, heads, 2, 0);
    return s;
  };
  const Scenario s = mla(2, 2);
  const Computed c = compute_all(s, 1);
  REQUIRE(c.naive_rope);
  REQUIRE(c.naive_rope->size() == 2);
  for (int h = 0; h < 2; ++h) {
    const NaiveRopeMla expected = naive_rope_absorption(*c.trace, h);
    check_matrix((*c.naive_rope)[h].explicit_scores, expected.explicit_scores, 0.0, "explicit scores");
    check_matrix((*c.naive_rope)[h].absorbed_scores, expected.absorbed_scores, 0.0, "absorbed scores");
    CHECK((*c.naive_rope)[h].explicit_scores.rows() == 3);
  }
  CHECK_FALSE(compute_all(cat_sat(), 2).naive_rope);  // not MLA
  CHECK_FALSE(compute_all(mla(1, 3), 3).naive_rope);  // an odd head_dim: RoPE turns pairs
  Scenario longer = mla(2, 2);
  set_token_count(longer, kMaxDecodeTokens + 1);
  CHECK_FALSE(compute_all(longer, 4).naive_rope);  // as the shift experiment, up to kMaxDecodeTokens
}
