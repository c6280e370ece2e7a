// The document's files as File > Open, Save and Export do them (ui/logic/document_files): the outcome is
// written to the status line, a file that cannot be read leaves the document as it was, and an export never
// writes over a file.
#include <chrono>
#include <fstream>
#include <sstream>

#include "checkpoint_folders.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "helpers.h"
#include "ui/logic/document_files.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;
namespace fs = std::filesystem;

TEST_CASE("opening a file that cannot be read says why and keeps the document") {
  const fs::path dir = fresh_dir("open");
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  std::ofstream(dir / "broken.json") << "{\"name\": \"x\", ";
  open_document(state, dir / "broken.json");
  CHECK(state.message.starts_with("Could not open " + (dir / "broken.json").string() + ": "));
  CHECK(state.message.ends_with(" (the current scenario is kept)"));
  CHECK(state.scenario().name == "the cat sat");
  CHECK(state.recent_files.empty());

  open_document(state, asset("the_lazy_dog.json"));
  CHECK(state.message.empty());
  CHECK(state.scenario().name == "the lazy dog");
  CHECK(state.document().path == asset("the_lazy_dog.json"));
  CHECK(state.recent_files ==
        std::vector<std::string>{fs::absolute(asset("the_lazy_dog.json")).lexically_normal().string()});
}

TEST_CASE("saving writes the document, marks it saved and puts the file first in the recent files") {
  const fs::path dir = fresh_dir("save");
  AppState state(cat_sat(), "");
  REQUIRE(state.edit([](Scenario& s) { s.name = "edited"; }));
  REQUIRE(state.document().dirty());
  save_document(state, dir / "mine.json");
  CHECK(state.message == "Saved " + (dir / "mine.json").string());
  CHECK_FALSE(state.document().dirty());
  CHECK(state.document().path == dir / "mine.json");
  CHECK(read_file(dir / "mine.json") == scenario_to_text(state.scenario()));
  CHECK(state.recent_files.front() == (dir / "mine.json").string());

  save_document(state, dir / "no such folder" / "mine.json");
  CHECK(state.message.starts_with("Not saved: "));
  CHECK(state.document().path == dir / "mine.json");  // still the file it was saved to
}

TEST_CASE("exports go beside the document, each under a new name") {
  const fs::path dir = fresh_dir("export");
  AppState state(cat_sat(), "");
  save_document(state, dir / "cat.json");
  state.handout = [](std::ostream& out, const Trace& t, bool latex) {
    out << (latex ? "latex " : "markdown ") << t.tokens.size();
  };
  export_document(state, "md");
  CHECK(state.message == "Exported " + (dir / "the_cat_sat_trace.md").string());
  CHECK(read_file(dir / "the_cat_sat_trace.md") == "markdown 3");
  export_document(state, "md");
  CHECK(state.message == "Exported " + (dir / "the_cat_sat_trace-2.md").string());
  export_document(state, "json");
  CHECK(
      read_file(dir / "the_cat_sat_trace.json").starts_with(R"({"name":"the cat sat","tokens":["the","cat","sat"],)"));
  CHECK(state.message == "Exported " + (dir / "the_cat_sat_trace.json").string());
}

TEST_CASE("a document from the lab's own folders is never saved there: Save asks, exports go elsewhere") {
  const fs::path dir = fresh_dir("save-lab-folder");
  const fs::path lab = dir / "assets", mine = dir / "mine";
  fs::create_directories(lab / "scenarios");
  fs::create_directories(mine);
  const fs::path example = lab / "scenarios" / "cat.json";
  save_scenario_file(cat_sat(), example);
  const std::string before = read_file(example);
  AppState state(cat_sat(), example);
  state.lab_folders = {lab, dir / "config"};
  CHECK_FALSE(saves_in_place(state, example));
  CHECK(saves_in_place(state, mine / "cat.json"));
  CHECK_FALSE(saves_in_place(state, ""));
  REQUIRE(state.edit([](Scenario& s) { s.name = "edited"; }));
  save_document(state, example);  // Ctrl+S, had the window not asked where
  CHECK(state.message == "Not saved: " + example.string() + " is in the lab's own folder (" + lab.string() +
                             "), which it reads its examples and settings from; save your copy elsewhere with Save As");
  CHECK(read_file(example) == before);
  CHECK(state.document().dirty());
  save_document(state, lab / "new.json");  // Save As into the folder
  CHECK(state.message.starts_with("Not saved: " + (lab / "new.json").string() + " is in the lab's own folder ("));
  CHECK_FALSE(fs::exists(lab / "new.json"));
  // Save As starts on the same name outside: beside the user's own document, else the current folder or home.
  const fs::path here = fs::current_path();
  fs::current_path(lab / "scenarios");
  const ScopedEnv home("HOME", mine.string());
  CHECK(output_folder(state) == mine);
  CHECK(save_as_start(state, example) == mine / "cat.json");
  CHECK(save_as_start(state, mine / "other.json") == mine / "other.json");
  state.handout = [](std::ostream& out, const Trace&, bool) { out << "handout"; };
  export_document(state, "md");
  CHECK(state.message == "Exported " + (mine / "edited_trace.md").string());
  CHECK_FALSE(fs::exists(lab / "scenarios" / "edited_trace.md"));
  fs::current_path(here);
  save_document(state, mine / "cat.json");
  CHECK(state.message == "Saved " + (mine / "cat.json").string());
  CHECK(output_folder(state) == mine);  // beside the user's file now
  fs::remove_all(dir);
}

namespace {

// Another program's version of `file`: other bytes of another size, a later modification time.
void replace_from_outside(const fs::path& file, const std::string& bytes) {
  const auto before = fs::last_write_time(file);
  {
    std::ofstream out(file, std::ios::trunc);
    out << bytes;
  }
  fs::last_write_time(file, before + std::chrono::seconds(3));
}

}  // namespace

TEST_CASE("Save over a file changed on disk since it was opened asks first and writes nothing") {
  const fs::path dir = fresh_dir("save_changed");
  const fs::path file = dir / "docC.json";
  save_scenario_file(cat_sat(), file);
  AppState state(load_scenario_file(file), file);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 8; }));
  const std::string outside = scenario_to_text(load_scenario_file(asset("the_lazy_dog.json")));
  replace_from_outside(file, outside);

  save_document(state, file);  // Ctrl+S
  CHECK(read_file(file) == outside);
  REQUIRE(state.save_conflict.has_value());
  CHECK(state.save_conflict->question == file.string() + " has changed on disk since it was opened or last saved.");
  CHECK_FALSE(state.save_conflict->model);
  CHECK(state.save_conflict->path == file);
  CHECK(state.message == "Not saved: " + file.string() + " has changed on disk since it was opened or last saved");
  CHECK(state.document().dirty());

  // Overwrite: written, and the stamp renewed, so the next Save writes without asking.
  state.save_conflict.reset();
  save_document(state, file, SaveOver::Overwrite);
  CHECK(state.message == "Saved " + file.string());
  CHECK(load_scenario_file(file).seed == 8);
  CHECK(state.document().stamp == file_stamp(file));
  REQUIRE(state.edit([](Scenario& s) { s.seed = 9; }));
  save_document(state, file);
  CHECK_FALSE(state.save_conflict.has_value());
  CHECK(load_scenario_file(file).seed == 9);
  CHECK(state.document().stamp == file_stamp(file));
  CHECK_FALSE(state.document().dirty());

  // Changed again after that save: asked again.
  REQUIRE(state.edit([](Scenario& s) { s.seed = 10; }));
  replace_from_outside(file, outside);
  save_document(state, file);
  CHECK(state.save_conflict.has_value());
  CHECK(read_file(file) == outside);

  // Saved as another file: no question, that file is the document's now.
  state.save_conflict.reset();
  save_document(state, dir / "other.json");
  CHECK_FALSE(state.save_conflict.has_value());
  CHECK(load_scenario_file(dir / "other.json").seed == 10);
  CHECK(read_file(file) == outside);
  fs::remove_all(dir);
}

TEST_CASE("Save through a link to a changed file, or to a file gone since, asks too") {
  const fs::path dir = fresh_dir("save_changed_link");
  const fs::path target = dir / "docC.json", link = dir / "link.json";
  save_scenario_file(cat_sat(), target);
  fs::create_symlink(target, link);
  AppState state(load_scenario_file(link), link);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 8; }));
  replace_from_outside(target, "{}");
  save_document(state, link);
  REQUIRE(state.save_conflict.has_value());
  CHECK(state.save_conflict->question == link.string() + " has changed on disk since it was opened or last saved.");
  CHECK(read_file(target) == "{}");
  CHECK(fs::is_symlink(link));

  state.save_conflict.reset();
  fs::remove(target);
  save_document(state, link);
  REQUIRE(state.save_conflict.has_value());
  CHECK(state.save_conflict->question ==
        link.string() + " is no longer on disk (deleted or moved since it was opened or last saved).");
  CHECK_FALSE(fs::exists(target));
  fs::remove_all(dir);
}

TEST_CASE("Save of the model over its file changed on disk asks too") {
  const fs::path dir = fresh_dir("save_model_changed");
  const fs::path file = dir / "model.json";
  fs::copy_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json", file);
  AppState state(cat_sat(), "");
  open_model_document(state, file);
  REQUIRE(state.model_doc.path() == file);
  state.reseed_in_view();
  REQUIRE(state.model_doc.dirty());
  replace_from_outside(file, "{\"changed\": true}");
  save_model_document(state, file);
  REQUIRE(state.save_conflict.has_value());
  CHECK(state.save_conflict->model);
  CHECK(state.save_conflict->question == file.string() + " has changed on disk since it was opened or last saved.");
  CHECK(read_file(file) == "{\"changed\": true}");
  save_model_document(state, file, SaveOver::Overwrite);
  CHECK(state.message == "Saved " + file.string());
  CHECK_FALSE(state.model_doc.dirty());
  CHECK(state.model_doc.stamp() == file_stamp(file));
  fs::remove_all(dir);
}

TEST_CASE("Save As onto another file that exists asks before replacing it") {
  const fs::path dir = fresh_dir("save_as_existing");
  const fs::path mine = dir / "W.json", other = dir / "V.json";
  save_scenario_file(cat_sat(), mine);
  const std::string theirs = scenario_to_text(load_scenario_file(asset("the_lazy_dog.json")));
  std::ofstream(other, std::ios::binary) << theirs;
  AppState state(load_scenario_file(mine), mine);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 8; }));

  save_document(state, other);  // Save As, V.json typed in the dialog
  CHECK(read_file(other) == theirs);
  REQUIRE(state.save_conflict.has_value());
  CHECK(state.save_conflict->question == "Replace " + other.string() + "? It already exists.");
  CHECK(state.save_conflict->replace);
  CHECK_FALSE(state.save_conflict->model);
  CHECK(state.save_conflict->path == other);
  CHECK(state.message == "Not saved: " + other.string() + " already exists");
  CHECK(state.document().path == mine);
  CHECK(state.document().dirty());

  // Replace: written, and V.json is the document's file from now on, saved without asking.
  state.save_conflict.reset();
  save_document(state, other, SaveOver::Overwrite);
  CHECK(state.message == "Saved " + other.string());
  CHECK(load_scenario_file(other).seed == 8);
  CHECK(state.document().path == other);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 9; }));
  save_document(state, other);
  CHECK_FALSE(state.save_conflict.has_value());
  CHECK(load_scenario_file(other).seed == 9);

  // A document without a file asks too, and so does the model.
  AppState untitled(cat_sat(), "");
  save_document(untitled, mine);
  REQUIRE(untitled.save_conflict.has_value());
  CHECK(untitled.save_conflict->question == "Replace " + mine.string() + "? It already exists.");
  CHECK(load_scenario_file(mine).seed == cat_sat().seed);
  const fs::path model = dir / "model.json";
  fs::copy_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json", model);
  untitled.save_conflict.reset();
  open_model_document(untitled, model);
  save_model_document(untitled, mine);
  REQUIRE(untitled.save_conflict.has_value());
  CHECK(untitled.save_conflict->model);
  CHECK(untitled.save_conflict->question == "Replace " + mine.string() + "? It already exists.");
  CHECK(load_scenario_file(mine).seed == cat_sat().seed);
  fs::remove_all(dir);
}

TEST_CASE("a model folder opens in the Real model view and comes first in Open recent, marked as a folder") {
  const fs::path folder = gpt2_folder("recent-folder", gpt2_tensors());
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  open_document(state, asset("the_lazy_dog.json"));
  open_model_folder(state, folder);
  CHECK(state.view == View::Real);
  CHECK(state.real_model.folder() == folder);
  CHECK(state.real_view.folder_text == folder.string());
  const std::string entry = fs::absolute(folder).lexically_normal().string() + "/";
  REQUIRE(state.recent_files.size() == 2);
  CHECK(state.recent_files[0] == entry);
  CHECK(recent_is_folder(state.recent_files[0]));
  CHECK_FALSE(recent_is_folder(state.recent_files[1]));  // the_lazy_dog.json
  state.wait();
  CHECK(state.real_model.state().text == kRealModelStartingText);
  INFO(state.real_model.failure());
  CHECK(state.real_model.failure().starts_with("text: "));  // past the 3 positions of this model: said, not run
  CHECK(state.scenario().name == "the lazy dog");           // the document stays
  state.real_model.set_text("ab");
  state.wait();
  CHECK(state.real_model.loaded());

  // The recent entry (with its "/") opens the same folder again, once in the list, as does File > Open on it.
  state.view = View::Pipeline;
  open_document(state, state.recent_files[1]);
  REQUIRE(state.recent_files.size() == 2);
  CHECK(state.recent_files[0] == fs::absolute(asset("the_lazy_dog.json")).lexically_normal().string());
  open_document(state, entry);
  CHECK(state.view == View::Real);
  CHECK(state.real_model.state().text == "ab");  // the text shown is kept
  state.wait();
  CHECK(state.real_model.shown().text.pieces == std::vector<std::string>{"a", "b"});
  CHECK(state.recent_files ==
        std::vector<std::string>{entry, fs::absolute(asset("the_lazy_dog.json")).lexically_normal().string()});
  std::vector<std::string> recent;
  remember_recent_folder(recent, folder / "");
  remember_recent_folder(recent, folder);
  CHECK(recent == std::vector<std::string>{entry});
}
