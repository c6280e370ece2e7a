// The application state: edits applied in the same call or refused with the document unchanged, play and
// pause, and how the window's size enlarges everything.
#include <limits>
#include <string>
#include "core/edits.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/app_state.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

// Plain attention (no positions, dense) has the ten classic steps, 0 = inputs ... 9 = output.
constexpr int kPlainSteps = 10;

TEST_CASE("the steps follow the configuration: losing rope leaves the view on the projections, numbers count anew") {
  Scenario s = cat_sat();
  s.attention.head_dim = 2;
  s.weights = {};
  AppState state(s, "");
  REQUIRE(state.edit([](Scenario& d) { set_positions(d, Positions::Rope, 0); }));
  state.set_step(2);
  CHECK(state.pipeline.step == Step::Rope);
  state.step_by(1);
  CHECK(state.pipeline.step == Step::Scores);
  state.set_step(2);
  REQUIRE(state.edit([](Scenario& d) { set_positions(d, Positions::None, 0); }));
  CHECK(state.pipeline.step == Step::Projections);
  CHECK_FALSE(state.edit([](Scenario& d) {
    d.attention.head_dim = 3;
    set_positions(d, Positions::Rope, 0);
  }));
  CHECK(state.message ==
        "Not applied: attention.head_dim: rope turns pairs of dimensions, so it needs an even head_dim (found 3)");
}

TEST_CASE("the application state applies valid edits in the same call and refuses invalid ones, keeping the document") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  CHECK_FALSE(state.document().dirty());
  CHECK(state.window_title() == "Attention Lab \u2014 the cat sat (the_cat_sat.json)");
  REQUIRE(state.edit([](Scenario& s) { s.input.embeddings(0, 0) = 2; }));
  CHECK(state.document().dirty());
  CHECK(state.trace().x(0, 0) == 2);  // the trace follows at once
  CHECK(state.window_title() == "Attention Lab \u2014 the cat sat (the_cat_sat.json) \u2022 unsaved");
  const double before = state.trace().heads[0].scores(0, 0);
  CHECK_FALSE(state.edit([](Scenario& s) { s.input.embeddings(1, 1) = std::numeric_limits<double>::quiet_NaN(); }));
  CHECK(state.message == "Not applied: embeddings[1][1]: not a finite number");
  CHECK(state.scenario().input.embeddings(1, 1) == 2);
  CHECK(state.trace().heads[0].scores(0, 0) == before);
  CHECK_FALSE(state.edit([](Scenario& s) { s.input.tokens[0] = ""; }));
  CHECK(state.message == "Not applied: tokens[0]: a token label must not be empty");
  state.reset_to_saved();
  CHECK(state.trace().x(0, 0) == 1);
  CHECK_FALSE(state.document().dirty());
  state.set_step(99);
  CHECK(state.pipeline.step == Step::Output);
  state.set_head(5);
  CHECK(state.pipeline.head == 0);
}

TEST_CASE("NaN or Inf typed into a cell is refused with the cell named -- the document is unchanged") {
  AppState state(cat_sat(), "");
  const std::string before = scenario_to_text(state.scenario());
  const std::uint64_t revision = state.document().revision;
  CHECK_FALSE(state.edit([](Scenario& d) { d.input.embeddings(1, 2) = std::numeric_limits<double>::quiet_NaN(); }));
  CHECK(state.message == "Not applied: embeddings[1][2]: not a finite number");
  CHECK_FALSE(state.edit([](Scenario& d) {
    d.weights.W_Q = with_cell(Matrix::Ones(4, 3), 3, 0, -std::numeric_limits<double>::infinity());
  }));
  CHECK(state.message == "Not applied: weights.W_Q[3][0]: not a finite number");
  CHECK(scenario_to_text(state.scenario()) == before);
  CHECK(state.document().revision == revision);
  CHECK_FALSE(state.can_undo());
}

TEST_CASE("play and pause: the clock starts over, and playing from the last step or token starts from the first") {
  AppState state(cat_sat(), "");
  state.set_step(kPlainSteps - 1);
  state.pipeline.play_clock = 0.7;
  state.toggle_play();
  CHECK(state.pipeline.playing);
  CHECK(state.pipeline.step == step_at(0, AttentionConfig{}));
  CHECK(state.pipeline.play_clock == 0.0);
  state.set_step(4);
  state.toggle_play();  // pause where it is
  CHECK_FALSE(state.pipeline.playing);
  CHECK(state.pipeline.step == step_at(4, AttentionConfig{}));
  state.toggle_play();  // and go on from there
  CHECK(state.pipeline.step == step_at(4, AttentionConfig{}));

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
  state.set_step(kPlainSteps - 2);
  state.toggle_play();  // from the last step but one: not restarted
  CHECK(state.pipeline.step == step_at(kPlainSteps - 2, AttentionConfig{}));
  state.advance_play(kPlaySeconds - 0.1);
  CHECK(state.pipeline.step == step_at(kPlainSteps - 2, AttentionConfig{}));
  state.advance_play(0.1);
  CHECK(state.pipeline.step == step_at(kPlainSteps - 1, AttentionConfig{}));
  CHECK(state.pipeline.play_clock == 0.0);
  state.advance_play(kPlaySeconds);  // at the end: stops there
  CHECK(state.pipeline.step == step_at(kPlainSteps - 1, AttentionConfig{}));
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
  CHECK(state.pipeline.step == step_at(kPlainSteps - 1, AttentionConfig{}));
}

TEST_CASE("presentation mode fits its enlargement to the window -- normal mode only grows on large windows") {
  CHECK(window_fit(1280, 720, true) == doctest::Approx(1.10f));  // 1.35 x 0.8 = 1.08, in steps of 0.05
  CHECK(window_fit(1600, 900, true) == doctest::Approx(1.35f));
  CHECK(window_fit(1920, 1080, true) == doctest::Approx(1.60f));
  CHECK(window_fit(1920, 720, true) == doctest::Approx(1.10f));  // the tighter side decides
  CHECK(window_fit(800, 600, true) == doctest::Approx(1.0f));    // never below the normal size
  CHECK(window_fit(1280, 720, false) == doctest::Approx(1.0f));
  CHECK(window_fit(1600, 900, false) == doctest::Approx(1.0f));
  CHECK(window_fit(1920, 1080, false) == doctest::Approx(1.2f));
  CHECK(window_fit(3840, 2160, false) == doctest::Approx(2.0f));
  AppState state(load_scenario_file(std::string(ATTN_ASSETS_DIR) + "/scenarios/the_cat_sat.json"), {});
  state.display.width = 1280;
  state.display.height = 720;
  state.display.zoom = 1.25f;
  state.display.presentation = true;
  CHECK(state.display.effective_zoom() == doctest::Approx(1.375f));
}

TEST_CASE("an edit's notes replace the messages shown: the first shown, the others waiting behind it in order") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  state.add_message("an older problem");
  state.add_message("and another");
  state.show_messages({});
  CHECK(state.message == "an older problem");  // no notes: nothing replaced
  state.show_messages({"W_Q drawn from the seed", "W_K drawn from the seed", "W_V drawn from the seed"});
  CHECK(state.message == "W_Q drawn from the seed");
  CHECK(state.more_messages == std::vector<std::string>{"W_K drawn from the seed", "W_V drawn from the seed"});
  state.message.clear();  // dismissed: the next one comes
  state.next_message();
  CHECK(state.message == "W_K drawn from the seed");
  CHECK(state.more_messages.size() == 1);
}

TEST_CASE("pending actions: a replacement waits for the answer, runs once on go_on, and is dropped on stay") {
  PendingActions pending;
  int replaced = 0;
  CHECK_FALSE(pending.waiting());
  pending.ask_to_replace([&] { ++replaced; }, false);
  CHECK(pending.replacing());
  CHECK_FALSE(pending.puts_model_at_stake());
  pending.go_on();
  CHECK(replaced == 1);
  CHECK_FALSE(pending.waiting());
  pending.go_on();  // nothing waits: it does not run again
  CHECK(replaced == 1);
  pending.ask_to_replace([&] { replaced += 10; }, true);
  CHECK(pending.puts_model_at_stake());
  pending.ask_to_quit();
  pending.stay();  // Cancel: neither the replacement nor the quit
  CHECK(replaced == 1);
  CHECK_FALSE(pending.waiting());
  CHECK_FALSE(pending.quit_confirmed());
  pending.ask_to_quit();
  CHECK(pending.quitting());
  CHECK(pending.puts_model_at_stake());  // quitting loses the model's changes too
  pending.go_on();
  CHECK(pending.quit_confirmed());
  CHECK_FALSE(pending.quitting());
}
