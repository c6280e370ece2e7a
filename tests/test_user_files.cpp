// Files the app keeps for the user: atomic saves that never leave half a file, settings that survive a
// damaged file, and the recovery file that brings back unsaved work.
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/gui/autosave.h"
#include "app/gui/gui_options.h"
#include "app/gui/recovery_entries.h"
#include "app/gui/start_state.h"
#include "app/gui/user_files.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/document_files.h"
#include "ui/logic/preset_check.h"

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
  {  // another program's "when": shown escaped and short, never a terminal's control sequence
    nlohmann::json j = nlohmann::json::parse(read_file(dir / "recovery.json"));
    j["when"] = "\x1b[31mred" + std::string(100, 'x');
    std::ofstream(dir / "altered.json") << j.dump();
    const auto altered = gui::read_recovery(dir / "altered.json");
    REQUIRE(altered.has_value());
    CHECK(altered->when == "\\x1b[31mred" + std::string(28, 'x') + "\u2026");
  }
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
  CHECK(state.message == "The unsaved document could not be restored: tokens[0]: a token label must not be empty");
  CHECK_FALSE(state.document().dirty());
  // Valid, but past what the window may hold (1 MiB), and its original gone: no empty name between two colons.
  state.set_memory_budget(std::int64_t(1) << 20);
  ui::RecoveryOffer big;
  big.scenario = cat_sat();
  big.original = "/nonexistent/gone.json";
  CHECK_FALSE(ui::restore_unsaved_work(state, big));
  CHECK(state.message.starts_with("The unsaved document could not be restored: this document in the window needs "));
}

namespace {

// The folder a test works in, and back to the one it started in at the end.
struct InFolder {
  fs::path before = fs::current_path();
  explicit InFolder(const fs::path& dir) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(before); }
};

// A scenario file of the cat sat with its own seed and name: A.json and B.json are told apart by their bytes.
fs::path write_scenario(const fs::path& file, int seed, const std::string& name) {
  Scenario s = cat_sat();
  s.seed = seed;
  s.name = name;
  save_scenario_file(s, file);
  return file;
}

// The work done in a window on `file` (opened by the path as given): re-seeded, unsaved, then "killed": only the
// recovery file is left, read back as the next start reads it.
ui::RecoveryOffer killed_after_an_edit(const fs::path& file, const fs::path& recovery) {
  ui::AppState state(load_scenario_file(file), file);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 8; }));
  const std::optional<ui::RecoveryOffer> unsaved = ui::unsaved_work(state);
  REQUIRE(unsaved.has_value());
  gui::write_recovery(recovery, *unsaved);
  std::string problem;
  std::optional<ui::RecoveryOffer> r = gui::read_recovery(recovery, &problem);
  REQUIRE_MESSAGE(r.has_value(), problem);
  r->when = "2026-12-01 10:00";
  return *r;
}

}  // namespace

TEST_CASE("restoring A's work while B is open opens A's work on its own: B is not changed and Save writes A") {
  const fs::path dir = fresh_dir("recovery_a_b");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  write_scenario(dir / "a" / "A.json", 7, "A");
  write_scenario(dir / "b" / "B.json", 7, "B");
  const std::string a_bytes = read_file(dir / "a" / "A.json"), b_bytes = read_file(dir / "b" / "B.json");
  ui::RecoveryOffer r;
  {
    InFolder in_a(dir / "a");
    r = killed_after_an_edit("A.json", dir / "recovery.json");  // opened as `attention-lab A.json`
  }
  CHECK(r.original == fs::canonical(dir / "a" / "A.json"));  // absolute: it names A from any folder
  CHECK(r.original_stamp == ui::file_stamp(dir / "a" / "A.json"));

  InFolder in_b(dir / "b");
  ui::AppState state(load_scenario_file("B.json"), "B.json");  // the next start, on B
  REQUIRE(ui::restore_unsaved_work(state, r));
  CHECK(state.scenario().name == "A");
  CHECK(state.scenario().seed == 8);
  CHECK(state.document().dirty());
  CHECK(state.document().path == fs::canonical(dir / "a" / "A.json"));
  CHECK(state.window_title() == "Attention Lab \u2014 A (A.json, recovered) \u2022 unsaved");
  CHECK(state.message == "Restored the unsaved changes from 2026-12-01 10:00; Save writes the document to " +
                             fs::canonical(dir / "a" / "A.json").string());
  {  // an original in the lab's own folder: Save asks, and the message says so rather than promising to write there
    ui::AppState in_lab(load_scenario_file("B.json"), "B.json");
    in_lab.lab_folders = {dir / "a"};
    REQUIRE(ui::restore_unsaved_work(in_lab, r));
    CHECK(in_lab.message ==
          "Restored the unsaved changes from 2026-12-01 10:00; Save asks where to save the document (" +
              fs::canonical(dir / "a" / "A.json").string() + " is in the lab's own folder)");
  }
  CHECK(read_file(dir / "b" / "B.json") == b_bytes);
  ui::save_document(state, state.document().path);  // Ctrl+S
  CHECK(read_file(dir / "b" / "B.json") == b_bytes);
  CHECK(load_scenario_file(dir / "a" / "A.json").seed == 8);
  CHECK(state.window_title() == "Attention Lab \u2014 A (A.json)");
  CHECK(a_bytes != read_file(dir / "a" / "A.json"));
  REQUIRE(state.undo());  // one undo away from the file as it was
  CHECK(state.scenario().seed == 7);
  fs::remove_all(dir);
}

TEST_CASE("a recovery whose original is a relative path (or no file) opens without a file: Save asks where") {
  const fs::path dir = fresh_dir("recovery_relative");
  write_scenario(dir / "A.json", 7, "A");
  write_scenario(dir / "B.json", 7, "B");
  const std::string b_bytes = read_file(dir / "B.json");
  InFolder in_dir(dir);
  ui::RecoveryOffer r;
  r.scenario = load_scenario_file("A.json");
  r.scenario->seed = 8;
  r.original = "A.json";  // as the recovery files before the canonical path named it
  r.when = "2026-12-01 10:00";
  ui::AppState state(load_scenario_file("B.json"), "B.json");
  REQUIRE(ui::restore_unsaved_work(state, r));
  CHECK(state.scenario().name == "A");
  CHECK(state.document().path.empty());  // even where "A.json" resolves: it cannot be checked
  CHECK(state.document().dirty());
  CHECK(state.window_title() == "Attention Lab \u2014 A (A.json, recovered) \u2022 unsaved");
  CHECK(state.message ==
        "Restored the unsaved changes from 2026-12-01 10:00; Save asks where to save the document "
        "(A.json could not be checked)");
  CHECK(read_file(dir / "B.json") == b_bytes);
  state.reset_to_saved();  // nothing to go back to: the work stays unsaved
  CHECK(state.document().dirty());
  CHECK(state.message == "Nothing to reset to: the recovered work has no file yet");
  // Its next recovery file still names the original, and still without a stamp.
  const std::optional<ui::RecoveryOffer> again = ui::unsaved_work(state);
  REQUIRE(again.has_value());
  CHECK(again->original == fs::canonical(dir / "A.json"));
  CHECK_FALSE(again->original_stamp.has_value());

  ui::RecoveryOffer never_saved = r;
  never_saved.original.clear();
  ui::AppState fresh(load_scenario_file("B.json"), "B.json");
  REQUIRE(ui::restore_unsaved_work(fresh, never_saved));
  CHECK(fresh.document().path.empty());
  CHECK(fresh.document().dirty());
  CHECK(fresh.window_title() == "Attention Lab \u2014 A \u2022 unsaved");
  CHECK(
      fresh.message ==
      "Restored the unsaved changes from 2026-12-01 10:00; Save asks where to save the document (it never had a file)");
  fs::remove_all(dir);
}

TEST_CASE("an original changed on disk since, or gone, is not written over: the restored work has no file") {
  const fs::path dir = fresh_dir("recovery_changed");
  const fs::path a = write_scenario(dir / "A.json", 7, "A");
  const ui::RecoveryOffer r = killed_after_an_edit(a, dir / "recovery.json");

  // Changed by another program: the same size, a later modification time.
  fs::last_write_time(a, fs::last_write_time(a) + std::chrono::seconds(5));
  const std::string changed = read_file(a);
  ui::AppState state(cat_sat(), "");
  REQUIRE(ui::restore_unsaved_work(state, r));
  CHECK(state.scenario().seed == 8);
  CHECK(state.document().path.empty());
  CHECK(state.document().dirty());
  CHECK(state.document().recovered_from == fs::canonical(a));
  CHECK(state.message == "Restored the unsaved changes from 2026-12-01 10:00; Save asks where to save the document (" +
                             fs::canonical(a).string() + " has changed since)");
  CHECK(read_file(a) == changed);

  // Other bytes of the same modification time.
  const auto when = fs::last_write_time(a);
  write_scenario(a, 9, "A changed");
  fs::last_write_time(a, when);
  ui::AppState other(cat_sat(), "");
  REQUIRE(ui::restore_unsaved_work(other, r));
  CHECK(other.document().path.empty());

  fs::remove(a);
  ui::AppState gone(cat_sat(), "");
  REQUIRE(ui::restore_unsaved_work(gone, r));
  CHECK(gone.document().path.empty());
  CHECK(gone.message == "Restored the unsaved changes from 2026-12-01 10:00; Save asks where to save the document (" +
                            fs::canonical(dir).string() + "/A.json is gone)");
  CHECK_FALSE(fs::exists(a));
  fs::remove_all(dir);
}

TEST_CASE("a changed model file is not written over either: the restored model has no file") {
  const fs::path dir = fresh_dir("recovery_model_changed");
  const fs::path m = dir / "m.json";
  fs::copy_file(kTinyModel, m);
  ui::AppState state(cat_sat(), "");
  ui::open_model_document(state, m);
  REQUIRE_FALSE(state.model_doc.edit_tokens({"<s>", "a", "b", "a"}));
  gui::write_recovery(dir / "recovery.json", *ui::unsaved_work(state));
  const std::optional<ui::RecoveryOffer> r = gui::read_recovery(dir / "recovery.json");
  REQUIRE(r.has_value());
  CHECK(r->model_original_stamp == ui::file_stamp(m));
  std::ofstream(m, std::ios::app) << "\n";  // another size
  ui::AppState after(cat_sat(), "");
  REQUIRE(ui::restore_unsaved_work(after, *r));
  CHECK(after.model_doc.path().empty());
  CHECK(after.model_doc.dirty());
  CHECK(after.model_doc.recovered_from() == fs::canonical(m));
  CHECK(after.model_doc.input().tokens == std::vector<std::string>{"<s>", "a", "b", "a"});
  fs::remove_all(dir);
}

TEST_CASE("a recovery file that cannot be read is moved aside, kept byte for byte, and the message says where") {
  const fs::path dir = fresh_dir("recovery_unreadable");
  const fs::path file = dir / "recovery.json";
  ui::RecoveryOffer good;
  good.scenario = cat_sat();
  gui::write_recovery(file, good);
  const std::string whole = read_file(file);
  struct Variant {
    const char* name;
    std::string bytes;
    const char* problem;  // the reason, after "<file>: "
  };
  const std::vector<Variant> variants = {
      {"truncated", whole.substr(0, whole.size() / 2), "line 1, column"},
      {"not JSON", "recovery, but not JSON\n", "line 1, column"},
      {"wrong fields", R"({"scenario": {}, "colour": "red"})", "colour"},
      {"invalid UTF-8", "{\"original\": \"A\xff.json\", \"scenario\": {}}", "line 1, column"},
      {"empty", "", ""},
      {"a wrong stamp", R"({"original": "/a", "original_stamp": {"size": -1, "modified_ns": 0}, "scenario": {}})",
       "original_stamp.size: expected a file size in bytes"},
      {"a wrong path", R"({"original": [300], "scenario": {}})", "original[0]: expected a byte value 0-255"},
  };
  for (const Variant& v : variants) {
    INFO(v.name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(file, std::ios::binary) << v.bytes;
    const gui::FoundRecovery found = gui::find_recovery(file);
    CHECK_FALSE(found.offer.has_value());
    CHECK_FALSE(found.stuck);
    CHECK(found.message.starts_with("The recovery file could not be read (" + file.string() + ": "));
    CHECK(contains(found.message, v.problem));
    CHECK(found.message.ends_with("); it was moved to " + file.string() +
                                  ".unreadable and kept there, nothing was "
                                  "restored"));
    CHECK_FALSE(fs::exists(file));
    CHECK(read_file(file.string() + ".unreadable") == v.bytes);
  }
  // One set aside already: the next goes beside it, never over it.
  std::ofstream(file) << "{";
  const gui::FoundRecovery second = gui::find_recovery(file);
  CHECK(second.message.ends_with("moved to " + file.string() + ".unreadable-2 and kept there, nothing was restored"));
  CHECK(read_file(file.string() + ".unreadable") == variants.back().bytes);
  CHECK(read_file(file.string() + ".unreadable-2") == "{");
  // A folder where the file should be is moved aside too.
  fs::create_directories(file);
  CHECK(gui::find_recovery(file).message.ends_with("moved to " + file.string() +
                                                   ".unreadable-3 and kept there, "
                                                   "nothing was restored"));
  CHECK(fs::is_directory(file.string() + ".unreadable-3"));
  // No file: nothing to say.
  const gui::FoundRecovery none = gui::find_recovery(file);
  CHECK_FALSE(none.offer.has_value());
  CHECK(none.message.empty());
  fs::remove_all(dir);
}

TEST_CASE("a recovery entry too big to read within the budget is kept for a larger one, not offered") {
  const fs::path dir = fresh_dir("recovery_budget");
  const fs::path file = dir / "window-7.json";
  gui::write_recovery(file, {.scenario = cat_sat(), .when = "2026-12-01 10:00"});
  // Reading a file holds its text and ten times it as a tree (below 4 MiB nothing is refused): with 5 MiB of
  // padding, about 58 MiB.
  std::ofstream(file, std::ios::app) << std::string(5 << 20, ' ');
  const std::int64_t size = static_cast<std::int64_t>(fs::file_size(file));
  const gui::FoundRecovery found = gui::find_recovery(file, 32 << 20);
  CHECK_FALSE(found.offer.has_value());
  CHECK(found.stuck);
  CHECK(found.message.starts_with("The unsaved work kept in " + file.string() + " was not offered: "));
  CHECK(contains(found.message, "but the memory budget is 33,554,432 bytes (32.0 MiB)"));
  CHECK(found.message.ends_with("; it is kept for a start with a larger budget"));
  CHECK(static_cast<std::int64_t>(fs::file_size(file)) == size);  // kept as it was, not moved aside
  CHECK_FALSE(fs::exists(file.string() + ".unreadable"));
  CHECK(gui::find_recovery(file, std::int64_t(1) << 30).offer.has_value());  // a larger budget reads it
  // At start: kept, said, and the next start with a larger budget offers it.
  const fs::path config = dir / "config";
  fs::create_directories(gui::recovery_folder(config));
  fs::rename(file, gui::recovery_folder(config) / "window-7.json");
  const gui::OrphanedWork small = gui::take_orphaned_work(config, 32 << 20);
  CHECK_FALSE(small.offer.has_value());
  CHECK(contains(small.message, "it is kept for a start with a larger budget"));
  CHECK(fs::exists(gui::recovery_folder(config) / "window-7.json"));
  CHECK(gui::take_orphaned_work(config, std::int64_t(1) << 30).offer.has_value());
  fs::remove_all(dir);
}

TEST_CASE("a recovery file that can be neither read nor moved stays where it is") {
  const fs::path dir = fresh_dir("recovery_stuck");
  // A name with no room for ".unreadable" (255 bytes at most): nowhere to move it, even as root.
  const fs::path file = dir / (std::string(240, 'r') + ".json");
  std::ofstream(file) << "{";
  const gui::FoundRecovery found = gui::find_recovery(file);
  CHECK(found.stuck);
  CHECK_FALSE(found.offer.has_value());
  CHECK(contains(found.message, "nor moved aside (File name too long); it is kept as it is"));
  CHECK(read_file(file) == "{");
  fs::remove_all(dir);
}

TEST_CASE("a path that is not UTF-8 goes through the recovery file byte for byte, and is shown escaped") {
  const fs::path dir = fresh_dir("recovery_bytes");
  const fs::path a = write_scenario(dir / "b\xff.json", 7, "bytes");
  const ui::RecoveryOffer r = killed_after_an_edit(a, dir / "recovery.json");
  CHECK(r.original == fs::canonical(a));
  CHECK(r.original.native().ends_with("/b\xff.json"));
  CHECK(contains(read_file(dir / "recovery.json"), "\"original\":["));  // its bytes, one number each
  CHECK(contains(read_file(dir / "recovery.json"), ",98,255,46,106,115,111,110]"));
  ui::AppState state(cat_sat(), "");
  REQUIRE(ui::restore_unsaved_work(state, r));
  CHECK(state.document().path == fs::canonical(a));
  CHECK(state.window_title() == "Attention Lab \u2014 bytes (b\\xff.json, recovered) \u2022 unsaved");
  CHECK(contains(state.message, "/b\\xff.json"));
  ui::save_document(state, state.document().path);
  CHECK(load_scenario_file(a).seed == 8);
  CHECK(state.message == "Saved " + shown_path(fs::canonical(a)));
  fs::remove_all(dir);
}

TEST_CASE("bytes that are not UTF-8 are shown as \\xHH, well-formed characters as they are") {
  CHECK(escaped_text("b\xff.json") == "b\\xff.json");
  CHECK(escaped_text("\xe7\x8c\xab.json") == "\xe7\x8c\xab.json");    // 猫
  CHECK(escaped_text("\xc0\xaf") == "\\xc0\\xaf");                    // an overlong "/"
  CHECK(escaped_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // a surrogate
  CHECK(escaped_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(escaped_text("a\xe7\x8c") == "a\\xe7\\x8c");                  // cut short
  CHECK(is_utf8("\xf0\x9f\x98\x80"));
  CHECK_FALSE(is_utf8("\x80"));
}

namespace {

gui::GuiOptions window_options(const std::vector<std::string>& words) { return gui::parse_gui_args(words); }

}  // namespace

TEST_CASE("--lesson by file name, its order number one digit or two") {
  for (const char* file : {"3_masks.json", "10_model.json", "12_real_model.json"}) {
    CAPTURE(file);
    std::ostringstream err;
    const std::unique_ptr<ui::AppState> state = gui::start_state(window_options({"--lesson", file}), err);
    REQUIRE(state != nullptr);
    CHECK(err.str().empty());
    const std::string stem = std::filesystem::path(file).stem().string();
    CHECK(state->lesson.current().name == stem.substr(stem.find('_') + 1));
  }
}

TEST_CASE("a broken lesson or presets file is named with what is wrong, not called unknown or missing") {
  const fs::path dir = fresh_dir("broken_assets");
  const fs::path fa = dir / "fa";
  fs::copy(ATTN_ASSETS_DIR, fa, fs::copy_options::recursive);
  std::ofstream(fa / "lessons" / "3_masks.json", std::ios::trunc) << R"({"title": 5})";
  std::ofstream(fa / "presets" / "models.json", std::ios::trunc) << "[\n";
  const test::ScopedEnv assets("ATTENTION_LAB_ASSETS", fa.string());
  const std::string shot = (dir / "l.png").string();

  std::ostringstream err;
  CHECK(gui::start_state(window_options({"--lesson", "masks", "--screenshot", shot}), err) == nullptr);
  CHECK(err.str() == "attention-lab: --lesson: the lesson 'masks' could not be read: " +
                         (fa / "lessons" / "3_masks.json").string() + ": name: missing (required)\n");
  std::ostringstream by_file;
  CHECK(gui::start_state(window_options({"--lesson", "3_masks.json", "--screenshot", shot}), by_file) == nullptr);
  CHECK(by_file.str().starts_with("attention-lab: --lesson: the lesson '3_masks.json' could not be read: "));

  // The Memory view and the status line say the presets file could not be read and why; the lesson's problem is
  // not lost behind it.
  std::ostringstream quiet;
  const std::unique_ptr<ui::AppState> state =
      gui::start_state(window_options({"--view", "memory", "--screenshot", shot}), quiet);
  REQUIRE(state != nullptr);
  const std::string presets = "The model presets could not be read (" + (fa / "presets" / "models.json").string() +
                              "): line 2, column 1: not valid JSON";
  CHECK(state->models.presets_problem.starts_with(presets));
  CHECK(state->message == state->models.presets_problem);
  CHECK(state->more_messages == std::vector<std::string>{"Lesson 3_masks.json left out: name: missing (required)"});
  state->message.clear();  // dismissed: the next one is shown
  state->next_message();
  CHECK(state->message == "Lesson 3_masks.json left out: name: missing (required)");
  CHECK(state->more_messages.empty());
  fs::remove_all(dir);
}

TEST_CASE("an unreadable recovery file does not hide the settings' problem: both reach the status line") {
  const fs::path dir = fresh_dir("settings_and_recovery"), config = dir / "config";
  fs::create_directories(config);
  std::ofstream(config / "settings.json") << R"({"zoom": 999, "theme": "pink"})";
  std::ofstream(config / "recovery.json") << "recovery, but not JSON\n";
  ui::AppState state(cat_sat(), asset("the_cat_sat.json"));
  std::string problem;
  gui::load_settings(config / "settings.json", &problem);
  REQUIRE_FALSE(problem.empty());
  state.add_message("Settings: " + problem);  // as the window reads its settings, then starts its autosave
  gui::Autosave autosave = gui::Autosave::start(config, state);
  CHECK(state.message == "Settings: " + problem);
  REQUIRE(state.more_messages.size() == 1);
  CHECK(state.more_messages[0].starts_with("The recovery file could not be read (" +
                                           (config / "recovery.json").string() + ": "));
  autosave.finish();
  fs::remove_all(dir);
}

TEST_CASE("a preset the model views could not draw is left out and said, not a crash when its view opens") {
  ModelShape huge;  // every field within kv's limits, and kv's default 32,768 tokens fit in 64 bits
  huge.name = "huge";
  huge.layers = 4096;
  huge.heads = huge.kv_heads = 65536;
  huge.head_dim = 4096;
  CHECK(kv_cache_size(huge, 32768, 1, Dtype::BF16).total_bytes == 144'115'188'075'855'872);  // 2^57
  CHECK(ui::preset_beyond_views(huge) ==
        "its KV cache as mha at 1,048,576 tokens, batch 1,024 and fp32 passes what 64-bit numbers count, so the "
        "model views could not draw it");
  const fs::path dir = fresh_dir("huge_preset");
  const fs::path fa = dir / "fa";
  fs::copy(ATTN_ASSETS_DIR, fa, fs::copy_options::recursive);
  nlohmann::json presets = nlohmann::json::parse(read_file(fa / "presets" / "models.json"));
  presets["models"].push_back({{"name", "huge"},
                               {"source", "a test"},
                               {"variant", "mha"},
                               {"layers", 4096},
                               {"d_model", 65536},
                               {"heads", 65536},
                               {"kv_heads", 65536},
                               {"head_dim", 4096}});
  std::ofstream(fa / "presets" / "models.json", std::ios::trunc) << presets.dump();
  const test::ScopedEnv assets("ATTENTION_LAB_ASSETS", fa.string());
  std::ostringstream quiet;
  const std::unique_ptr<ui::AppState> state =
      gui::start_state(window_options({"--view", "memory", "--screenshot", (dir / "m.png").string()}), quiet);
  REQUIRE(state != nullptr);
  CHECK(state->message == "Preset huge left out (" + (fa / "presets" / "models.json").string() +
                              "): its KV cache as mha at 1,048,576 tokens, batch 1,024 and fp32 passes what 64-bit "
                              "numbers count, so the model views could not draw it");
  CHECK(state->models.presets.size() + 1 == presets["models"].size());
  for (const ModelShape& m : state->models.presets) CHECK_FALSE(ui::preset_beyond_views(m).has_value());
  fs::remove_all(dir);
}

TEST_CASE("the window's start-up errors show a path's bytes that are not UTF-8 escaped") {
  const fs::path dir = fresh_dir("bytes_paths");
  const std::string shot = (dir / "s.png").string();
  std::ostringstream missing;
  CHECK(gui::start_state(window_options({(dir / "missing\xff.json").string(), "--screenshot", shot}), missing) ==
        nullptr);
  CHECK(missing.str() == "attention-lab: " + dir.string() + "/missing\\xff.json: no such file\n");
  const fs::path scenario = dir / "cat\xff.json";
  fs::copy_file(asset("the_cat_sat.json"), scenario);
  std::ostringstream model;
  CHECK(gui::start_state(window_options({"--model", scenario.string(), "--screenshot", shot}), model) == nullptr);
  CHECK(model.str().starts_with("attention-lab: " + dir.string() + "/cat\\xff.json: this is a scenario file"));
  fs::remove_all(dir);
}

TEST_CASE("--layer of a layer that does not fit the budget says so, not that the layer is missing") {
  const fs::path dir = fresh_dir("layer_budget");
  const fs::path model = dir / "wide.json";
  std::ofstream(model) << R"({"name": "wide", "vocab": ["a", "b"], "d_model": 64, "max_positions": 4096,
    "positions": "none", "norm": "none", "layers": [{"attention": {"heads": 8, "head_dim": 8, "mask": "causal"}}]})";
  std::string tokens = "a";
  for (int i = 1; i < 1500; ++i) tokens += " a";
  std::ostringstream err;
  CHECK(gui::start_state(
            window_options({"--model", model.string(), "--model-tokens", tokens, "--layer", "0", "--memory-budget",
                            "600M", "--size", "1280x720", "--screenshot", (dir / "s.png").string()}),
            err) == nullptr);
  CHECK(
      err.str().starts_with("attention-lab: --layer: layer 0 as the pipeline's document: this document in the "
                            "window needs "));
  CHECK(contains(err.str(), " but the memory budget is 629,145,600 bytes (600 MiB), of which "));
  fs::remove_all(dir);
}
