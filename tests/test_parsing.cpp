// Reading without amplification and numbers as written: nesting past the depth limit and documents of many tiny
// values are refused before a tree is built, the library's jargon never reaches a message, integers never wrap, a
// found value never prints like its limit, and options are given once.
#include <filesystem>
#include <fstream>
#include <string>

#include "app/gui/user_files.h"
#include "core/io/batches_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

const std::string kModel = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";  // 8 tokens, 32 positions

std::string written(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
  return file.string();
}

}  // namespace

TEST_CASE("nesting past 64 levels is refused where it passes the limit, before any tree is built") {
  CHECK(kMaxJsonDepth == 64);
  CHECK_THROWS_WITH_AS(parse_scenario(std::string(65, '[')),
                       "line 1, column 65: nested deeper than 64 levels (the limit for every file)", InputError);
  CHECK_THROWS_WITH_AS(parse_json_document("{\n  \"a\": " + std::string(70, '[')),
                       "line 2, column 71: nested deeper than 64 levels (the limit for every file)", InputError);
  // 64 levels are read (and then refused for what they are, not for their depth).
  CHECK_THROWS_WITH_AS(parse_scenario(std::string(64, '[') + std::string(64, ']')),
                       "scenario: expected an object but found array", InputError);
  // A bracket inside a string is text, not nesting.
  CHECK_THROWS_WITH_AS(parse_json_document("[\"[[[\\\"[[[\", " + std::string(64, '[')),
                       "line 1, column 77: nested deeper than 64 levels (the limit for every file)", InputError);
}

TEST_CASE("a document whose tree would be many times its text is refused before the tree is built") {
  std::string lists = "[";
  for (int i = 0; i < 200000; ++i) lists += "[],";
  lists += "[]]";
  CHECK_THROWS_WITH_AS(parse_json_document(lists),
                       "too many small values for its size of 600,004 bytes (586 KiB): reading it would take more "
                       "than 10 times that in memory. The files the lab reads hold rows of numbers, not many tiny "
                       "lists or values: check that this is the file meant, or split it into smaller files",
                       InputError);
  // One list of three million numbers: nlohmann frees a tree by moving a list's values aside first, so it costs
  // twice its 16 bytes a value (a 60 MiB list of zeros took 1 GB).
  std::string zeros = "[";
  for (int i = 0; i < 3000000; ++i) zeros += "0,";
  zeros += "0]";
  CHECK_THROWS_WITH_AS(parse_json_document(zeros),
                       "too many small values for its size of 6,000,003 bytes (5.72 MiB): reading it would take more "
                       "than 10 times that in memory. The files the lab reads hold rows of numbers, not many tiny "
                       "lists or values: check that this is the file meant, or split it into smaller files",
                       InputError);
  // Numbers in rows, as a model's weights are written, are far from that.
  std::string rows = "[";
  for (int i = 0; i < 4096; ++i)
    rows += std::string(i ? "," : "") + "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]";
  rows += "]";
  CHECK(parse_json_document(rows).size() == 4096);
}

TEST_CASE("the JSON library's words never reach a message: UTF-8 and number overflow say where") {
  CHECK_THROWS_WITH_AS(parse_scenario("{\"tokens\": [\"a\xff\"]}"), "line 1, column 15: not valid UTF-8 text",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_scenario("{\"tokens\": [\"a\"],\n \"embeddings\": [[1e400]]}"),
                       "line 2, column 18: number too large (found 1e400)", InputError);
  // Syntax errors in words, not the library's ("syntax error while parsing object separator - unexpected ...").
  const std::vector<std::pair<std::string, std::string>> syntax = {
      {R"({"name" "x"})", "line 1, column 11: not valid JSON: found a string where ':' after the key was expected"},
      {R"({"name": "x",})", "line 1, column 14: not valid JSON: found '}' where a key in double quotes was expected"},
      {R"({"tokens": ["a" "b"]})",
       "line 1, column 19: not valid JSON: found a string where ',' before another value or ']' to end the list was "
       "expected"},
      {R"({"name": "x"} 3)",
       "line 1, column 15: not valid JSON: found a number where the end of the file (a file holds one value) was "
       "expected"},
      {R"({"name": tru})",
       "line 1, column 13: not valid JSON: not a value (found tru): true, false and null are written in lower "
       "case, text in double quotes"},
      {R"({"name": "x)", "line 1, column 11: not valid JSON: a string without its closing quote"},
      {"{\"name\": \"a\nb\"}",
       "line 2, column 1: not valid JSON: a line break or control character inside a string (write it as \\n or "
       "\\u00XX)"},
      {R"({"name": "a\qb"})",
       "line 1, column 13: not valid JSON: an unknown escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
       "and "
       "\\uXXXX)"},
      {R"({"seed": 1.})", "line 1, column 12: not valid JSON: not a number"},
  };
  for (const auto& [text, message] : syntax) {
    const std::string captured = text;
    CAPTURE(captured);
    CHECK_THROWS_WITH_AS(parse_scenario(text), message.c_str(), InputError);
  }
  try {
    parse_scenario("{\"tokens\": \xff}");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.starts_with("line 1, column 12: not valid JSON: "));
    CHECK_FALSE(contains(what, "json.exception"));
    CHECK(invalid_utf8_at(what) == std::string::npos);  // the stray byte is shown as \xff, not printed raw
    CHECK(contains(what, "\\xff"));
  }
  // Tokens from the command line (which no JSON parser checked) are named by their place.
  const Run r = run({"run", kModel, "--tokens", "a b \xff"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + kModel + ": --tokens: word 3 is not valid UTF-8 text\n");
}

TEST_CASE("invalid UTF-8: a token label, and a training text with its line and column") {
  CHECK(invalid_utf8_at("the cat \xc3\xa9") == std::string::npos);
  CHECK(invalid_utf8_at("ab\xc3") == 2);            // cut short
  CHECK(invalid_utf8_at("\xc0\xaf") == 0);          // overlong
  CHECK(invalid_utf8_at("a\xed\xa0\x80") == 1);     // a surrogate
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0);  // past U+10FFFF
  CHECK(invalid_utf8_at("\xf0\x9f\x98\x80") == std::string::npos);
  CHECK_THROWS_WITH_AS(check_label("a\xff", "tokens[3]"), "tokens[3]: not valid UTF-8 text", InputError);
  const std::filesystem::path dir = fresh_dir("parsing-text");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat\n";
  const std::string file = written(dir / "text.txt", text + "caf\xe9\n");
  const Run r = run({"train", "--task", "text", "--text", file, "--steps", "1"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + file + ": line 201, column 4: not valid UTF-8 text\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("integers out of range are refused with the value as written, never wrapped") {
  const std::filesystem::path dir = fresh_dir("parsing-batches");
  const auto train = [&](const std::string& batches) {
    return run({"train", "--model", kModel, "--batches", written(dir / "b.json", batches), "--steps", "1"});
  };
  const std::string prefix = "attention-lab: " + (dir / "b.json").string() + ": ";
  Run r = train(R"({"batches": [[[0, 4294967297]]]})");
  CHECK(r.code == 2);
  CHECK(r.err == prefix + "batches[0][0][1]: must be <= 7 (found 4294967297)\n");
  r = train(R"({"batches": [[[18446744073709551615, 1]]]})");
  CHECK(r.err == prefix + "batches[0][0][0]: must be <= 7 (found 18446744073709551615)\n");
  r = train(R"({"batches": [[[1, -9223372036854775808]]]})");
  CHECK(r.err == prefix + "batches[0][0][1]: must be >= 0 (found -9223372036854775808)\n");
  r = train(R"({"batches": [[[1, 2.0]]]})");
  CHECK(r.err == prefix + "batches[0][0][1]: expected a token id but found number 2.0\n");
  std::filesystem::remove_all(dir);

  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]],
      "attention": {"heads": 4294967297, "head_dim": 1}})"),
                       "attention.heads: must be <= 256 (found 4294967297)", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]],
      "attention": {"heads": 18446744073709551615, "head_dim": 1}})"),
                       "attention.heads: must be <= 256 (found 18446744073709551615)", InputError);
}

TEST_CASE("command-line integers past 64 bits are out of range, quoted as written") {
  Run r = run({"train", "--task", "copy", "--steps", "99999999999999999999"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: --steps: must be between 1 and 1,000,000 (found 99999999999999999999)\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--seed", "18446744073709551616"});
  CHECK(r.err == "attention-lab: --seed: must be at most 18446744073709551615 (found 18446744073709551616)\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--seed", "-1"});
  CHECK(r.err == "attention-lab: --seed: expected a non-negative whole number but found '-1'\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--lr", "1e999"});
  CHECK(r.err == "attention-lab: --lr: must be between 0 and 10 (found 1e999)\n");
  // A number too close to 0 for a double is not 0 in range, nor out of range: it cannot be held at all.
  r = run({"train", "--task", "copy", "--steps", "1", "--eps", "1e-400"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: --eps: too small to be represented: it would be 0 (found 1e-400)\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--lr", "-1e-400"});
  CHECK(r.err == "attention-lab: --lr: too small to be represented: it would be 0 (found -1e-400)\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--eps", "0"});
  CHECK(r.err == "attention-lab: --eps: must be > 0 (found 0)\n");
  // Bounds of five digits or more are grouped; four digits read as they are.
  r = run({"train", "--task", "copy", "--steps", "1", "--warmup", "-1"});
  CHECK(r.err == "attention-lab: --warmup: must be between 0 and 1,000,000 (found -1)\n");
}

TEST_CASE("an option given twice is refused, not silently replaced by the last") {
  Run r = run({"trace", asset("the_cat_sat.json"), "--heads", "2", "--heads", "3"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: --heads: given twice (give each option once)\n");
  r = run({"trace", asset("the_cat_sat.json"), "--precision", "2", "--mask", "causal", "--precision", "3"});
  CHECK(r.err == "attention-lab: --precision: given twice (give each option once)\n");
  r = run({"train", "--task", "copy", "--steps", "1", "--steps", "2"});
  CHECK(r.err == "attention-lab: --steps: given twice (give each option once)\n");
  r = run({"trace", asset("the_cat_sat.json"), "--scale", "--no-scale"});
  CHECK(r.err == "attention-lab: --no-scale: --scale or --no-scale was given already (give one, once)\n");
}

TEST_CASE("a found value is shown with the digits that tell it from its limit") {
  CHECK(general_number_beside(1000000000000.001, 1e12) == "1000000000000.001");
  CHECK(general_number_beside(1e12, 1e12) == "1e+12");
  CHECK(general_number_beside(2e12, 1e12) == "2e+12");
  CHECK(general_number_beside(100.00000001, 100) == "100.00000001");
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1000000000000.001]],
      "attention": {"heads": 1, "head_dim": 1}})"),
                       "embeddings[0][0]: magnitude must be <= 1e12 (found 1000000000000.001)", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[-1000000000000.001]],
      "attention": {"heads": 1, "head_dim": 1}})"),
                       "embeddings[0][0]: magnitude must be <= 1e12 (found -1000000000000.001)", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]],
      "attention": {"heads": 1, "head_dim": 1, "mask": "custom", "custom_mask": [[1.0000001]]}})"),
                       "attention.custom_mask[0][0]: expected 0 or 1 but found 1.0000001", InputError);
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a"], "embeddings": [[1]], "weight_scale": 100.00000001,
      "attention": {"heads": 1, "head_dim": 1}})"),
                       "weight_scale: expected a number in (0, 100] but found 100.00000001", InputError);
}

TEST_CASE("a shift past the learned positions names position_offset, the field written, not max_positions") {
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"tokens": ["a", "b"], "embeddings": [[1], [2]],
      "attention": {"heads": 1, "head_dim": 1, "positions": "learned", "position_offset": 4095}})"),
                       "attention.position_offset: with learned positions, position_offset + tokens must be <= 4096 "
                       "(W_P has at most 4096 rows) but found 4095 + 2 = 4097",
                       InputError);
  const std::filesystem::path dir = fresh_dir("parsing-offset");
  const std::string file = written(dir / "learned.json", R"({"tokens": ["a", "b"], "embeddings": [[1], [2]],
      "attention": {"heads": 1, "head_dim": 1, "positions": "learned"}})");
  const Run r = run({"trace", file, "--position-offset", "4095"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + file +
                     " with the given options: --position-offset: with learned positions, position_offset + tokens "
                     "must be <= 4096 (W_P has at most 4096 rows) but found 4095 + 2 = 4097\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a model file where a scenario is expected, and a scenario where a model is, say so") {
  CHECK_THROWS_WITH_AS(scenario_from_json(parse_json_document(read_file(kModel))),
                       "this is a model file (it has \"layers\"), not a scenario; use run, or trace and decode with "
                       "--layer L --tokens \"...\"",
                       InputError);
  const Run r = run({"run", asset("the_cat_sat.json"), "--tokens", "the cat"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + asset("the_cat_sat.json") +
                     ": this is a scenario file (it has \"attention\" and no \"layers\"), not a model; use trace or "
                     "decode, or give a model file here\n");
}

TEST_CASE("settings: every field read as what it should be, and a bad one keeps its default and is reported") {
  const std::filesystem::path dir = fresh_dir("parsing-settings");
  std::string problem;
  gui::Settings s = gui::load_settings(written(dir / "s.json", R"({"width": 1e20, "height": 700.4})"), &problem);
  CHECK(s.width == 8192);  // clamped: reading 1e20 into an int was undefined behaviour
  CHECK(s.height == 700);
  CHECK(problem == (dir / "s.json").string() + ": width: must be from 640 to 8192 (found 1e20); 8192 is used");
  problem.clear();
  s = gui::load_settings(written(dir / "s.json", R"({"width": 100, "height": 100000, "theme": "blue"})"), &problem);
  CHECK(problem ==
        (dir / "s.json").string() +
            ": theme: expected \"dark\" or \"light\" but found string \"blue\"; \"dark\" is used; width: must "
            "be from 640 to 8192 (found 100); 640 is used; height: must be from 480 to 8192 (found 100000); "
            "8192 is used");  // each value changed is said, not only the first
  problem.clear();
  s = gui::load_settings(written(dir / "s.json", R"({"recent": "notalist", "zoom": 2})"), &problem);
  CHECK(s.recent.empty());  // not a one-item list
  CHECK(s.zoom == 2.0f);
  CHECK(problem == (dir / "s.json").string() +
                       ": recent: expected a list of file names but found string \"notalist\"; it is ignored");
  problem.clear();
  s = gui::load_settings(written(dir / "s.json", R"({"recent": ["/a.json", 7, "/b.json"], "zoom": "big"})"), &problem);
  CHECK(s.recent == std::vector<std::string>{"/a.json", "/b.json"});
  CHECK(s.zoom == 1.0f);
  CHECK(problem == (dir / "s.json").string() +
                       ": zoom: expected a number from 0.75 to 3 but found string \"big\"; 1 is used; "
                       "recent[1]: expected a file name but found number 7; it is ignored");
  problem.clear();
  s = gui::load_settings(written(dir / "s.json", std::string(100, '[')), &problem);
  CHECK(s.width == 1600);
  CHECK(problem == (dir / "s.json").string() +
                       ": line 1, column 65: nested deeper than 64 levels (the limit for every file) (the default "
                       "settings are used; the file was moved to " +
                       (dir / "s.json.unreadable").string() + ")");
  CHECK(read_file(dir / "s.json.unreadable") == std::string(100, '['));  // kept whole for the user to mend
  CHECK_FALSE(std::filesystem::exists(dir / "s.json"));
  problem.clear();
  s = gui::load_settings(dir / "none.json", &problem);
  CHECK(problem.empty());  // no file yet is nothing to report
  std::filesystem::remove_all(dir);
}

TEST_CASE("an input path that is not UTF-8 is shown with its stray bytes escaped") {
  const std::string missing = "/no such folder/b\xff.json";
  const Run trace = run({"trace", missing});
  CHECK(trace.code == 2);
  CHECK(trace.err == "attention-lab: /no such folder/b\\xff.json: no such file\n");
  const Run model = run({"run", missing, "--tokens", "a"});
  CHECK(model.code == 2);
  CHECK(model.err.starts_with("attention-lab: /no such folder/b\\xff.json: "));
}
