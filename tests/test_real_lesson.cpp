// A lesson page on the Real model view (ui/logic/real_lesson.h, lesson_nav.h): the heads ranked as the view ranks them,
// the loss on a repeat, the page's text and knock-out applied once the model's run allows, and the live line quoting
// the run on screen.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "checkpoint_folders.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/real_lesson.h"

namespace attn::test {
namespace {

// The zero GPT-2 of checkpoint_folders.h with room for 6 positions: every head's weights uniform over the keys it
// sees, every next token 1/4 (a loss of ln 4 = 1.386 nats).
std::string six_positions(const std::string& name) {
  std::vector<ZeroTensor> tensors = gpt2_tensors();
  for (ZeroTensor& t : tensors)
    if (t.name == "wpe.weight") t.shape = {6, 4};
  const std::string folder = gpt2_folder(name, tensors);
  std::ofstream(std::filesystem::path(folder) / "config.json")
      << R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":1,"n_positions":6,"vocab_size":4})";
  return folder;
}

ui::LessonPage real_page(std::string text, std::optional<HeadRole> ranked, int knock_out) {
  ui::LessonPage p;
  p.title = "T";
  p.text = "Text.";
  p.view = ui::View::Real;
  p.real_text = std::move(text);
  p.real_ranked = ranked;
  p.real_knock_out_top = knock_out;
  return p;
}

ModelTrace scored(const std::vector<std::vector<double>>& induction) {
  ModelTrace t;
  for (const std::vector<double>& layer : induction) {
    LayerTrace l;
    for (const double s : layer)
      l.head_scores.push_back({.previous_token = std::nullopt,
                               .induction = s < 0 ? std::nullopt : std::optional(s),
                               .duplicate_token = std::nullopt,
                               .first_token = std::nullopt});
    t.layers.push_back(std::move(l));
  }
  return t;
}

}  // namespace

TEST_CASE("the heads ranked by a score: highest first, ties in layer and head order, heads without it left out") {
  const ModelTrace t = scored({{0.2, 0.7, -1}, {0.7, 0.9, 0.1}});
  const std::vector<ui::RankedHead> ranked = ui::heads_by_score(t, HeadRole::Induction);
  std::vector<std::string> names;
  for (const ui::RankedHead& h : ranked) names.push_back(head_name(h.head) + " " + std::to_string(h.score));
  CHECK(names ==
        std::vector<std::string>{"1.1 0.900000", "0.1 0.700000", "1.0 0.700000", "0.0 0.200000", "1.2 0.100000"});
  CHECK(ui::heads_by_score(t, HeadRole::PreviousToken).empty());
}

TEST_CASE("the repeat: the positions whose next token an earlier copy gives away, and their mean loss") {
  // a b c a b d a b: after the second a, b follows as before (3); after the second b, d does not (4); the third a and
  // b follow an earlier a b (6).
  CHECK(ui::repeat_positions({0, 1, 2, 0, 1, 3, 0, 1}) == std::vector<int>{3, 6});
  CHECK(ui::repeat_positions({0, 1, 2}).empty());
  CHECK(ui::repeat_positions({5, 5, 5}) == std::vector<int>{1});  // 5 after 5, as at 0
  const std::vector<double> losses = {1, 2, 4, 8, 16, 32, 64};
  CHECK(ui::mean_loss_at(losses, {3, 6}, false) == 36.0);
  CHECK(ui::mean_loss_at(losses, {3, 6}, true) == 55.0 / 5);
  CHECK_FALSE(ui::mean_loss_at(losses, {}, false));
  CHECK_FALSE(ui::mean_loss_at({}, {}, true));
}

TEST_CASE("a Real model page with no model open says how to get one") {
  const ui::RealModelDocument doc;
  const ui::LessonPage p = real_page("abab", HeadRole::Induction, 0);
  CHECK(ui::real_page_line(doc, p) ==
        "No model is open yet: pick one beside this page, or File > Open model folder\u2026; huggingface-cli "
        "download gpt2 fetches GPT-2 small.");
}

TEST_CASE("a Real model page types its text and knocks out its top heads once the model shows its run") {
  ui::AppState state(cat_sat(), "");
  state.lesson.lessons = {
      ui::Lesson{"real",
                 "Real",
                 "S.",
                 {real_page("abab", HeadRole::Induction, 0), real_page("abab", HeadRole::Induction, 1),
                  real_page("abc", HeadRole::FirstToken, 0)}}};
  REQUIRE(ui::ApplyLessonPage(state, 0, 0));
  CHECK(state.view == ui::View::Real);
  CHECK(state.real_view.ranked == HeadRole::Induction);
  ui::SettleRealPage(state);  // no model: nothing to do, and nothing done
  CHECK(state.lesson.real_task.active);
  CHECK_FALSE(state.real_model.loaded());

  // The model opened after the page, on the view's starting text: the page's text is typed once it is shown.
  state.real_model.open(six_positions("real-lesson"), "ab");
  state.wait();
  REQUIRE(ui::FollowRealPage(state));
  CHECK(state.real_model.state().text == "abab");
  CHECK(state.real_view.text == "abab");
  CHECK_FALSE(ui::FollowRealPage(state));  // still computing: wait
  state.wait();
  CHECK_FALSE(ui::FollowRealPage(state));  // shown, nothing to knock out: done
  CHECK_FALSE(state.lesson.real_task.active);
  const ui::LessonPage& induction = state.lesson.lessons[0].pages[0];
  // Uniform weights: queries 2 and 3 put 1/3 and 1/4 on the token after their earlier copy; position 2 is the repeat.
  CHECK(ui::real_page_line(state.real_model, induction) ==
        "Strongest induction head: 0.0, score 0.292. The loss on the repeat: 1.386 nats, against 1.386 on the tokens "
        "no copy gives away.");

  REQUIRE(ui::ApplyLessonPage(state, 0, 1));
  CHECK(state.real_view.top_k == 1);
  ui::SettleRealPage(state);
  CHECK(state.real_model.state().ablation.heads == std::vector<HeadRef>{{0, 0}});
  CHECK(state.real_model.shown().baseline != nullptr);
  CHECK(ui::real_page_line(state.real_model, state.lesson.lessons[0].pages[1]) ==
        "Strongest induction head: 0.0, score 0.292. The loss on the repeat: 1.386 nats as trained, 1.386 with 0.0 "
        "knocked out.");

  // The next page shows the model as trained again, on its own text.
  REQUIRE(ui::ApplyLessonPage(state, 0, 2));
  ui::SettleRealPage(state);
  CHECK(state.real_model.state().ablation.empty());
  CHECK(state.real_model.shown().state->text == "abc");
  CHECK(ui::real_page_line(state.real_model, state.lesson.lessons[0].pages[2]) ==
        "Strongest first-token head: 0.0, score 0.417. 0 of 2 heads put more than half their weight on it.");
  ui::CloseLesson(state);
  CHECK_FALSE(state.lesson.real_task.active);
}

TEST_CASE("a Real model page leaves a text the class typed while its own was computed, and knocks nothing out") {
  ui::AppState state(cat_sat(), "");
  state.lesson.lessons = {ui::Lesson{"real", "Real", "S.", {real_page("abab", HeadRole::Induction, 1)}}};
  state.real_model.open(six_positions("real-lesson-typed"), "ab");
  state.wait();
  REQUIRE(ui::ApplyLessonPage(state, 0, 0));
  REQUIRE(ui::FollowRealPage(state));  // the page's text, computing
  state.real_model.set_text("abc");    // the class types before it lands
  state.wait();
  CHECK_FALSE(ui::FollowRealPage(state));
  CHECK_FALSE(state.lesson.real_task.active);
  CHECK(state.real_model.state().text == "abc");
  CHECK(state.real_model.state().ablation.empty());
}

}  // namespace attn::test

TEST_CASE("the loss bars' caption: the mean on the repeat and elsewhere, knocked out against as trained") {
  ui::RealModelRun r;
  auto t = std::make_shared<ModelTrace>();
  t->logits = Matrix::Zero(6, 256);
  r.trace = t;
  // ids 7 8 9 7 8 9: positions 3 and 4 predict what followed their earlier copies (8 after 7, 9 after 8).
  r.text.ids = {7, 8, 9, 7, 8, 9};
  r.losses = {5.0, 6.0, 4.0, 1.0, 2.0};
  CHECK(ui::loss_caption(r) ==
        "Loss in nats of predicting the token under each bar: on the repeat 1.500, elsewhere 5.000; dashed: a uniform "
        "guess, "
        "ln 256 = 5.545");
  r.baseline = t;
  r.baseline_losses = {5.0, 6.0, 4.5, 0.5, 0.25};
  CHECK(
      ui::loss_caption(r) ==
      "Loss in nats of predicting the token under each bar knocked out (filled) against as trained (outlined): on the "
      "repeat 1.500 against 0.375 (+1.125), elsewhere 5.000 against 5.167 (-0.167); dashed: a uniform guess, ln 256 "
      "= 5.545");
  // No repeat: the mean over every position.
  r.text.ids = {1, 2, 3, 4, 5, 6};
  r.baseline = nullptr;
  CHECK(ui::loss_caption(r) ==
        "Loss in nats of predicting the token under each bar: the mean 3.600; dashed: a uniform guess, ln 256 = 5.545");
}

TEST_CASE("turning to a Real model page asks nothing: it opens no scenario and no model") {
  ui::AppState state(cat_sat(), "");
  ui::LessonPage scenario_page;
  scenario_page.title = "S";
  scenario_page.text = "Text.";
  scenario_page.scenario = "the_cat_sat.json";
  state.lesson.lessons = {ui::Lesson{"real", "Real", "S.", {real_page("abab", HeadRole::Induction, 0), scenario_page}}};
  ui::GoToLessonPage(state, 0, 0);
  CHECK_FALSE(state.pending.waiting());
  CHECK(state.lesson.index == 0);
  CHECK(state.lesson.page == 0);
  CHECK(state.view == ui::View::Real);
  ui::GoToLessonPage(state, 0, 1);  // a scenario page replaces the document: the unsaved-changes prompt decides
  CHECK(state.pending.replacing());
  CHECK(state.lesson.page == 0);
}
