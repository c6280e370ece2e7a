// The undo history (ui/logic/history): undo and redo restore the exact document, over random sequences of every
// kind of edit the app makes; a drag is one step; the history is bounded by its memory.
#include <random>

#include "core/edits.h"
#include "core/io/scenario_write.h"
#include "core/trace_bytes.h"
#include "helpers.h"
#include "ui/logic/app_state.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {

std::string text_of(const AppState& s) { return scenario_to_text(s.scenario()); }

// One random edit of the kinds the inputs panel makes; some are refused (an invalid value), as in the app.
bool random_edit(AppState& state, std::mt19937_64& rng) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  const Scenario& s = state.scenario();
  switch (pick(9)) {
    case 0: return state.edit([&](Scenario& d) { add_token(d, fresh_token_label(d)); });
    case 1: return state.edit([&](Scenario& d) { remove_token(d, pick(d.n_q())); });
    case 2: {
      const int r = pick(s.n_q()), c = pick(s.d_model());
      const double v = (pick(41) - 20) / 10.0;
      return state.edit([&](Scenario& d) { d.input.embeddings(r, c) = v; });
    }
    case 3: return state.edit([&](Scenario& d) { set_head_shape(d, 1 + pick(4), 1 + pick(3)); });
    case 4:
      return state.edit([&](Scenario& d) {
        d.attention.mask = static_cast<MaskKind>(pick(3));
        d.attention.window = 2;
      });
    case 5: return state.edit(reseed_weights);
    case 6: {
      const Variant v = static_cast<Variant>(pick(4));
      const std::vector<int> div = divisors(s.attention.heads);
      const Weights used = state.trace().weights;
      const int g = div[static_cast<std::size_t>(pick(static_cast<int>(div.size())))];
      return state.edit([&](Scenario& d) { switch_variant(d, used, v, g, 2, 0); });
    }
    case 7: return state.edit([&](Scenario& d) { d.input.tokens[0] = ""; });  // refused: empty label
    default: return state.edit([&](Scenario& d) { d.attention.scale = !d.attention.scale; });
  }
}

}  // namespace

TEST_CASE("undo and redo restore the exact document over random edit sequences") {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    AppState state(load_scenario_file(asset("the_lazy_dog.json")), asset("the_lazy_dog.json"));
    // The model: every distinct document reached, in order.
    std::vector<std::string> history{text_of(state)};
    int refused = 0;
    for (int i = 0; i < 40; ++i) {
      const std::string before = text_of(state);
      if (random_edit(state, rng)) {
        history.push_back(text_of(state));
      } else {
        ++refused;
        REQUIRE(text_of(state) == before);  // a refused edit changes nothing
      }
    }
    CHECK(history.size() + refused == 41);
    // Undo to the start, checking each document on the way, then redo to the end.
    std::size_t at = history.size() - 1;
    REQUIRE(text_of(state) == history[at]);
    while (state.undo()) {
      --at;
      CAPTURE(at);
      REQUIRE(text_of(state) == history[at]);
    }
    CHECK(at == 0);
    CHECK_FALSE(state.document().dirty());  // back where the file was
    while (state.redo()) REQUIRE(text_of(state) == history[++at]);
    CHECK(at == history.size() - 1);
    // The trace always follows the document.
    CHECK(state.trace().tokens == state.scenario().input.tokens);
  }
}

TEST_CASE("a drag is one undo step -- a new edit after undo drops the redo") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  unsigned active = 7;  // the widget being dragged
  state.active_widget = [&] { return active; };
  for (double v = 1.1; v < 1.55; v += 0.1) state.edit([&](Scenario& d) { d.input.embeddings(0, 0) = v; });
  active = 0;
  state.end_gesture();
  state.edit([](Scenario& d) { d.input.embeddings(0, 1) = 5; });  // a second, separate edit
  CHECK(state.undo());
  CHECK(state.scenario().input.embeddings(0, 1) == 0);
  CHECK(state.scenario().input.embeddings(0, 0) == doctest::Approx(1.5));
  CHECK(state.undo());  // the whole drag at once
  CHECK(state.scenario().input.embeddings(0, 0) == 1);
  CHECK_FALSE(state.undo());
  CHECK(state.redo());
  state.edit([](Scenario& d) { d.input.embeddings(2, 2) = 9; });
  CHECK_FALSE(state.can_redo());
  CHECK(state.document().dirty());
  state.reset_to_saved();
  CHECK_FALSE(state.document().dirty());
  CHECK(state.undo());  // resetting can be undone too
  CHECK(state.scenario().input.embeddings(2, 2) == 9);
}

TEST_CASE(
    "a field applied while another widget is active is an undo step of its own, apart from the drag that follows") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  state.active_widget = [] { return 7u; };  // the widget just clicked, whose click made the field apply
  CHECK(state.edit_own_step([](Scenario& d) { d.weight_scale = 0.5; }));
  for (double v = 1.1; v < 1.35; v += 0.1) state.edit([&](Scenario& d) { d.input.embeddings(0, 0) = v; });  // its drag
  CHECK(state.undo());                                                                                      // the drag
  CHECK(state.scenario().input.embeddings(0, 0) == 1);
  CHECK(state.scenario().weight_scale == 0.5);
  CHECK(state.undo());  // the scale
  CHECK(state.scenario().weight_scale == 1.0);
  CHECK_FALSE(state.undo());
}

TEST_CASE("the document a view read at the start of a frame stays readable after the view's own edits in that frame") {
  Scenario big = cat_sat();
  set_token_count(big, 40);  // enough rows that a freed buffer would not be reused by chance
  AppState state(big, "");
  state.active_widget = [] { return 42u; };  // a drag: from its second edit on, no undo step keeps the old document
  state.edit([](Scenario& d) { d.input.embeddings(0, 0) = 0.5; });
  state.poll();                             // a new frame
  const Scenario& seen = state.scenario();  // what the inputs panel holds while it draws
  state.edit([](Scenario& d) { d.input.embeddings(0, 0) = 0.7; });
  state.edit([](Scenario& d) {
    d.input.tokens.push_back("x");
    d.input.embeddings.conservativeResize(41, Eigen::NoChange);
    d.input.embeddings.row(40).setZero();
  });
  CHECK(seen.input.embeddings(0, 0) == 0.5);  // under ASan a freed document fails here
  CHECK(seen.input.tokens.size() == 40);
  CHECK(state.scenario().input.tokens.size() == 41);
  state.poll();  // the frame is over: the old documents may go
  CHECK(state.scenario().input.embeddings(0, 0) == 0.7);
}

TEST_CASE("the undo history keeps at most its bound of bytes in documents, dropping the oldest steps") {
  CHECK(History::kBytes == std::int64_t(256) << 20);  // the app's bound; this test gives a 16th of it
  Scenario s = cat_sat();
  s.input.embeddings = Matrix::Zero(128, 256);  // 256 KiB a document
  s.input.tokens.resize(128);
  for (int i = 0; i < 128; ++i) s.input.tokens[static_cast<std::size_t>(i)] = "t" + std::to_string(i);
  s.weights = {};
  s.attention.heads = 1;
  s.attention.head_dim = 1;
  CHECK(scenario_bytes(s) == 256 << 10);
  AppState state(s, "", 16 << 20);
  for (int i = 1; i <= 70; ++i) REQUIRE(state.edit([i](Scenario& d) { d.input.embeddings(0, 0) = i; }));
  int depth = 0;
  while (state.undo()) ++depth;
  CHECK(depth == 64);                                     // 64 x 256 KiB = 16 MiB
  CHECK(state.scenario().input.embeddings(0, 0) == 6.0);  // edits 1-6 fell off the end
}
