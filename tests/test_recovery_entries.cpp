// One recovery entry per running window: a live window's work is never offered to another, the work of a window
// that is gone is taken by one start only, each answer of the prompt touches only the offered entry, and a
// window's own edits are autosaved while the prompt waits.
#include <fstream>
#include <memory>

#include "app/gui/autosave.h"
#include "app/gui/recovery_entries.h"
#include "app/gui/user_files.h"
#include "checkpoint_folders.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/document_files.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

// A window on `file`: its document, and its autosave started in the config folder `config` as the app starts it.
struct TestWindow {
  std::unique_ptr<ui::AppState> state;
  gui::Autosave autosave;
  TestWindow(const fs::path& config, const fs::path& file)
      : state(std::make_unique<ui::AppState>(load_scenario_file(file), file)),
        autosave(gui::Autosave::start(config, *state)) {}
  void edit(int seed) {
    REQUIRE(state->edit([seed](Scenario& s) { s.seed = seed; }));
  }
  // A frame long after the last write: the autosave is due.
  void frame() { autosave.tick(*state, now += 10.0); }
  double now = 0;
};

fs::path scenario_named(const fs::path& dir, const std::string& name, int seed) {
  Scenario s = cat_sat();
  s.name = name;
  s.seed = seed;
  save_scenario_file(s, dir / (name + ".json"));
  return dir / (name + ".json");
}

// The original an entry names, and the seed of the work it keeps.
std::pair<fs::path, int> entry_work(const fs::path& entry) {
  const std::optional<ui::RecoveryOffer> r = gui::read_recovery(entry);
  REQUIRE(r.has_value());
  return {r->original, r->scenario->seed};
}

// A window on `doc` that made an edit (seed 8) and was killed: its entry stays for a later start.
fs::path entry_of_killed_window(const fs::path& config, const fs::path& doc) {
  TestWindow window(config, doc);
  window.edit(8);
  window.frame();
  return window.autosave.own_file();
}

}  // namespace

TEST_CASE("recovery entries of two windows: a live window's is never offered, a gone one's only to one start") {
  const fs::path dir = fresh_dir("recovery_two_windows"), config = dir / "config";
  const fs::path a = scenario_named(dir, "docA", 7), b = scenario_named(dir, "docB", 7);
  std::optional<TestWindow> window_a(std::in_place, config, a);
  window_a->edit(8);
  window_a->frame();
  const fs::path entry_a = window_a->autosave.own_file();
  CHECK(entry_work(entry_a) == std::pair{fs::canonical(a), 8});

  // B starts while A runs: nothing is offered, and B's edits go to an entry of its own.
  TestWindow window_b(config, b);
  CHECK_FALSE(window_b.state->recovery.has_value());
  CHECK(window_b.state->message.empty());
  window_b.edit(9);
  window_b.frame();
  const fs::path entry_b = window_b.autosave.own_file();
  CHECK(entry_b != entry_a);
  CHECK(entry_b.parent_path() == config / "recovery");
  CHECK(entry_work(entry_b) == std::pair{fs::canonical(b), 9});
  CHECK(entry_work(entry_a) == std::pair{fs::canonical(a), 8});

  // A is killed (its lock let go, nothing cleaned up): the next start is offered A's work, not B's; a start at the
  // same moment is offered nothing, as the first holds the entry's lock.
  window_a.reset();
  REQUIRE(fs::exists(entry_a));
  TestWindow window_c(config, b);
  REQUIRE(window_c.state->recovery.has_value());
  CHECK(window_c.state->recovery->original == fs::canonical(a));
  CHECK(window_c.state->recovery->scenario->seed == 8);
  TestWindow window_d(config, b);
  CHECK_FALSE(window_d.state->recovery.has_value());

  // Discard in C deletes A's entry only.
  ui::answer_recovery(*window_c.state, ui::RecoveryAnswer::Discarded);
  window_c.frame();
  CHECK_FALSE(window_c.state->recovery.has_value());
  CHECK_FALSE(fs::exists(entry_a));
  CHECK_FALSE(fs::exists(entry_a.native() + ".lock"));
  CHECK(entry_work(entry_b) == std::pair{fs::canonical(b), 9});

  // B closes properly: its entry and lock go; the others' stay.
  window_b.autosave.finish();
  CHECK_FALSE(fs::exists(entry_b));
  CHECK_FALSE(fs::exists(entry_b.native() + ".lock"));
  CHECK(fs::exists(window_c.autosave.own_file().native() + ".lock"));
  fs::remove_all(dir);
}

TEST_CASE("recovery: a window's edits are autosaved while the prompt waits, and Later keeps the offered entry") {
  const fs::path dir = fresh_dir("recovery_prompt_waits"), config = dir / "config";
  const fs::path a = scenario_named(dir, "docA", 7), b = scenario_named(dir, "docB", 7);
  const fs::path entry_a = entry_of_killed_window(config, a);
  const std::string a_bytes = read_file(entry_a);

  std::optional<TestWindow> window_b(std::in_place, config, b);
  REQUIRE(window_b->state->recovery.has_value());
  window_b->edit(9);  // the prompt is still open
  window_b->frame();
  const fs::path entry_b = window_b->autosave.own_file();
  CHECK(entry_work(entry_b) == std::pair{fs::canonical(b), 9});
  CHECK(read_file(entry_a) == a_bytes);  // kept until the user decides

  // Later (Escape): neither restored nor deleted; the next start is offered it again.
  ui::answer_recovery(*window_b->state, ui::RecoveryAnswer::Later);
  window_b->frame();
  CHECK_FALSE(window_b->state->recovery.has_value());
  CHECK(window_b->state->scenario().name == "docB");
  CHECK(read_file(entry_a) == a_bytes);
  TestWindow window_c(config, b);
  REQUIRE(window_c.state->recovery.has_value());
  CHECK(window_c.state->recovery->original == fs::canonical(a));

  // B is killed too: the edits it made while the prompt waited are offered to the next start (C holds A's entry).
  window_b.reset();
  TestWindow window_d(config, a);
  REQUIRE(window_d.state->recovery.has_value());
  CHECK(window_d.state->recovery->original == fs::canonical(b));
  CHECK(window_d.state->recovery->scenario->seed == 9);
  fs::remove_all(dir);
}

TEST_CASE("recovery: Restore over unsaved edits asks first, and the restored work moves to the window's own entry") {
  const fs::path dir = fresh_dir("recovery_restore_entry"), config = dir / "config";
  const fs::path a = scenario_named(dir, "docA", 7), b = scenario_named(dir, "docB", 7);
  const fs::path entry_a = entry_of_killed_window(config, a);
  TestWindow window_b(config, b);
  REQUIRE(window_b.state->recovery.has_value());
  window_b.edit(9);
  ui::answer_recovery(*window_b.state, ui::RecoveryAnswer::Restored);
  // B's own edits are not replaced without the unsaved-changes question.
  CHECK(window_b.state->recovery_answer == ui::RecoveryAnswer::None);
  CHECK(window_b.state->scenario().name == "docB");
  REQUIRE(window_b.state->pending.replacing());
  window_b.state->pending.go_on();  // "Don't save"
  CHECK_FALSE(window_b.state->pending.replacing());
  CHECK(window_b.state->recovery_answer == ui::RecoveryAnswer::Restored);
  CHECK(window_b.state->scenario().name == "docA");
  window_b.autosave.tick(*window_b.state, 0.5);  // at once, not after the autosave's delay
  CHECK(entry_work(window_b.autosave.own_file()) == std::pair{fs::canonical(a), 8});
  CHECK_FALSE(fs::exists(entry_a));
  fs::remove_all(dir);
}

TEST_CASE("recovery: the recovery.json of earlier versions is offered, and lock files left alone are cleared") {
  const fs::path dir = fresh_dir("recovery_legacy"), config = dir / "config";
  const fs::path a = scenario_named(dir, "docA", 7), b = scenario_named(dir, "docB", 7);
  ui::RecoveryOffer old;
  old.scenario = load_scenario_file(a);
  old.scenario->seed = 8;
  old.original = fs::canonical(a);
  gui::write_recovery(gui::legacy_recovery_file(config), old);
  fs::create_directories(gui::recovery_folder(config));
  std::ofstream(gui::recovery_folder(config) / "window-1.json.lock");  // a window that ended with nothing unsaved

  TestWindow window(config, b);
  REQUIRE(window.state->recovery.has_value());
  CHECK(window.state->recovery->scenario->seed == 8);
  CHECK_FALSE(fs::exists(gui::recovery_folder(config) / "window-1.json.lock"));
  TestWindow other(config, b);
  CHECK_FALSE(other.state->recovery.has_value());
  ui::answer_recovery(*window.state, ui::RecoveryAnswer::Discarded);
  window.frame();
  CHECK_FALSE(fs::exists(gui::legacy_recovery_file(config)));
  fs::remove_all(dir);
}

TEST_CASE("recovery: an entry that cannot be read is moved aside, and the next one is offered") {
  const fs::path dir = fresh_dir("recovery_unreadable_entry"), config = dir / "config";
  const fs::path a = scenario_named(dir, "docA", 7);
  fs::create_directories(gui::recovery_folder(config));
  std::ofstream(gui::recovery_folder(config) / "window-1.json") << "{";
  ui::RecoveryOffer r;
  r.scenario = load_scenario_file(a);
  r.original = fs::canonical(a);
  gui::write_recovery(gui::recovery_folder(config) / "window-2.json", r);
  TestWindow window(config, a);
  REQUIRE(window.state->recovery.has_value());
  CHECK(window.state->recovery->original == fs::canonical(a));
  CHECK(contains(
      window.state->message,
      "it was moved to " + (gui::recovery_folder(config) / "window-1.json.unreadable").string() + " and kept there"));
  CHECK(read_file(gui::recovery_folder(config) / "window-1.json.unreadable") == "{");
  CHECK_FALSE(fs::exists(gui::recovery_folder(config) / "window-1.json.lock"));
  fs::remove_all(dir);
}

TEST_CASE("recovery: a window killed with a model folder open brings back its text, drawn ids and ablation") {
  const fs::path dir = fresh_dir("recovery_real_model"), config = dir / "config";
  const fs::path doc = scenario_named(dir, "docA", 7);
  const fs::path folder = gpt2_folder("recovery-real-model-folder", gpt2_tensors());
  {
    TestWindow window(config, doc);
    window.frame();
    CHECK_FALSE(fs::exists(window.autosave.own_file()));  // nothing unsaved, no folder open
    window.state->real_model.open(folder, "ab");
    window.state->wait();
    REQUIRE(window.state->real_model.set_random_repeat(7));  // ids {3, 3}: "dd"
    window.state->real_model.set_ablation({.heads = {{0, 1}}, .mode = AblationMode::Mean});
    window.state->wait();
    window.frame();
    const std::optional<ui::RecoveryOffer> kept = gui::read_recovery(window.autosave.own_file());
    REQUIRE(kept.has_value());
    CHECK_FALSE(kept->scenario.has_value());
    CHECK_FALSE(kept->model.has_value());
    REQUIRE(kept->real_model.has_value());
    CHECK(kept->real_model->folder == folder);
    CHECK(kept->real_model->state.text == "dd");
    CHECK(kept->real_model->state.ids == std::vector<int>{3, 3});
    CHECK(ablation_list(kept->real_model->state.ablation) == "0.1");
    CHECK(kept->real_model->state.ablation.mode == AblationMode::Mean);
  }  // killed: its entry stays

  TestWindow next(config, doc);
  REQUIRE(next.state->recovery.has_value());
  REQUIRE(next.state->recovery->real_model.has_value());
  ui::answer_recovery(*next.state, ui::RecoveryAnswer::Restored);
  CHECK(next.state->recovery_answer == ui::RecoveryAnswer::Restored);
  CHECK(next.state->view == ui::View::Real);  // all that was kept
  CHECK(next.state->real_view.mode == AblationMode::Mean);
  CHECK(next.state->real_view.text == "dd");
  next.state->wait();
  REQUIRE(next.state->real_model.loaded());
  CHECK(next.state->real_model.shown().text.ids == std::vector<int>{3, 3});
  CHECK(next.state->real_model.state().ablation == Ablation{.heads = {{0, 1}}, .mode = AblationMode::Mean});
  CHECK(next.state->real_model.shown().baseline != nullptr);
  next.frame();  // the restored work moves to this window's own entry
  REQUIRE(gui::read_recovery(next.autosave.own_file()).has_value());
  CHECK(gui::read_recovery(next.autosave.own_file())->real_model->folder == folder);
  fs::remove_all(dir);
}

TEST_CASE("recovery: a damaged Real model entry is named where it is wrong, not trusted") {
  const fs::path dir = fresh_dir("recovery_real_model_damaged");
  const auto problem_of = [&dir](const std::string& real_model) {
    std::ofstream(dir / "r.json") << R"({"when": "now", "real_model": )" << real_model << "}";
    std::string problem;
    CHECK_FALSE(gui::read_recovery(dir / "r.json", &problem).has_value());
    return problem.substr(problem.find(": ") + 2);
  };
  CHECK(problem_of(R"({"folder": "m", "ablation": [[0]]})") == "real_model.ablation[0]: expected [layer, head]");
  CHECK(problem_of(R"({"folder": "m", "ids": [1, -2]})") ==
        "real_model.ids[1]: expected a token id (a whole number from 0 to 2,147,483,646)");
  CHECK(problem_of(R"({"folder": "m", "ablation_mode": "half"})")
            .starts_with("real_model.ablation_mode: expected one of zero | mean"));
  CHECK(problem_of(R"({"text": "ab"})") == "real_model.folder: expected the model's folder");
  CHECK(problem_of(R"({"folder": "m", "colour": 1})").starts_with("real_model"));
  fs::remove_all(dir);
}
