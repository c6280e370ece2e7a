// Reading a file within its kind's size limit and the memory budget, checked before a byte is read; unknown keys
// refused by the streaming pass; batches read straight into their id lists; and the messages found unclear (run's
// MODEL, long numbers, names with control characters, max_positions, kv's mla shape, the window's start options, the
// recovery stamp's clock).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/cli/cli.h"
#include "app/gui/gui_options.h"
#include "app/gui/start_state.h"
#include "core/io/batches_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/memory_budget.h"
#include "gui_args.h"
#include "helpers.h"
#include "ui/logic/file_identity.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

fs::path write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

// A file of `size` zero bytes that takes no disk (a sparse file).
fs::path sparse_file(const fs::path& file, std::uintmax_t size) {
  std::ofstream(file, std::ios::binary).close();
  fs::resize_file(file, size);
  return file;
}

const std::string kCatSatBody =
    R"("tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "attention": {"heads": 1, "head_dim": 2})";

// The worked example with `fields` before its body: why it is refused, or "(no error)".
std::string scenario_problem(const std::string& fields) {
  try {
    parse_scenario("{" + fields + ", " + kCatSatBody + "}");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return "(no error)";
}

// The batches file of the finding: `batches` batches of 4 sequences of 16 ids of 1.
std::string ones_batches(int batches) {
  std::string sequence = "[1";
  for (int i = 1; i < 16; ++i) sequence += ",1";
  sequence += "]";
  const std::string batch = "[" + sequence + "," + sequence + "," + sequence + "," + sequence + "]";
  std::string text = "{\"batches\":[";
  for (int b = 0; b < batches; ++b) text += (b ? "," : "") + batch;
  return text + "]}";
}

Model vocabulary_model(int vocab, int max_positions) {
  Model m;
  for (int i = 0; i < vocab; ++i) m.vocab.push_back("t" + std::to_string(i));
  m.max_positions = max_positions;
  return m;
}

}  // namespace

TEST_CASE("a file of only whitespace says so, not that it is empty") {
  const fs::path dir = fresh_dir("reading-spaces");
  const fs::path spaces = write_text(dir / "spaces.json", "  \n\t  \r\n");
  const Run r = run({"trace", spaces.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + spaces.string() + ": the file holds only whitespace (expected a JSON object)\n");
  CHECK_THROWS_WITH_AS(parse_json_document(" \n "), "the file holds only whitespace (expected a JSON object)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json_document(""), "the file is empty (expected a JSON object)", InputError);
  fs::remove_all(dir);
}

TEST_CASE("what reading a file will hold is checked against the memory budget before it is read") {
  const fs::path dir = fresh_dir("reading-budget");
  // 2 MiB: its text and ten times that for a tree: 22 MiB, and the program's own 16 MiB.
  const fs::path spaces = write_text(dir / "spaces.json", std::string(2 << 20, ' '));
  const std::string past =
      "reading this file and parsing it needs 39,845,888 bytes (38.0 MiB) but the memory budget is 16,777,216 bytes "
      "(16.0 MiB); use --memory-budget, or a smaller file";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"trace"}, {"decode"}, {"online", "--head", "0", "--row", "0", "--block", "1"}}) {
    CAPTURE(command[0]);
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, spaces.string());
    args.insert(args.end(), {"--memory-budget", "16M"});
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.err == "attention-lab: " + spaces.string() + ": " + past + "\n");
  }
  const Run model = run({"run", spaces.string(), "--tokens", "a b", "--memory-budget", "16M"});
  CHECK(model.code == 2);
  CHECK(model.err == "attention-lab: " + spaces.string() + ": " + past + "\n");
  CHECK_THROWS_WITH_AS(load_scenario_file(spaces, 16 << 20), past.c_str(), BudgetError);
  CHECK_THROWS_WITH_AS(load_model_file(spaces, 16 << 20), past.c_str(), BudgetError);
  CHECK(predicted_document_bytes(2 << 20) == 23068672);
  // A small file is read whatever the budget: the trace is what a tiny budget refuses.
  const Run tiny = run({"trace", asset("the_cat_sat.json"), "--memory-budget", "1K"});
  CHECK(tiny.code == 2);
  CHECK(contains(tiny.err, ": this trace needs "));
  fs::remove_all(dir);
}

TEST_CASE("a file past its kind's size limit is refused from its size, before it is read") {
  const fs::path dir = fresh_dir("reading-size");
  // Sparse files of zeros: read whole, they would be "not valid JSON" after taking their size in memory.
  const fs::path scenario = sparse_file(dir / "big.json", (64u << 20) + 3);
  const Run r = run({"trace", scenario.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + scenario.string() +
                     ": file is larger than 64 MiB, the limit for a scenario file (found 67,108,867 bytes (64.0 "
                     "MiB))\n");
  CHECK_THROWS_WITH_AS(load_scenario_file(scenario),
                       "file is larger than 64 MiB, the limit for a scenario file (found 67,108,867 bytes (64.0 MiB))",
                       InputError);
  const fs::path huge = sparse_file(dir / "huge.json", (256u << 20) + 1);
  const Run h = run({"trace", huge.string()});
  CHECK(h.code == 2);
  CHECK(h.err == "attention-lab: " + huge.string() +
                     ": file is larger than 256 MiB, the limit for a model file, 64 MiB for a scenario file (found "
                     "268,435,457 bytes (256 MiB))\n");
  CHECK_THROWS_WITH_AS(load_batches_file(huge, vocabulary_model(4, 8), limits::kDefaultMemoryBudget),
                       "file is larger than 256 MiB, the limit for a batches file (found 268,435,457 bytes (256 "
                       "MiB))",
                       InputError);
  fs::remove_all(dir);
}

TEST_CASE("a scenario or a model past 64 MiB is told apart by a streaming pass that keeps nothing") {
  const fs::path dir = fresh_dir("reading-kind");
  // A model's "layers" found, the pass stops there; the rest (unread) would be a syntax error.
  const fs::path model = write_text(dir / "m.json", R"({"name": "m", "layers": [ oops)");
  CHECK(document_file_kind(model, limits::kDefaultMemoryBudget) == DocumentKind::Model);
  const fs::path scenario = write_text(dir / "s.json", "{" + kCatSatBody + "}");
  CHECK(document_file_kind(scenario, limits::kDefaultMemoryBudget) == DocumentKind::Scenario);
  std::ifstream in(model, std::ios::binary);
  CHECK(find_root_key(in, "layers") == RootKeyFound::Present);
  std::istringstream nested(R"({"a": {"layers": 1}})"), blank("   \n "), empty("");
  CHECK(find_root_key(nested, "layers") == RootKeyFound::Absent);
  CHECK(find_root_key(blank, "layers") == RootKeyFound::OnlyWhitespace);
  CHECK(find_root_key(empty, "layers") == RootKeyFound::OnlyWhitespace);
  fs::remove_all(dir);
}

TEST_CASE("an unknown key at the root is refused by the streaming pass, before any tree is built") {
  // The document breaks after its first key: only a refusal at that key, before the tree, says "unknown key".
  CHECK_THROWS_WITH_AS(parse_json_document(R"({"k0": 1, "k1": [)", scenario_root_keys()),
                       "k0: unknown key (expected one of: name, description, tokens, embeddings, context, attention, "
                       "weights, seed, weight_scale)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_model(R"({"vocab": ["a"], "k0": 1, "k1": [)"),
                       "k0: unknown key (expected one of: name, description, vocab, d_model, max_positions, "
                       "positions, rope_base, rope_pairing, rope_scaling, norm, norm_function, norm_eps, ffn, "
                       "layers, embedding, W_P, final_gain, final_bias, unembedding, tied_unembedding, seed)",
                       InputError);
  // The other kind's keys still reach the message that names the kind.
  CHECK_THROWS_WITH_AS(parse_scenario(R"({"layers": [], "vocab": ["a"]})"),
                       "this is a model file (it has \"layers\"), not a scenario; use run, or trace and decode with "
                       "--layer L --tokens \"...\"",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_model("{" + kCatSatBody + "}"),
                       "this is a scenario file (it has \"attention\" and no \"layers\"), not a model; use trace or "
                       "decode, or give a model file here",
                       InputError);
}

TEST_CASE("a batches file is read straight into its id lists: 75,000 batches of 4 sequences train") {
  const fs::path dir = fresh_dir("reading-batches");
  const std::string text = ones_batches(75000);
  REQUIRE(text.size() == 10350013);
  const std::vector<std::vector<Sequence>> batches = parse_batches(text, vocabulary_model(4, 16), 1 << 30);
  REQUIRE(batches.size() == 75000);
  CHECK(batches[74999].size() == 4);
  CHECK(batches[74999][3].ids == std::vector<int>(16, 1));
  CHECK(batches[0][0].targets.size() == 16);
  // Text 10,350,013 + counts 4 x 375,000 + lists 16 + 75,000 x 40 + 300,000 x 80 + 4,800,000 x 8.
  CHECK_THROWS_WITH_AS(parse_batches(text, vocabulary_model(4, 16), 64 << 20),
                       "reading 75000 batches (300000 sequences, 4800000 token ids) needs 94,027,245 bytes (89.7 MiB) "
                       "but the memory budget is 67,108,864 bytes (64.0 MiB); use --memory-budget, or fewer batches",
                       BudgetError);
  // Through the command: the model the finding trained on, then one step on the file.
  const fs::path model = dir / "m.json", file = write_text(dir / "b.json", text);
  REQUIRE(run({"train", "--task", "copy", "--steps", "1", "--save", model.string(), "--seq-len", "16"}).code == 0);
  const Run r = run({"train", "--model", model.string(), "--batches", file.string(), "--steps", "1"});
  CHECK(r.err.empty());
  CHECK(r.code == 0);
  CHECK(contains(r.out, "step 1: loss "));
  fs::remove_all(dir);
}

TEST_CASE("a batches file's problems name the field, as the tree reader did") {
  const Model m = vocabulary_model(10, 8);
  const auto problem = [&m](const std::string& text) {
    try {
      parse_batches(text, m, 1 << 30);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(problem("[]") == "batches file: expected an object but found array");
  CHECK(problem("{}") == "batches: missing (required)");
  CHECK(problem(R"({"k0": 1})") == "k0: unknown key (expected one of: batches)");
  CHECK(problem(R"({"batches": [[[1, 2]]], "batches": 1})") == "batches: key appears twice in one object");
  CHECK(problem(R"({"batches": []})") == "batches: expected a non-empty list of batches");
  CHECK(problem(R"({"batches": 3})") == "batches: expected a non-empty list of batches");
  CHECK(problem(R"({"batches": [[[1, 2]], []]})") == "batches[1]: expected a non-empty list of sequences");
  CHECK(problem(R"({"batches": [[[1, 2]], 7]})") == "batches[1]: expected a non-empty list of sequences");
  CHECK(problem(R"({"batches": [[[1, 2], [3]]]})") == "batches[0][1]: expected a list of at least two token ids");
  CHECK(problem(R"({"batches": [[[1, 2], 3]]})") == "batches[0][1]: expected a list of at least two token ids");
  CHECK(problem(R"({"batches": [[[1, 2.5]]]})") == "batches[0][0][1]: expected a token id but found number 2.5");
  CHECK(problem(R"({"batches": [[[1, "a"]]]})") == "batches[0][0][1]: expected a token id but found string \"a\"");
  CHECK(problem(R"({"batches": [[[1, [2]]]]})") == "batches[0][0][1]: expected a token id but found array");
  CHECK(problem(R"({"batches": [[[1, 2], [0, 4294967297]]]})") == "batches[0][1][1]: must be <= 9 (found 4294967297)");
  CHECK(problem(R"({"batches": [[[1, -1]]]})") == "batches[0][0][1]: must be >= 0 (found -1)");
  CHECK(problem(R"({"batches": [[[1, 2, 3, 4, 5, 6, 7, 8, 9]]]})") ==
        "batches[0][0] (its length): must be <= 8, the model's max_positions (found 9)");
  CHECK(problem(R"({"batches": [[[1, 2]]] )") ==
        "line 1, column 23: not valid JSON: found the end of the file where ',' before another key or '}' to end the "
        "object was expected");
  CHECK(problem("  ") == "the file holds only whitespace (expected a JSON object)");
}

TEST_CASE("run takes a MODEL: its messages say so") {
  const Run none = run({"run"});
  CHECK(none.code == 2);
  CHECK(none.err == "attention-lab: run: missing MODEL (a model .json file or a Hugging Face model folder)\n");
  const std::string cat = asset("the_cat_sat.json");
  const Run scenario = run({"run", cat});
  CHECK(scenario.code == 2);
  CHECK(scenario.err ==
        "attention-lab: " + cat +
            ": this is a scenario file (it has \"attention\" and no \"layers\"), not a model; use trace "
            "or decode, or give a model file here\n");
}

TEST_CASE("tokens past a model's max_positions say that it is the model's max_positions") {
  const std::string tiny = std::string(ATTN_ASSETS_DIR) + "/models/tiny.json";
  const Model m = load_model_file(tiny);
  std::string tokens = m.vocab[0];
  for (int i = 0; i < m.max_positions; ++i) tokens += " " + m.vocab[0];
  const Run r = run({"run", tiny, "--tokens", tokens});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + tiny +
                     ": --tokens (its number of words): must be <= 32, the model's max_positions (found 33)\n");
}

TEST_CASE("a number of 5,000 digits is quoted by its first 40 and its count of digits") {
  const std::string digits = "1" + std::string(5000, '0');
  CHECK_THROWS_WITH_AS(parse_scenario("{\"seed\": " + digits + "}"),
                       "line 1, column 10: number too large (found 1000000000000000000000000000000000000000\u2026, "
                       "5,001 digits)",
                       InputError);
  CHECK(quoted_number("1e999") == "1e999");
}

TEST_CASE("a name holds no control characters, a description keeps its line breaks and tabs alone") {
  CHECK(scenario_problem(R"("name": "a\u001b[31mred")") ==
        "name: a name must not contain control characters (found U+001B)");
  CHECK(scenario_problem(R"("name": "a\u0000b")") == "name: a name must not contain control characters (found U+0000)");
  CHECK(scenario_problem(R"("name": "two\nlines")") ==
        "name: a name must not contain control characters (found U+000A)");
  CHECK(scenario_problem(R"("description": "ring\u0007")") ==
        "description: a description may hold line breaks and tabs but no other control characters (found U+0007)");
  CHECK(scenario_problem(R"("name": "fine", "description": "two\nlines\tand a tab")") == "(no error)");
  nlohmann::json model = nlohmann::json::parse(read_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json"));
  model["name"] = "m\x1b";
  CHECK_THROWS_WITH_AS(parse_model(model.dump()), "name: a name must not contain control characters (found U+001B)",
                       InputError);
}

TEST_CASE("names, descriptions and token labels are bounded in bytes: the window draws and copies them") {
  const auto quoted = [](std::size_t n, char c) { return "\"" + std::string(n, c) + "\""; };
  CHECK(scenario_problem("\"name\": " + quoted(200, 'n')) == "(no error)");
  CHECK(scenario_problem("\"name\": " + quoted(201, 'n')) == "name: a name may have at most 200 bytes but found 201");
  CHECK(scenario_problem("\"name\": \"x\", \"description\": " + quoted(16384, 'd')) == "(no error)");
  CHECK(scenario_problem("\"name\": \"x\", \"description\": " + quoted(40 << 20, 'd')) ==
        "description: a description may have at most 16,384 bytes but found 41,943,040");
  // A token label of 257 bytes, the first token of the worked example's three.
  nlohmann::json cat = nlohmann::json::parse(read_file(std::string(ATTN_ASSETS_DIR) + "/scenarios/the_cat_sat.json"));
  cat["tokens"][0] = std::string(256, 't');
  CHECK_NOTHROW(parse_scenario(cat.dump()));
  cat["tokens"][0] = std::string(257, 't');
  CHECK_THROWS_WITH_AS(parse_scenario(cat.dump()), "tokens[0]: a token label may have at most 256 bytes but found 257",
                       InputError);
  nlohmann::json model = nlohmann::json::parse(read_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json"));
  model["description"] = std::string(16385, 'd');
  CHECK_THROWS_WITH_AS(parse_model(model.dump()),
                       "description: a description may have at most 16,384 bytes but found 16,385", InputError);
}

TEST_CASE("kv: an mla shape needs no --head-dim, except to compare with the same heads as MHA") {
  const Run r = run({"kv", "--latent-dim", "512", "--rope-dim", "64", "--layers", "60", "--heads", "128"});
  CHECK(r.err.empty());
  CHECK(r.code == 0);
  CHECK(contains(r.out, "  MLA, 60 layers, 128 heads, cached latent 512 + RoPE key 64\n"));
  CHECK(contains(r.out, "Elements per token per layer:  576 = 512 (latent c_KV) + 64 (decoupled RoPE key)\n"));
  const Run compare =
      run({"kv", "--latent-dim", "512", "--rope-dim", "64", "--layers", "60", "--heads", "128", "--compare"});
  CHECK(compare.code == 2);
  CHECK(compare.err ==
        "attention-lab: kv: --compare sizes the same heads as MHA, GQA and MQA, whose cache is 2 x heads x head_dim: "
        "give --head-dim (an mla shape alone needs only --latent-dim and --rope-dim)\n");
  const Run mha = run({"kv", "--layers", "2", "--heads", "4", "--kv-heads", "4"});
  CHECK(mha.code == 2);
  CHECK(contains(mha.err, "the shape is missing --head-dim"));
}

TEST_CASE("the window's start: options it would ignore are refused, and the message names options only if given") {
  const auto refused = test::gui_args_refusal;
  CHECK(refused({"--page", "2"}) == "--page: only with --lesson NAME (it opens a page of that lesson)");
  CHECK(refused({"--lesson", "masks", "--page", "2"}) == "(no error)");
  CHECK(refused({"--train-gradient", "0.1"}) ==
        "--train-gradient: only with --train-steps N (the gradient of the run trained that far)");
  // The decode view shows at most 256 tokens: a start past them is refused with that limit, not started blank.
  CHECK(refused({"--decode-tokens", "256"}) == "(no error)");
  CHECK(refused({"--decode-tokens", "257"}) ==
        "--decode-tokens: the decode view steps through at most 256 tokens (found 257)");
  CHECK(refused({"--decode-tokens", "0"}) == "--decode-tokens: must be between 1 and 1,048,576 (found 0)");

  const std::string cat = asset("the_cat_sat.json");
  const auto start = [](const std::vector<std::string>& args) {
    std::ostringstream err;
    const bool started = gui::start_state(gui::parse_gui_args(args), err) != nullptr;
    return std::pair{started, err.str()};
  };
  // A budget the window itself does not fit in names no option; a document past the rest names the options given.
  const auto plain = start({cat, "--memory-budget", "1K"});
  CHECK_FALSE(plain.first);
  CHECK(plain.second.starts_with("attention-lab: the window at "));
  const std::string scale = asset("scale.json");
  const auto options = start({scale, "--tokens", "4096", "--memory-budget", "300M"});
  CHECK_FALSE(options.first);
  CHECK(options.second.starts_with("attention-lab: " + scale +
                                   " with the given options: this document in the window needs "));

  const auto gradient = start({cat, "--train-steps", "1", "--train-gradient", "9.9"});
  CHECK_FALSE(gradient.first);
  CHECK(gradient.second ==
        "attention-lab: --train-gradient: the run's model has 2 layers of 4 heads, numbered "
        "from 0, but found 9.9\n");
  // Counts of one read in the singular.
  CHECK(start({cat, "--head", "1"}).second ==
        "attention-lab: --head: the scenario has 1 head, numbered from 0, but found 1\n");
  CHECK(start({"--layer", "2"}).second ==
        "attention-lab: --layer: the model has 2 layers, numbered from 0, but found 2\n");
  CHECK(start({cat, "--train-steps", "1", "--train-gradient", "1.1"}).first);
}

TEST_CASE("a file's stamp is its modification time in nanoseconds since the Unix epoch") {
  const fs::path dir = fresh_dir("reading-stamp");
  const fs::path file = fs::absolute(write_text(dir / "a.json", "{}"));
  const std::optional<ui::FileStamp> stamp = ui::file_stamp(file);
  REQUIRE(stamp);
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(stamp->modified_ns > 0);
  CHECK(std::abs(now - stamp->modified_ns) < std::int64_t(60) * 1000000000);
  CHECK(ui::unchanged_since(file, stamp));
  // A recovery file written before recorded libstdc++'s file-clock count: still read as the same moment.
  const std::int64_t file_clock =
      std::chrono::duration_cast<std::chrono::nanoseconds>(fs::last_write_time(file).time_since_epoch()).count();
  REQUIRE(file_clock < 0);
  CHECK(ui::unchanged_since(file, ui::FileStamp{stamp->size, file_clock}));
  CHECK_FALSE(ui::unchanged_since(file, ui::FileStamp{stamp->size, file_clock + 1}));
  fs::remove_all(dir);
}
