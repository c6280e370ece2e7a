// `attention-lab trace`: the text and JSON forms, the overriding options, and usage errors.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/cli.h"
#include "app/cli/matrix_text.h"
#include "app/gui/gui_options.h"
#include "core/io/trace_json.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;
using nlohmann::json;

namespace {

json trace_json(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"trace", asset("the_cat_sat.json"), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const Run r = run(args);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("trace prints every step as a labelled matrix, tokens on rows and columns") {
  const Run r = run({"trace", asset("the_cat_sat.json")});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const std::string scores =
      "scores = q k^T  (rows: queries, columns: keys)  (3 x 3)\n"
      "           the      cat      sat\n"
      "  the   2.0000   8.0000   6.0000\n"
      "  cat   6.0000  16.0000  14.0000\n"
      "  sat   5.0000  16.0000  13.0000\n";
  CHECK(r.out.find(scores) != std::string::npos);
  const std::string weights =
      "weights = softmax(masked), row by row  (3 x 3)\n"
      "          the     cat     sat\n"
      "  the  0.0232  0.7427  0.2341\n"
      "  cat  0.0024  0.7586  0.2391\n"
      "  sat  0.0015  0.8484  0.1501\n";
  CHECK(r.out.find(weights) != std::string::npos);
  // Steps appear in pipeline order.
  std::size_t at = 0;
  for (const char* step : {"X: input embeddings", "W_Q:", "Q = X W_Q", "K = X W_K", "V = X W_V", "scores = q k^T",
                           "scaled = scores / sqrt(3)", "mask  (1 = may attend", "masked = scaled", "weights = softmax",
                           "output = weights v", "concat = [output_0]", "output = concat  (no W_O)"}) {
    CAPTURE(step);
    const std::size_t next = r.out.find(step, at);
    CHECK(next != std::string::npos);
    at = next;
  }
}

TEST_CASE("trace --mask causal prints -inf for hidden scores and 0/1 for the mask") {
  const Run r = run({"trace", asset("the_cat_sat.json"), "--mask", "causal", "--precision", "6"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("  the  1.154701      -inf      -inf\n") != std::string::npos);
  CHECK(r.out.find("  cat    1    1    0\n") != std::string::npos);
  CHECK(r.out.find("  cat  0.003099  0.996901  0.000000\n") != std::string::npos);
}

TEST_CASE("trace --json has every step per head, with -inf as null") {
  const json j = trace_json({"--mask", "causal"});
  CHECK(j["tokens"] == json({"the", "cat", "sat"}));
  CHECK(j["context_tokens"] == json({"the", "cat", "sat"}));
  REQUIRE(j["heads"].size() == 1);
  const json& h = j["heads"][0];
  for (const char* key : {"q", "k", "v", "scores", "scaled", "mask", "masked", "weights", "output"}) {
    CAPTURE(key);
    REQUIRE(h.contains(key));
    CHECK(h[key].size() == 3);
    CHECK(h[key][0].size() == 3);
  }
  CHECK(h["scores"] == json({{2.0, 8.0, 6.0}, {6.0, 16.0, 14.0}, {5.0, 16.0, 13.0}}));
  CHECK(h["masked"][0][1].is_null());
  CHECK(h["masked"][0][2].is_null());
  CHECK(h["masked"][1][2].is_null());
  CHECK(h["masked"][2][2].get<double>() == doctest::Approx(13.0 / std::sqrt(3.0)).epsilon(1e-15));
  CHECK(h["weights"][1][0].get<double>() == doctest::Approx(0.003099).epsilon(1e-3));
  CHECK(h["row_status"] == json({"ok", "ok", "ok"}));
  CHECK(j["concat"] == h["output"]);
  CHECK(j["output"] == h["output"]);
  CHECK(j["weights"]["W_Q"] == json({{1.0, 0.0, 1.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}, {0.0, 1.0, 1.0}}));
}

TEST_CASE("overrides: --no-scale, --kernel linear, --window") {
  const json raw = trace_json({"--no-scale"});
  CHECK(raw["heads"][0]["scaled"] == raw["heads"][0]["scores"]);
  CHECK(raw["scale_factor"] == 1.0);
  const json linear = trace_json({"--kernel", "linear"});
  CHECK(linear["heads"][0]["weights"][0] == json({0.125, 0.5, 0.375}));
  const json window = trace_json({"--window", "1"});  // --window alone implies sliding_window
  CHECK(window["attention"]["mask"] == "sliding_window");
  CHECK(window["heads"][0]["weights"] == json({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}}));
}

TEST_CASE("--heads changes the weight shapes: the file's weights are redrawn from the seed, with a note") {
  const Run r = run({"trace", asset("the_cat_sat.json"), "--json", "--heads", "2", "--head-dim", "2"});
  REQUIRE(r.code == 0);
  CHECK(r.err ==
        "note: weights.W_Q is 4 x 3 but now needs 4 x 4 (d_model by heads x head_dim = 2 x 2); drawn from seed 7 "
        "instead\n"
        "note: weights.W_K is 4 x 3 but now needs 4 x 4 (d_model by heads x head_dim = 2 x 2); drawn from seed 7 "
        "instead\n"
        "note: weights.W_V is 4 x 3 but now needs 4 x 4 (d_model by heads x head_dim = 2 x 2); drawn from seed 7 "
        "instead\n");
  const json j = json::parse(r.out);
  CHECK(j["heads"].size() == 2);
  CHECK(j["concat"][0].size() == 4);
  CHECK(j["weights"]["W_Q"] == json(attn::matrix_to_json(seeded_matrix(7, SeedStream::W_Q, 4, 4))));
}

TEST_CASE("usage errors exit 2 with a message naming the option") {
  const std::string cat = asset("the_cat_sat.json");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"trace"}, "attention-lab: trace: missing SCENARIO (a scenario .json file)\n"},
      {{"trace", cat, "--mask", "diagonal"},
       "attention-lab: --mask: expected one of none | causal | sliding_window | custom but found 'diagonal'\n"},
      {{"trace", cat, "--heads", "two"}, "attention-lab: --heads: expected a whole number but found 'two'\n"},
      {{"trace", cat, "--heads", "0"}, "attention-lab: --heads: must be between 1 and 256 (found 0)\n"},
      {{"trace", cat, "--heads"}, "attention-lab: --heads: missing value\n"},
      {{"trace", cat, "--kernel", "relu"},
       "attention-lab: --kernel: expected one of softmax | linear but found 'relu'\n"},
      {{"trace", cat, "--frobnicate"},
       "attention-lab: trace: unknown option '--frobnicate' (see attention-lab --help)\n"},
      {{"trace", cat, cat},
       "attention-lab: trace: only one SCENARIO may be given, found '" + cat + "' and '" + cat + "'\n"},
      {{"trace", cat, "--mask", "custom"},
       "attention-lab: " + cat +
           " with the given options: attention.custom_mask: missing (required when the mask is \"custom\")\n"},
      {{"trace", cat, "--mask", "sliding_window"},
       "attention-lab: " + cat +
           " with the given options: --window: missing (required for a sliding window: query i then sees keys i-N+1 .. "
           "i)\n"},
      {{"trace", cat, "--variant", "gqa"},
       "attention-lab: " + cat +
           " with the given options: --kv-heads: missing (required for variant gqa: a divisor of heads)\n"},
      {{"trace", cat, "--kv-heads", "2"},
       "attention-lab: " + cat + " with the given options: attention.kv_heads: must be <= 1 (found 2)\n"},
      {{"trace", cat, "--variant", "mla"},
       "attention-lab: " + cat +
           " with the given options: --latent-dim: missing (required for variant mla: the width of the cached "
           "latent)\n"},
      {{"trace", cat, "--variant", "mqa", "--kv-heads", "2"},
       "attention-lab: " + cat + " with the given options: --kv-heads: only used by variant gqa (this is mqa)\n"},
      {{"explain"}, "attention-lab: unknown command 'explain' (see attention-lab --help)\n"},
      {{"trace", cat, "--positions", "alibi"},
       "attention-lab: --positions: expected one of none | sinusoidal | learned | rope but found 'alibi'\n"},
      {{"trace", cat, "--positions", "rope"},
       "attention-lab: " + cat +
           " with the given options: attention.head_dim: rope turns pairs of dimensions, so it needs an even "
           "head_dim (found 3)\n"},
      {{"trace", cat, "--rope-base", "100"},
       "attention-lab: " + cat +
           " with the given options: --rope-base: given, but the positions are \"none\" (it sets the frequencies of "
           "sinusoidal and rope)\n"},
      {{"trace", cat, "--rope-base", "0.5"}, "attention-lab: --rope-base: must be between 1 and 1e+12 (found 0.5)\n"},
      {{"trace", cat, "--rope-dim", "2"},
       "attention-lab: " + cat +
           " with the given options: --rope-dim: only used by variant mla with rope (this is variant mha and the "
           "positions are \"rope\")\n"},
      {{"trace", cat, "--latent-dim", "2", "--positions", "rope"},
       "attention-lab: " + cat +
           " with the given options: --rope-dim: missing (required for mla with rope: the width d_R of the decoupled "
           "key)\n"},
      {{"trace", cat, "--indexer-heads", "2"},
       "attention-lab: " + cat +
           " with the given options: --indexer-heads: given, but attention is not sparse (--top-k K turns it on)\n"},
      {{"trace", cat, "--top-k", "0", "--indexer-dim", "2"},
       "attention-lab: " + cat +
           " with the given options: --indexer-dim: given, but --top-k 0 turns sparse attention off\n"},
      {{"online", cat, "--head", "0", "--row", "0"}, "attention-lab: online: missing --block B\n"},
      {{"online", cat, "--head", "0", "--row", "0", "--block", "1", "--kernel", "linear"},
       "attention-lab: " + cat +
           " with the given options: attention.kernel: the online softmax needs kernel softmax (found linear)\n"},
  };
  for (const auto& [args, message] : cases) {
    const std::string last = args.back();  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(last);
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.err == message);
    CHECK(r.out.empty());
  }
}

TEST_CASE("overrides: positions and sparse attention") {
  const json rope = trace_json({"--head-dim", "2", "--rope-base", "100", "--positions", "rope"});
  CHECK(rope["attention"]["positions"] == "rope");
  CHECK(rope["attention"]["rope_base"] == 100.0);
  CHECK(rope["heads"][0]["q_rope"].size() == 3);
  const json mla = trace_json({"--latent-dim", "2", "--rope-dim", "2"});  // --rope-dim alone implies rope
  CHECK(mla["attention"]["positions"] == "rope");
  CHECK(mla["attention"]["rope_dim"] == 2);
  CHECK(mla["scale_factor"] == doctest::Approx(1 / std::sqrt(5.0)).epsilon(1e-15));  // 1/sqrt(d + d_R)
  const json learned = trace_json({"--positions", "learned"});
  CHECK(learned["attention"]["max_positions"] == 3);
  CHECK(learned["positions"].size() == 3);
  const json sparse = trace_json({"--top-k", "1", "--indexer-heads", "2", "--indexer-dim", "3"});
  CHECK(sparse["attention"]["sparse"] == json({{"top_k", 1}, {"indexer_heads", 2}, {"indexer_dim", 3}}));
  CHECK(sparse["indexer"]["q"][0].size() == 6);
  for (const json& row : sparse["indexer"]["selected"]) {
    const std::vector<double> selected = row.get<std::vector<double>>();
    CHECK(std::count(selected.begin(), selected.end(), 1.0) == 1);  // top 1 of the three keys each row sees
  }
  const json plain = trace_json();
  CHECK_FALSE(plain["attention"].contains("positions"));
  CHECK_FALSE(plain.contains("indexer"));
  CHECK_FALSE(plain["heads"][0].contains("q_rope"));
}

TEST_CASE("online prints the running max, rescale and sum per block and ends on the dense row") {
  const Run r = run({"online", asset("the_cat_sat.json"), "--head", "0", "--row", "1", "--block", "2"});
  REQUIRE(r.code == 0);
  // Row 1 ('cat'): scaled scores [6, 16, 14] / sqrt(3); the first block holds keys 0 and 1, the second key 2.
  CHECK(r.out.find("Online softmax of \"the cat sat\", head 0, row 1 ('cat'), over blocks of 2 keys\n") == 0);
  CHECK(r.out.find("0..1") != std::string::npos);
  CHECK(r.out.find("2..2") != std::string::npos);
  const Run j = run({"online", asset("the_cat_sat.json"), "--head", "0", "--row", "1", "--block", "2", "--json"});
  REQUIRE(j.code == 0);
  const json o = json::parse(j.out);
  REQUIRE(o["blocks"].size() == 2);
  CHECK(o["blocks"][0]["m"].get<double>() == doctest::Approx(16 / std::sqrt(3.0)).epsilon(1e-15));
  CHECK(o["blocks"][1]["rescale"] == 1.0);  // key 2 (14) is below the running max
  const double l = 1 + std::exp(-10 / std::sqrt(3.0)) + std::exp(-2 / std::sqrt(3.0));
  CHECK(o["blocks"][1]["l"].get<double>() == doctest::Approx(l).epsilon(1e-14));
  CHECK(o["max_difference"].get<double>() <= 1e-12);
}

TEST_CASE("--help documents the command and every option") {
  const Run r = run({"--help"});
  CHECK(r.code == 0);
  for (const char* option :
       {"--screenshot PNG", "--gallery",       "--decode-tokens N", "trace SCENARIO", "--json",     "--precision",
        "--mask",           "--window",        "--no-scale",        "--heads",        "--head-dim", "--kernel",
        "--seed",           "--positions",     "--rope-base",       "--rope-dim",     "--top-k",    "--indexer-heads",
        "--indexer-dim",    "online SCENARIO", "--block",           "Exit codes"}) {
    CAPTURE(option);
    CHECK(r.out.find(option) != std::string::npos);
  }
}

TEST_CASE("--help names every shipped lesson") {
  const std::string help = run({"--help"}).out;
  const std::size_t at = help.find("--lesson NAME");
  REQUIRE(at != std::string::npos);
  const std::string list = help.substr(at, help.find("--page N", at) - at);
  int lessons = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTN_ASSETS_DIR) + "/lessons")) {
    const std::string stem = entry.path().stem().string();  // "10_model"
    const std::string name = stem.substr(stem.find('_') + 1);
    CAPTURE(name);
    CHECK(list.find(name) != std::string::npos);
    ++lessons;
  }
  CHECK(lessons == 12);
}

TEST_CASE("numbers print fixed-point, without a misleading -0") {
  CHECK(format_number(0.7426921, 4) == "0.7427");
  CHECK(format_number(-0.00001, 4) == "0.0000");
  CHECK(format_number(-1.5, 2) == "-1.50");
  CHECK(format_number(-std::numeric_limits<double>::infinity(), 4) == "-inf");
  CHECK(format_number(-1e48, 17) == "-1000000000000000043845843045076197354634047651840.00000000000000000");
}

TEST_CASE("tables align by characters, not bytes") {
  std::ostringstream out;
  cli::print_matrix(out, mat({{1, 2}, {3, 4}}), {1, {"é", "b"}, {"x", "y"}});
  CHECK(out.str() ==
        "       x    y\n"
        "  é  1.0  2.0\n"
        "  b  3.0  4.0\n");
}

TEST_CASE("every command's --help prints its usage") {
  const Run r = run({"trace", "--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("attention-lab trace SCENARIO") != std::string::npos);
  for (const std::string command : {"decode", "online", "kv", "run", "train"}) {
    const Run help = run({command, "--help"});
    CAPTURE(command);
    CHECK(help.code == 0);
    CHECK(help.out.starts_with("Usage:\nattention-lab " + command + " "));
  }
}

TEST_CASE("the first argument decides: a command for the command line, anything else opens the window") {
  for (const char* command : {"trace", "decode", "kv", "help", "--help", "-h", "--version"})
    CHECK(attn::cli::is_cli_command(command));
  for (const char* other : {"scenario.json", "--step", "Trace", ""}) CHECK_FALSE(attn::cli::is_cli_command(other));
}

TEST_CASE("a window option beside --view of a view it does not act on is refused, not dropped") {
  const auto refused = [](const std::vector<std::string>& words) {
    try {
      attn::gui::parse_gui_args(words);
    } catch (const attn::cli::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused({"--view", "compare", "--step", "softmax"}) ==
        "--step: only on the pipeline view, but --view is compare");
  CHECK(refused({"--view", "memory", "--cell", "1,1"}) == "--cell: only on the pipeline view, but --view is memory");
  CHECK(refused({"--view", "memory", "--decode-tokens", "2"}) ==
        "--decode-tokens: only on the decode view, but --view is memory");
  CHECK(refused({"--train-steps", "5", "--view", "pipeline"}) ==
        "--train-steps: only on the train view, but --view is pipeline");
  CHECK(refused({"--lesson", "masks", "--view", "memory"}) ==
        "--view: a lesson page opens the view it explains; give --lesson or --view");
  CHECK(refused({"--view", "pipeline", "--step", "softmax", "--cell", "0,1"}) == "accepted");
  CHECK(refused({"--view", "decode", "--decode-tokens", "2"}) == "accepted");
  CHECK(refused({"--skip-training-pages"}) ==
        "--skip-training-pages: only with --check-layout-sweep (it leaves pages out of the sweep)");
  CHECK(refused({"--check-layout-sweep", "--skip-training-pages"}) == "accepted");
}
