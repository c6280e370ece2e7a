// The document's files as File > Open, Save and Export do them (ui/logic/document_files): the outcome is
// written to the status line, a file that cannot be read leaves the document as it was, and an export never
// writes over a file.
#include <fstream>
#include <sstream>

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
  CHECK(read_file(dir / "the_cat_sat_trace.json")
            .starts_with(R"({"name":"the cat sat","tokens":["the","cat","sat"],)"));
  CHECK(state.message == "Exported " + (dir / "the_cat_sat_trace.json").string());
}
