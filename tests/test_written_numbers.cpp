// Numbers in messages are quoted as the user wrote them: a number past 64 bits (18446744073709551616) or written
// as a float (1e3) is held by the tree as a double, which would print as 1.8446744073709552e+19 or 1000.0. Every
// file the lab reads: scenario, model, presets, lesson, batches, settings and recovery.
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/gui/user_files.h"
#include "core/io/batches_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/presets_json.h"
#include "core/io/scenario_json.h"
#include "core/text_format.h"
#include "helpers.h"
#include "ui/logic/lessons.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

// A scenario whose attention block has `heads` written as given.
std::string scenario_with_written_heads(const std::string& heads) {
  return R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "attention": {"heads": )" + heads +
         R"(, "head_dim": 2}})";
}

// What reading `read` refuses with, or "(no error)".
template <class Read>
std::string number_refusal(Read read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A model file with one value written as given, at the place of the string "@" in an otherwise valid model.
std::string model_with_number(const std::string& written, void (*place)(nlohmann::json&)) {
  nlohmann::json m = {{"vocab", {"x", "y"}},
                      {"d_model", 2},
                      {"max_positions", 4},
                      {"layers", {{{"attention", {{"heads", 1}, {"head_dim", 2}}}}}}};
  place(m);
  std::string text = m.dump();
  text.replace(text.find("\"@\""), 3, written);
  return text;
}

fs::path written_file(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

}  // namespace

TEST_CASE("a scenario's integer past 64 bits or written as a float is quoted as written") {
  const auto heads = [](const std::string& written) {
    return number_refusal([&] { parse_scenario(scenario_with_written_heads(written)); });
  };
  CHECK(heads("18446744073709551616") == "attention.heads: expected an integer but found number 18446744073709551616");
  CHECK(heads("1e3") == "attention.heads: expected an integer but found number 1e3");
  CHECK(heads("2.50") == "attention.heads: expected an integer but found number 2.50");
  CHECK(heads("-1E+2") == "attention.heads: expected an integer but found number -1E+2");
  // Integers of 64 bits were exact already, and stay as they were.
  CHECK(heads("18446744073709551615") == "attention.heads: must be <= 256 (found 18446744073709551615)");
  CHECK(heads("-9223372036854775808") == "attention.heads: must be >= 1 (found -9223372036854775808)");
  // A number of hundreds of digits is quoted by its first 40, as the parser's "number too large" is.
  CHECK(heads("1" + std::string(59, '0')) ==
        "attention.heads: expected an integer but found number 1000000000000000000000000000000000000000\u2026, 60 "
        "digits");
  // The seed, the context's fields and the sparse block read the same way.
  CHECK(number_refusal([] { parse_scenario(R"({"seed": 1e3, )" + scenario_with_written_heads("1").substr(1)); }) ==
        "seed: expected a non-negative integer but found number 1e3");
  CHECK(number_refusal([] {
          parse_scenario(R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "attention": {"heads": 1,
            "head_dim": 2, "sparse": {"top_k": 18446744073709551616.0}}})");
        }) == "attention.sparse.top_k: expected an integer but found number 18446744073709551616.0");
}

TEST_CASE("a scenario file's integer is quoted as written on the command line too") {
  const fs::path dir = fresh_dir("written-numbers-cli");
  const fs::path file = written_file(dir / "s.json", scenario_with_written_heads("1e3"));
  const Run r = run({"trace", file.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + file.string() + ": attention.heads: expected an integer but found number 1e3\n");
  fs::remove_all(dir);
}

TEST_CASE("floats that are floats still read as numbers: weights of 1e3 and 0.25 are 1000 and 0.25") {
  const Scenario s = parse_scenario(
      R"({"tokens": ["a", "b"], "embeddings": [[1e3, 0.25], [2.50, -1E-2]], "attention": {"heads": 1, "head_dim": 2}})");
  CHECK(s.input.embeddings(0, 0) == 1000.0);
  CHECK(s.input.embeddings(0, 1) == 0.25);
  CHECK(s.input.embeddings(1, 0) == 2.5);
  CHECK(s.input.embeddings(1, 1) == -0.01);
}

TEST_CASE("a model file's integer fields, in every layer, are quoted as written") {
  const auto model = [](const std::string& text) { return number_refusal([&] { parse_model(text); }); };
  CHECK(model(model_with_number("1e3", [](nlohmann::json& m) { m["d_model"] = "@"; })) ==
        "d_model: expected an integer but found number 1e3");
  CHECK(model(model_with_number("4.0", [](nlohmann::json& m) { m["max_positions"] = "@"; })) ==
        "max_positions: expected an integer but found number 4.0");
  // A layer's attention is read from a copy with the model's positions added: still quoted from the file.
  CHECK(model(model_with_number("18446744073709551616", [](nlohmann::json& m) {
          m["layers"][0]["attention"]["heads"] = "@";
        })) == "layers[0].attention.heads: expected an integer but found number 18446744073709551616");
  CHECK(model(model_with_number("8e0", [](nlohmann::json& m) {
          m["ffn"] = {{"kind", "relu"}, {"d_ff", "@"}};
        })) == "ffn.d_ff: expected an integer but found number 8e0");
  CHECK(model(model_with_number("1e20", [](nlohmann::json& m) {
          m["positions"] = "rope";
          m["rope_base"] = "@";
        })) == "rope_base: expected a number in [1, 1e12] but found 1e20");
  CHECK(model(model_with_number("1e3", [](nlohmann::json& m) { m["seed"] = "@"; })) ==
        "seed: expected a non-negative integer but found number 1e3");
}

TEST_CASE("a presets file's integers are quoted as written") {
  const std::string entry = R"({"name": "m", "source": "s", "variant": "gqa", "layers": 2, "d_model": 64, "heads": 4,
    "head_dim": 16, "kv_heads": )";
  CHECK(number_refusal([&] { parse_presets(R"({"models": [)" + entry + "2e0}]}"); }) ==
        "models[0].kv_heads: expected an integer but found number 2e0");
  CHECK(number_refusal([&] { parse_presets(R"({"models": [)" + entry + "2}, 1e3]}"); }) ==
        "models[1]: expected an object but found number 1e3");
}

TEST_CASE("a batches file's token ids are quoted as written, past 64 bits and as floats") {
  Model m;
  m.vocab = {"t0", "t1", "t2"};
  m.max_positions = 8;
  const auto ids = [&m](const std::string& second) {
    return number_refusal([&] { parse_batches(R"({"batches": [[[1, )" + second + "]]]}", m, 1 << 30); });
  };
  CHECK(ids("18446744073709551616") == "batches[0][0][1]: expected a token id but found number 18446744073709551616");
  CHECK(ids("1e3") == "batches[0][0][1]: expected a token id but found number 1e3");
  CHECK(ids("1" + std::string(59, '0')) ==
        "batches[0][0][1]: expected a token id but found number 1000000000000000000000000000000000000000\u2026, 60 "
        "digits");
  CHECK(ids("18446744073709551615") == "batches[0][0][1]: must be <= 2 (found 18446744073709551615)");
}

TEST_CASE("a settings file's number too large for an int is clamped, and quoted as written") {
  const fs::path dir = fresh_dir("written-numbers-settings");
  const fs::path file = written_file(dir / "settings.json", R"({"width": 1e20, "height": 1e3})");
  std::string problem;
  const gui::Settings s = gui::load_settings(file, &problem);
  CHECK(s.width == 8192);
  CHECK(s.height == 1000);
  CHECK(problem == shown_path(file) + ": width: must be from 640 to 8192 (found 1e20); 8192 is used");
  // A memory budget of bytes is read by its value (3e9 is 3,000,000,000 bytes), a refusal quotes it as written.
  written_file(file, R"({"memory_budget": 3e9})");
  CHECK(gui::load_settings(file, &problem).memory_budget == 3000000000);
  written_file(file, R"({"memory_budget": 1e20})");
  problem.clear();
  CHECK_FALSE(gui::load_settings(file, &problem).memory_budget.has_value());
  CHECK(problem == shown_path(file) +
                       ": memory_budget: expected a size such as 3221225472, 512M, 2G or 1.5GiB (K, M, G, T are "
                       "1024-based, KB, MB, GB, TB 1000-based) but found '1e20'; the machine's default is used");
  fs::remove_all(dir);
}

TEST_CASE("a lesson page's numbers are quoted as written") {
  const fs::path dir = fresh_dir("written-numbers-lesson");
  const fs::path scenarios = fs::path(ATTN_ASSETS_DIR) / "scenarios";
  const auto page = [&](const std::string& fields) {
    const fs::path file = written_file(dir / "l.json", R"({"name": "n", "title": "t", "summary": "s", "pages": [
      {"title": "p", "text": "x", "scenario": "the_cat_sat.json", )" +
                                                           fields + "}]}");
    return number_refusal([&] { ui::load_lesson_file(file, scenarios); });
  };
  const std::string step = page(R"("step": 1e3)");
  CHECK(step.starts_with("pages[0].step: expected one of "));
  CHECK(step.ends_with(" but found number 1e3"));
  CHECK(page(R"("head": 18446744073709551616)") ==
        "pages[0].head: expected an integer but found number 18446744073709551616");
  CHECK(page(R"("highlight": [[0, 0], [1e3, 2]])") ==
        "pages[0].highlight[1]: expected [row, column], two integers from 0, but found [1e3,2]");
  CHECK(page(R"("online": {"row": 0, "block": 2.0})") ==
        "pages[0].online.block: expected an integer but found number 2.0");
  CHECK(page(R"("overrides": {"window": 5e0})") ==
        "pages[0].overrides.window: expected an integer but found number 5e0");
  fs::remove_all(dir);
}

TEST_CASE("a recovery file's scenario and model are quoted as written, each at its own place in the file") {
  const fs::path dir = fresh_dir("written-numbers-recovery");
  const fs::path file = written_file(
      dir / "recovery.json", R"({"original": "/tmp/a.json", "scenario": )" + scenario_with_written_heads("1e3") + "}");
  std::string problem;
  CHECK_FALSE(gui::read_recovery(file, &problem).has_value());
  CHECK(problem == shown_path(file) + ": attention.heads: expected an integer but found number 1e3");
  written_file(file, R"({"original": "/tmp/a.json", "scenario": )" + scenario_with_written_heads("1") +
                         R"(, "model": {"original": "/tmp/m.json", "tokens": [], "model": )" +
                         model_with_number("18446744073709551616", [](nlohmann::json& m) { m["d_model"] = "@"; }) +
                         "}}");
  CHECK_FALSE(gui::read_recovery(file, &problem).has_value());
  CHECK(problem ==
        shown_path(file) + ": model.model.d_model: expected an integer but found number 18446744073709551616");
  fs::remove_all(dir);
}

TEST_CASE("written_value finds a number by its path through objects and arrays, and leaves others to dump") {
  const std::string text = R"({"a": [1, {"b.c": [2.50, 3]}], "a.b": 1e3})";
  const JsonSource source{text, ""};
  const nlohmann::json j = parse_json_document(text);
  CHECK(written_value(j["a"][1]["b.c"][0], "a[1].b.c[0]", &source) == "2.50");
  CHECK(written_value(j["a.b"], "a.b", &source) == "1e3");
  CHECK(written_value(j["a"][1]["b.c"][1], "a[1].b.c[1]", &source) == "3");
  CHECK(written_value(j["a.b"], "a.b", nullptr) == "1000.0");
  const JsonSource below = source.under("a[1]");
  CHECK(below.at == "a[1]");
  CHECK(written_value(j["a"][1]["b.c"][0], "b.c[0]", &below) == "2.50");
  CHECK(describe_found(j["a.b"], "a.b", &source) == "number 1e3");
}
