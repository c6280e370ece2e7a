// The soak test's actions and checks, without a window: many seeded random actions, and what the views
// would show always equals a fresh computation of the document.
#include "app/gui/soak.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("soak without a window: 600 random actions on three scenarios, every check consistent") {
  for (const char* file : {"the_cat_sat.json", "the_lazy_dog_mla.json", "cross_attention.json"}) {
    CAPTURE(file);
    ui::AppState state(load_scenario_file(asset(file)), asset(file));
    gui::Soak soak(7);
    for (int i = 0; i < 200; ++i) {
      CAPTURE(i);
      REQUIRE(soak.act(state) == "");
      if (i % 20 == 19) REQUIRE(soak.check(state) == "");
    }
    REQUIRE(soak.check(state) == "");
    const gui::SoakCounts& c = soak.counts();
    CHECK(c.actions == 200);
    CHECK(c.applied > 50);
    CHECK(c.refused >= 5);  // NaN, Inf, 1e300, a zero weight scale, empty and duplicate labels, impossible shapes
    CHECK(c.undos > 5);
    CHECK(c.checks == 11);
  }
}

TEST_CASE("soak: the comparison names the first intermediate that differs") {
  const Trace fresh = compute_trace(load_scenario_file(asset("the_lazy_dog.json")));
  Trace shown = fresh;
  CHECK(gui::compare_traces(shown, fresh) == "");
  shown.heads[1].v(2, 0) = 0.25;
  CHECK(gui::compare_traces(shown, fresh).starts_with("head 1 v[2][0]: shown 0.250000, fresh "));
  shown = fresh;
  shown.tokens[3] = "naps";
  CHECK(gui::compare_traces(shown, fresh) == "tokens differ");
  shown = fresh;
  shown.output(3, 7) += 1e-15;
  CHECK(gui::compare_traces(shown, fresh).starts_with("output[3][7]: shown "));
}
