// Files the app keeps for the user: atomic saves that never leave half a file, settings that survive a
// damaged file, and the recovery file that brings back unsaved work.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "app/gui/user_files.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/document_files.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

TEST_CASE("saving is atomic: a write that fails leaves the previous file exactly as it was") {
  const fs::path dir = fresh_dir("atomic");
  const fs::path file = dir / "scenario.json";
  Scenario s = cat_sat();
  save_scenario_file(s, file);
  const std::string before = read_file(file);
  CHECK(load_scenario_file(file).input.tokens == s.input.tokens);  // what is written loads back
  // A folder named as the old temporary file is in nobody's way: the temporary file has a name of its own.
  fs::create_directories(dir / "scenario.json.saving");
  s.input.tokens[0] = "changed";
  save_scenario_file(s, file);
  CHECK(load_scenario_file(file).input.tokens[0] == "changed");
  fs::remove_all(dir / "scenario.json.saving");
  // The target is a folder: refused before anything is written, nothing moves.
  const fs::path blocked = dir / "blocked.json";
  fs::create_directories(blocked / "inside");
  CHECK_THROWS_WITH_AS(save_scenario_file(s, blocked),
                       ("cannot write " + blocked.string() + ": it is a folder, not a file").c_str(), InputError);
  CHECK(fs::is_directory(blocked / "inside"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);  // scenario.json, blocked.json
  fs::remove_all(dir);
}

TEST_CASE("settings round-trip, and a damaged settings file gives the defaults") {
  const fs::path dir = fresh_dir("settings");
  gui::Settings s;
  s.theme = "light";
  s.zoom = 1.5f;
  s.width = 1280;
  s.height = 720;
  for (int i = 0; i < 10; ++i) ui::remember_recent(s.recent, "/tmp/file" + std::to_string(i) + ".json");
  ui::remember_recent(s.recent, "/tmp/file5.json");  // again: moves to the front, no duplicate
  REQUIRE(s.recent.size() == ui::kMaxRecentFiles);
  CHECK(s.recent[0] == "/tmp/file5.json");
  CHECK(s.recent[1] == "/tmp/file9.json");
  gui::save_settings(s, dir / "settings.json");
  const gui::Settings back = gui::load_settings(dir / "settings.json");
  CHECK(back.theme == "light");
  CHECK(back.zoom == 1.5f);
  CHECK(back.width == 1280);
  CHECK(back.recent == s.recent);
  std::ofstream(dir / "settings.json") << "{ not json";
  CHECK(gui::load_settings(dir / "settings.json").theme == "dark");
  std::ofstream(dir / "settings.json") << R"({"zoom": 99, "theme": "neon"})";
  const gui::Settings clamped = gui::load_settings(dir / "settings.json");
  CHECK(clamped.zoom == 3.0f);
  CHECK(clamped.theme == "dark");
  CHECK(gui::load_settings(dir / "missing.json").zoom == 1.0f);
  fs::remove_all(dir);
}

TEST_CASE("the recovery file brings back the exact document -- a damaged one is reported, not trusted") {
  const fs::path dir = fresh_dir("recovery");
  Scenario s = load_scenario_file(asset("the_lazy_dog_mla.json"));
  s.input.embeddings(1, 2) = 0.25;
  ui::RecoveryOffer unsaved;
  unsaved.scenario = s;
  unsaved.original = "/somewhere/the_lazy_dog_mla.json";
  gui::write_recovery(dir / "recovery.json", unsaved);
  const auto r = gui::read_recovery(dir / "recovery.json");
  REQUIRE(r.has_value());
  CHECK(r->original == "/somewhere/the_lazy_dog_mla.json");
  CHECK(r->when.size() == 16);  // "YYYY-MM-DD HH:MM"
  REQUIRE(r->scenario.has_value());
  CHECK(scenario_to_text(*r->scenario) == scenario_to_text(s));
  CHECK_FALSE(r->model.has_value());
  CHECK_FALSE(gui::read_recovery(dir / "none.json").has_value());
  std::ofstream(dir / "recovery.json") << R"({"original": "", "scenario": {"tokens": []}})";
  std::string problem;
  CHECK_FALSE(gui::read_recovery(dir / "recovery.json", &problem).has_value());
  CHECK(problem == (dir / "recovery.json").string() + ": embeddings: missing (required)");
  fs::remove_all(dir);
}

namespace {

const fs::path kTinyModel = fs::path(ATTN_ASSETS_DIR) / "models" / "tiny.json";

// A model edited in the app: a weight cell and the tokens, unsaved.
void edit_tiny(ui::AppState& state) {
  ui::open_model_document(state, kTinyModel);
  REQUIRE(state.model_doc.loaded());
  const auto w_1 = [](Model& m) -> SharedMatrix& { return m.layers[0].own.W_1; };
  REQUIRE_FALSE(state.model_doc.edit_weight(w_1, with_cell(*state.model_doc.resolved().layers[0].own.W_1, 1, 2, 0.5)));
  REQUIRE_FALSE(state.model_doc.edit_tokens({"<s>", "a", "b", "a"}));
}

}  // namespace

TEST_CASE("the recovery file keeps the model's unsaved changes too, and restoring them makes them unsaved again") {
  const fs::path dir = fresh_dir("recovery_model");
  ui::AppState state(cat_sat(), "");
  CHECK_FALSE(ui::unsaved_work(state).has_value());
  edit_tiny(state);
  const std::optional<ui::RecoveryOffer> unsaved = ui::unsaved_work(state);
  REQUIRE(unsaved.has_value());
  CHECK_FALSE(unsaved->scenario.has_value());  // the scenario has nothing unsaved
  REQUIRE(unsaved->model.has_value());
  CHECK(unsaved->model_original == kTinyModel);
  gui::write_recovery(dir / "recovery.json", *unsaved);

  std::string problem;
  const std::optional<ui::RecoveryOffer> r = gui::read_recovery(dir / "recovery.json", &problem);
  REQUIRE_MESSAGE(r.has_value(), problem);
  CHECK_FALSE(r->scenario.has_value());
  REQUIRE(r->model.has_value());
  CHECK(r->model_original == kTinyModel);
  CHECK(r->model->tokens == std::vector<std::string>{"<s>", "a", "b", "a"});
  CHECK(model_to_text(r->model->model) == model_to_text(state.model_doc.model()));

  ui::AppState after(cat_sat(), "");  // the next start
  ui::restore_unsaved_work(after, *r);
  REQUIRE(after.model_doc.loaded());
  CHECK(after.model_doc.dirty());
  CHECK(after.model_doc.path() == kTinyModel);
  CHECK(model_to_text(after.model_doc.model()) == model_to_text(state.model_doc.model()));
  CHECK(after.model_doc.trace().logits == state.model_doc.trace().logits);
  REQUIRE(after.model_doc.undo());  // one undo away from the file
  CHECK(model_to_text(after.model_doc.model()) == model_to_text(load_model_file(kTinyModel)));
  CHECK_FALSE(after.document().dirty());

  // A model never saved: restored without a file, and unsaved.
  ui::RecoveryOffer unnamed = *r;
  unnamed.model_original.clear();
  ui::AppState fresh(cat_sat(), "");
  ui::restore_unsaved_work(fresh, unnamed);
  REQUIRE(fresh.model_doc.loaded());
  CHECK(fresh.model_doc.dirty());
  CHECK(fresh.model_doc.path().empty());
  CHECK(fresh.model_doc.input().tokens == std::vector<std::string>{"<s>", "a", "b", "a"});
  fs::remove_all(dir);
}

TEST_CASE("a recovery file with both documents, and a damaged model in one, named by its path") {
  const fs::path dir = fresh_dir("recovery_both");
  ui::AppState state(cat_sat(), "");
  REQUIRE(state.edit([](Scenario& d) { d.input.embeddings(0, 0) = 0.5; }));
  edit_tiny(state);
  const std::optional<ui::RecoveryOffer> unsaved = ui::unsaved_work(state);
  REQUIRE(unsaved.has_value());
  CHECK(unsaved->scenario.has_value());
  CHECK(unsaved->model.has_value());
  gui::write_recovery(dir / "recovery.json", *unsaved);
  const std::optional<ui::RecoveryOffer> r = gui::read_recovery(dir / "recovery.json");
  REQUIRE(r.has_value());
  REQUIRE(r->scenario.has_value());
  CHECK(r->scenario->input.embeddings(0, 0) == 0.5);
  CHECK(r->model.has_value());

  std::ofstream(dir / "recovery.json") << R"({"model": {"tokens": ["a"], "model": {"vocab": []}}})";
  std::string problem;
  CHECK_FALSE(gui::read_recovery(dir / "recovery.json", &problem).has_value());
  CHECK(problem.starts_with((dir / "recovery.json").string() + ": model.model."));
  std::ofstream(dir / "recovery.json") << R"({"model": {"tokens": [3], "model": {}}})";
  CHECK_FALSE(gui::read_recovery(dir / "recovery.json", &problem).has_value());
  CHECK(problem.starts_with((dir / "recovery.json").string() + ": model.model."));
  std::ofstream(dir / "recovery.json") << R"({"model": {"original": "", "tokens": "a b"}})";
  CHECK_FALSE(gui::read_recovery(dir / "recovery.json", &problem).has_value());
  CHECK(problem == (dir / "recovery.json").string() + ": model.tokens: expected a list of tokens");
  fs::remove_all(dir);
}

TEST_CASE("unsaved work that cannot be restored says why, and the offer stays to be restored or discarded") {
  ui::AppState state(cat_sat(), "");
  ui::RecoveryOffer bad;
  bad.model = ui::ModelInput{load_model_file(kTinyModel), {"<s>", "zebra"}};  // not in the vocabulary
  bad.when = "2026-11-25 10:00";
  CHECK_FALSE(ui::restore_unsaved_work(state, bad));
  CHECK(state.message ==
        "The unsaved model could not be restored: tokens[1]: \"zebra\" is not in the vocabulary of 8 "
        "tokens");
  ui::RecoveryOffer bad_scenario;
  bad_scenario.scenario = cat_sat();
  bad_scenario.scenario->input.tokens[0] = "";
  CHECK_FALSE(ui::restore_unsaved_work(state, bad_scenario));
  CHECK(state.message ==
        "The unsaved document could not be restored: Not applied: tokens[0]: a token label must not be empty");
  CHECK_FALSE(state.document().dirty());
}
