// Big documents are recomputed on a worker thread: the views keep the last complete trace, the newest
// edit wins, stale results are dropped. And the scale slider's edit, and the undo history's memory bound.
#include <functional>
#include <limits>
#include <vector>

#include "app/gui/soak.h"
#include "core/init.h"
#include "core/trace_bytes.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "core/edits.h"

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

TEST_CASE("set_token_count grows with seeded rows and fresh labels, and shrinks from the end") {
  Scenario s = cat_sat();
  s.input.tokens[1] = "t4";  // a label in use is skipped
  set_token_count(s, 6);
  CHECK(s.input.tokens == std::vector<std::string>{"the", "t4", "sat", "t3", "t5", "t6"});
  REQUIRE(s.input.embeddings.rows() == 6);
  for (int i = 3; i < 6; ++i) check_matrix(s.input.embeddings.row(i), seeded_embedding_row(s.seed, SeedStream::Embeddings, i, 4), 0.0, "row");
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
  check_matrix(s.attention.custom_mask, mat({{1, 1, 0, 0, 0}, {0, 1, 0, 0, 0}, {1, 0, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}}), 0.0, "mask");
  set_token_count(s, 2);
  check_matrix(s.attention.custom_mask, mat({{1, 1}, {0, 1}}), 0.0, "shrunk mask");
}

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
  CHECK(state.computing());                // nothing is taken before poll()
  CHECK(state.trace().n_q() == 190);      // the previous trace is still shown
  CHECK(state.scenario().n_q() == 200);   // the document already has the edit
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

TEST_CASE("NaN or Inf typed into a cell is refused with the cell named -- the document is unchanged") {
  AppState state(cat_sat(), "");
  const std::string before = scenario_to_text(state.scenario());
  const std::uint64_t revision = state.document().revision;
  CHECK_FALSE(state.edit([](Scenario& d) { d.input.embeddings(1, 2) = std::numeric_limits<double>::quiet_NaN(); }));
  CHECK(state.message == "Not applied: embeddings[1][2]: not a finite number");
  CHECK_FALSE(state.edit([](Scenario& d) { d.weights.W_Q = Matrix::Ones(4, 3); (*d.weights.W_Q)(3, 0) = -std::numeric_limits<double>::infinity(); }));
  CHECK(state.message == "Not applied: weights.W_Q[3][0]: not a finite number");
  CHECK(scenario_to_text(state.scenario()) == before);
  CHECK(state.document().revision == revision);
  CHECK_FALSE(state.can_undo());
}

TEST_CASE("the undo history keeps at most 256 MiB of documents, dropping the oldest steps") {
  Scenario s = cat_sat();
  s.input.embeddings = Matrix::Zero(128, 4096);  // 4 MiB a document
  s.input.tokens.resize(128);
  for (int i = 0; i < 128; ++i) s.input.tokens[static_cast<std::size_t>(i)] = "t" + std::to_string(i);
  s.weights = {};
  s.attention.heads = 1;
  s.attention.head_dim = 1;
  CHECK(scenario_bytes(s) == 4 << 20);
  AppState state(s, "");
  for (int i = 1; i <= 70; ++i) REQUIRE(state.edit([i](Scenario& d) { d.input.embeddings(0, 0) = i; }));
  int depth = 0;
  while (state.undo()) ++depth;
  CHECK(depth == 64);  // 64 x 4 MiB = 256 MiB
  CHECK(state.scenario().input.embeddings(0, 0) == 6.0);  // edits 1-6 fell off the end
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

TEST_CASE("while edits of the embeddings compute, the document's weights are drawn once, and again when the seed changes") {
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

TEST_CASE("compute_trace_with_weights and decode_with_weights: the same, bit for bit, as drawing them -- weights that do not fit are refused") {
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
           [](Scenario& s) { ++s.seed; },
           [](Scenario& s) { s.attention.heads = 4; },
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
  (*other.weights.W_Q)(15, 63) = 0.1;  // the last cell: a comparison that stops early would miss it
  CHECK_FALSE(same_resolved_weights(given, other));
}

TEST_CASE("play and pause: the clock starts over, and playing from the last step or token starts from the first") {
  AppState state(cat_sat(), "");
  state.set_step(kStepCount - 1);
  state.pipeline.play_clock = 0.7;
  state.toggle_play();
  CHECK(state.pipeline.playing);
  CHECK(state.pipeline.step == step_at(0));
  CHECK(state.pipeline.play_clock == 0.0);
  state.set_step(4);
  state.toggle_play();  // pause where it is
  CHECK_FALSE(state.pipeline.playing);
  CHECK(state.pipeline.step == step_at(4));
  state.toggle_play();  // and go on from there
  CHECK(state.pipeline.step == step_at(4));

  state.set_decode_token(2);  // the last of the cat sat's three tokens
  state.decode.play_clock = 0.7;
  state.toggle_decode_play();
  CHECK(state.decode.playing);
  CHECK(state.decode.token == 0);
  CHECK(state.decode.play_clock == 0.0);
  state.set_decode_token(1);
  state.toggle_decode_play();
  CHECK_FALSE(state.decode.playing);
  CHECK(state.decode.token == 1);
}

TEST_CASE("playing moves the shown view on every kPlaySeconds and stops at its end") {
  AppState state(cat_sat(), "");
  state.set_step(kStepCount - 2);
  state.toggle_play();  // from the last step but one: not restarted
  CHECK(state.pipeline.step == step_at(kStepCount - 2));
  state.advance_play(kPlaySeconds - 0.1);
  CHECK(state.pipeline.step == step_at(kStepCount - 2));
  state.advance_play(0.1);
  CHECK(state.pipeline.step == step_at(kStepCount - 1));
  CHECK(state.pipeline.play_clock == 0.0);
  state.advance_play(kPlaySeconds);  // at the end: stops there
  CHECK(state.pipeline.step == step_at(kStepCount - 1));
  CHECK_FALSE(state.pipeline.playing);

  state.view = View::Decode;  // the decode view plays the tokens, and the pipeline stays where it is
  state.toggle_decode_play();
  state.advance_play(kPlaySeconds);
  CHECK(state.decode.token == 1);
  state.advance_play(kPlaySeconds);
  CHECK(state.decode.token == 2);
  state.advance_play(kPlaySeconds);
  CHECK(state.decode.token == 2);
  CHECK_FALSE(state.decode.playing);
  CHECK(state.pipeline.step == step_at(kStepCount - 1));
}
