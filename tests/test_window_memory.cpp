// What the window holds at once, from the shapes (ui/logic/window_memory.h): the numbers worked out by hand.
#include <doctest/doctest.h>

#include <string>

#include "core/edits.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/memory_budget.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/train_actions.h"
#include "ui/logic/trainer.h"
#include "ui/logic/window_memory.h"

using namespace attn;
using attn::test::contains;

namespace {

constexpr std::int64_t kMiB = std::int64_t(1) << 20;

// One head of 4 on d_model 8, no W_O, `n` tokens (the window's case of 4,096 tokens that peaked at 755 MiB).
Scenario one_head(int n, const char* mask) {
  Scenario s = parse_scenario(std::string(R"({"name":"one","tokens":["a"],"embeddings":[[1,2,3,4,5,6,7,8]],)") +
                              R"("attention":{"heads":1,"head_dim":4,"mask":")" + mask + R"("},"seed":3})");
  set_token_count(s, n);
  return s;
}

}  // namespace

TEST_CASE("the window's frame allowance and the undo history's share of the budget") {
  // 144 MiB beside the program's 16 MiB (every check adds those) and 40 bytes a pixel: 150,994,944 + 40 x 921,600.
  CHECK(ui::window_frame_bytes(1280, 720) == 187'858'944);
  CHECK(ui::window_frame_bytes(8192, 8192) == 150'994'944 + 2'684'354'560);
  CHECK(ui::history_share(400 * kMiB) == 52'428'800);             // an eighth
  CHECK(ui::history_share(std::int64_t(3) << 30) == 256 * kMiB);  // at most 256 MiB
}

TEST_CASE("a result of one head at 4,096 tokens: the trace with scaled and masked made, 40 n^2 + 508 n + 768") {
  // The trace (predicted_trace_bytes): X and X_kv 2 x 64 n, W_Q W_K W_V 3 x 256, Q K V 3 x 32 n, the KV head's k and
  // v 2 x 32 n, the mask 8 n^2; the head's q, k, v, output 4 x 32 n, scores and weights 2 x 8 n^2, row statistics
  // 3 x 8 n and statuses 4 n; concat and output 2 x 32 n: 24 n^2 + 508 n + 768 (404,734,720 at 4,096: the 386 MiB
  // the window counted). The window adds scaled and masked, 2 x 8 n^2. Past 256 tokens nothing is decoded.
  const Scenario s = one_head(4096, "causal");
  CHECK(ui::predicted_result_bytes(s) == 40 * std::int64_t(4096) * 4096 + 508 * 4096 + 768);
  CHECK(ui::predicted_result_bytes(s) == 673'170'176);
  // Without a mask the same past 256 tokens: there is no decode view's causal trace to hold.
  CHECK(ui::predicted_result_bytes(one_head(300, "none")) == ui::predicted_result_bytes(one_head(300, "causal")));
  // At 256 tokens, a mask that lets a query see later keys adds the causal trace (its matrices made as the shown
  // trace's, 40 n^2 + 508 n + 768) and its custom mask (8 n^2): 3,276,544.
  CHECK(ui::predicted_result_bytes(one_head(256, "none")) - ui::predicted_result_bytes(one_head(256, "causal")) ==
        48 * 256 * 256 + 508 * 256 + 768);
}

TEST_CASE("the window holds two results, its frame and the history's share: refused past the budget") {
  const Scenario s = one_head(4096, "causal");
  const std::int64_t frame = ui::window_frame_bytes(1280, 720);
  // 187,858,944 + 52,428,800 + 2 x 673,170,176 at 400 MiB (the budget the window accepted, peaking at 755 MiB), and
  // the program's 16 MiB in the check.
  CHECK(ui::predicted_window_bytes(s, frame, 400 * kMiB) == 1'586'628'096);
  try {
    ui::check_window_budget(s, frame, 400 * kMiB);
    FAIL("not refused");
  } catch (const BudgetError& e) {
    CHECK(std::string(e.what()) ==
          "this document in the window needs 1,603,405,312 bytes (1.49 GiB) but the memory budget is 419,430,400 "
          "bytes (400 MiB); use --memory-budget, fewer tokens or heads, or a smaller window");
  }
  CHECK_NOTHROW(ui::check_window_budget(s, frame, std::int64_t(2) << 30));  // 1,819,411,968
  // The tokens slider at 1 GiB: 2 (40 n^2 + 508 n + 768) within 1 GiB - 204,636,160 - 128 MiB = 734,887,936 bytes,
  // 3,024 tokens (367,320,000 each; 3,025 would be 367,562,468).
  CHECK(ui::max_window_tokens(s, 4096, frame, std::int64_t(1) << 30) == 3024);
  CHECK(ui::max_window_tokens(s, 4096, frame, std::int64_t(2) << 30) == 4096);
}

TEST_CASE("a window too big for its budget is refused before a document, with both numbers") {
  try {
    ui::check_window_fits(8192, 8192, 64 * kMiB);
    FAIL("not refused");
  } catch (const BudgetError& e) {
    // 2,852,126,720 + 8,388,608.
    CHECK(std::string(e.what()) ==
          "the window at 8192x8192 (before a document) needs 2,860,515,328 bytes (2.66 GiB) but the memory budget is "
          "67,108,864 bytes (64.0 MiB); use --memory-budget, a smaller --size");
  }
  // 1280x720: 204,636,160 + 2,097,152 past 16 MiB.
  CHECK_THROWS_AS(ui::check_window_fits(1280, 720, 16 * kMiB), BudgetError);
  CHECK_NOTHROW(ui::check_window_fits(1280, 720, 256 * kMiB));  // 204,636,160 + 33,554,432
}

TEST_CASE("the window's edits and files are held to what it holds, not to the trace alone") {
  ui::AppState state(one_head(8, "causal"), "one.json");
  state.set_window_size(1280, 720);
  state.set_memory_budget(240 * kMiB);
  // 1,000 tokens: a trace of 24 n^2 + 508 n + 768 = 24,508,768 bytes fits 240 MiB; the window does not.
  CHECK_FALSE(state.edit([](Scenario& d) { set_token_count(d, 1000); }));
  CHECK(state.message.starts_with("Not applied: this document in the window needs "));
  CHECK(
      state.message.ends_with(" but the memory budget is 251,658,240 bytes (240 MiB); use --memory-budget, "
                              "fewer tokens or heads, or a smaller window"));
  CHECK(state.scenario().n_q() == 8);
  // Two results of 40 n^2 + 508 n + 768 within 240 MiB - 204,636,160 - 30 MiB = 15,564,800 bytes: 434 tokens
  // (7,755,480 each); 435 would hold 204,636,160 + 31,457,280 + 2 x 7,790,748.
  CHECK(ui::max_window_tokens(state.scenario(), 4096, state.window_frame, state.memory_budget) == 434);
  CHECK(state.edit([](Scenario& d) { set_token_count(d, 434); }));
  CHECK_FALSE(state.open(one_head(435, "causal"), "big.json"));
  CHECK(state.message.starts_with("big.json: this document in the window needs 251,674,936 bytes (240 MiB)"));
  state.wait();
}

namespace {

// One layer of 8 heads of 8 over d_model 64 that reads up to 4,096 tokens of "a b a b ...".
ui::ModelInput shared_model_input(int tokens) {
  const Model m = parse_model(
      R"({"name":"wide","vocab":["a","b"],"d_model":64,"max_positions":4096,"positions":"none","norm":"none",)"
      R"("layers":[{"attention":{"heads":8,"head_dim":8,"mask":"causal"}}]})");
  std::string text;
  for (int i = 0; i < tokens; ++i) text += i % 2 ? " b" : " a";
  return ui::model_input(m, text);
}

}  // namespace

TEST_CASE("the window's document, Model view and Train view share one budget, each checked beside the others") {
  ui::AppState state(one_head(8, "causal"), "one.json");
  state.set_window_size(1280, 720);
  state.set_memory_budget(std::int64_t(1) << 30);
  CHECK(state.held_beside(ui::WindowPart::Document).bytes == 0);  // nothing else holds anything yet
  CHECK(state.held_beside(ui::WindowPart::Model).bytes == state.window_bytes());
  CHECK(state.held_beside(ui::WindowPart::Model).what == "the window");
  // The Model view holds its forward pass on 2,048 tokens and its history's share (an eighth of 1 GiB).
  REQUIRE_FALSE(state.model_doc.open(shared_model_input(2048), "wide.json"));
  CHECK(ui::model_view_bytes(state.model_doc.input(), 0) == 327'387'136);
  CHECK(state.model_doc.held_bytes() == 327'387'136 + 134'217'728);
  const HeldBeside model = state.held_beside(ui::WindowPart::Document);
  CHECK(model.bytes == 461'604'864);
  CHECK(model.what == "the Model view");
  // The tokens slider: two results of 40 n^2 + 508 n + 768 within 1 GiB - 16 MiB - 187,858,944 - 128 MiB -
  // 461,604,864 = 273,283,072 bytes: 1,841 tokens (136,507,236 each; 1,842 would be 136,655,064). Alone, 3,024.
  CHECK(ui::max_window_tokens(state.scenario(), 4096, state.window_frame, state.memory_budget) == 3024);
  CHECK(ui::max_window_tokens(state.scenario(), 4096, state.window_frame, state.memory_budget, model.bytes) == 1841);
  CHECK_FALSE(state.edit([](Scenario& d) { set_token_count(d, 1842); }));
  // 187,858,944 + 134,217,728 + 2 x 136,655,064 + 16 MiB.
  CHECK(state.message ==
        "Not applied: this document in the window needs 612,164,016 bytes (584 MiB) but the memory budget is "
        "1,073,741,824 bytes (1.00 GiB), of which 461,604,864 bytes (440 MiB) are held by the Model view; use "
        "--memory-budget, fewer tokens or heads, or a smaller window");
  REQUIRE(state.edit([](Scenario& d) { set_token_count(d, 1841); }));
  // The Train view's default run (81,996,800 bytes) fits 1 GiB alone, not beside the window (595,091,144 bytes now)
  // and the Model view.
  ui::TrainSettings run;
  CHECK(ui::predicted_train_view_bytes(run, ui::trained_model(run)) == 81'996'800);
  state.train.settings = run;
  CHECK_FALSE(ui::restart_training(state));
  CHECK(state.train.error ==
        "training 2 layers on batches of 32 sequences of 32 tokens needs 98,774,016 bytes (94.2 MiB) but the memory "
        "budget is 1,073,741,824 bytes (1.00 GiB), of which 1,056,696,008 bytes (1008 MiB) are held by the window "
        "and the Model view; use --memory-budget, a smaller batch, shorter sequences, fewer steps or layers");
  CHECK_FALSE(state.trainer.ready());
  // With the document back to 8 tokens the run starts; then the Model view may not grow past what is left beside
  // the window and the run.
  REQUIRE(state.edit([](Scenario& d) { set_token_count(d, 8); }));
  REQUIRE(ui::restart_training(state));
  CHECK(state.trainer.held_bytes() == 81'996'800);
  CHECK(state.held_beside(ui::WindowPart::Model).bytes == state.window_bytes() + 81'996'800);
  CHECK(state.held_beside(ui::WindowPart::Model).what == "the window and the Train view");
  const std::optional<std::string> refused = state.model_doc.edit_tokens(shared_model_input(4096).tokens);
  REQUIRE(refused.has_value());
  CHECK(contains(*refused, "running 1 layer on 4,096 tokens needs "));
  CHECK(contains(*refused, " are held by the window and the Train view; use --memory-budget, fewer tokens"));
  CHECK(state.model_doc.input().tokens.size() == 2048);
  // The lines the views show of their share.
  CHECK(ui::budget_share_text(81'996'800, std::int64_t(1) << 30, {}) == "78.2 MiB of the 1 GiB memory budget");
  CHECK(ui::budget_share_text(81'996'800, std::int64_t(1) << 30, {461'604'864, "the Model view"}) ==
        "78.2 MiB of the 1 GiB memory budget, beside 440 MiB held by the Model view");
  state.trainer.pause();
  state.wait();
}
