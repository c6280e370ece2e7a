// The memory budget: its size as the command line and the settings take it, its default, the refusal past it, and
// what keeps printing within it: JSON written as it is made (the same bytes as a whole tree's dump) and token labels
// shortened in text tables.
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/handout.h"
#include "app/cli/matrix_text.h"
#include "app/cli/memory_option.h"
#include "app/gui/user_files.h"
#include "core/decode.h"
#include "core/edits.h"
#include "core/io/decode_json.h"
#include "core/io/json_stream.h"
#include "core/io/trace_json.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/trace_bytes.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/window_memory.h"

using namespace attn;
using namespace attn::test;
using nlohmann::ordered_json;

namespace {

constexpr std::int64_t kGiB = std::int64_t(1) << 30;

// The trees the JSON forms were built as before they were streamed, written here from the trace's members: the
// streamed text must be their dump, byte for byte.
ordered_json tree_number(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }
ordered_json tree_matrix(const Matrix& m) {
  ordered_json rows = ordered_json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    ordered_json row = ordered_json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(tree_number(m(r, c)));
    rows.push_back(row);
  }
  return rows;
}
ordered_json tree_vector(const Vector& v) {
  ordered_json out = ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(tree_number(v(i)));
  return out;
}
ordered_json tree_weights(const Weights& w) {
  ordered_json j = ordered_json::object();
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(w, id)) j[weight_name(id)] = tree_matrix(*m);
  return j;
}
ordered_json tree_status(const std::vector<RowStatus>& s) {
  ordered_json out = ordered_json::array();
  for (RowStatus r : s) out.push_back(to_string(r));
  return out;
}

ordered_json tree_head(const HeadTrace& h) {
  ordered_json j;
  j["head"] = h.head;
  j["kv_head"] = h.kv_head;
  j["q"] = tree_matrix(h.q);
  j["k"] = tree_matrix(h.k);
  j["v"] = tree_matrix(h.v);
  if (h.q_rope.size() > 0) {
    j["q_rope"] = tree_matrix(h.q_rope);
    j["k_rope"] = tree_matrix(h.k_rope);
  }
  j["scores"] = tree_matrix(h.scores());
  j["scaled"] = tree_matrix(h.scaled());
  j["mask"] = tree_matrix(*h.mask);
  j["masked"] = tree_matrix(h.masked());
  j["weights"] = tree_matrix(h.weights());
  j["output"] = tree_matrix(h.output);
  if (h.W_O_h) j["contribution"] = tree_matrix(h.contribution());
  j["row_max"] = tree_vector(h.row_max);
  j["row_sum"] = tree_vector(h.row_sum);
  j["entropy"] = tree_vector(h.entropy);
  j["row_status"] = tree_status(h.row_status);
  return j;
}

// Plain attention (no MLA, sparse or positions): what these tests trace.
ordered_json tree_trace(const Trace& t) {
  const AttentionConfig& a = t.attention;
  ordered_json j;
  j["name"] = t.name;
  j["tokens"] = t.tokens;
  j["context_tokens"] = t.context_tokens;
  j["attention"] = {{"variant", to_string(a.variant)}, {"heads", a.heads},
                    {"kv_heads", kv_head_count(a)},    {"head_dim", a.head_dim},
                    {"mask", to_string(a.mask)},       {"scale", a.scale},
                    {"kernel", to_string(a.kernel)},   {"output_projection", t.has_output_projection()}};
  if (a.mask == MaskKind::SlidingWindow) j["attention"]["window"] = a.window;
  j["scale_factor"] = t.scale_factor;
  j["weights"] = tree_weights(t.weights);
  j["x"] = tree_matrix(t.x);
  j["x_kv"] = tree_matrix(t.x_kv);
  ordered_json kv = ordered_json::array();
  for (const KvHeadTrace& g : t.kv_heads) kv.push_back({{"k", tree_matrix(g.k)}, {"v", tree_matrix(g.v)}});
  j["kv_heads"] = kv;
  ordered_json heads = ordered_json::array();
  for (const HeadTrace& h : t.heads) heads.push_back(tree_head(h));
  j["heads"] = heads;
  j["concat"] = tree_matrix(t.concat);
  j["output"] = tree_matrix(t.output);
  return j;
}

ordered_json tree_decode(const DecodeTrace& d) {
  ordered_json j;
  j["name"] = d.name;
  j["variant"] = to_string(d.attention.variant);
  j["elements_per_token"] = d.elements_per_token;
  j["cross_attention"] = d.cross_attention;
  ordered_json steps = ordered_json::array();
  for (const DecodeStep& s : d.steps) {
    ordered_json step;
    step["t"] = s.t;
    step["token"] = s.token;
    step["output"] = tree_matrix(s.output)[0];
    step["cache_tokens"] = s.cache_tokens;
    step["cache_elements"] = s.cache_elements;
    ordered_json weights = ordered_json::array();
    for (const Matrix& w : s.weights) weights.push_back(tree_matrix(w)[0]);
    step["weights"] = weights;
    step["row_status"] = tree_status(s.status);
    steps.push_back(step);
  }
  j["steps"] = steps;
  ordered_json kv = ordered_json::array();
  for (std::size_t g = 0; g < d.cache.k.size(); ++g)
    kv.push_back({{"k", tree_matrix(d.cache.k[g])}, {"v", tree_matrix(d.cache.v[g])}});
  j["cache"] = {{"kv_heads", kv}};
  j["weights"] = tree_weights(d.weights);
  return j;
}

Scenario with_mask(Scenario s, MaskKind mask) {
  s.attention.mask = mask;
  return s;
}

}  // namespace

TEST_CASE("a memory size: bytes, or a number with a 1024-based or 1000-based unit") {
  CHECK(parse_memory_size("2G", "--memory-budget") == 2 * kGiB);
  CHECK(parse_memory_size("512M", "--memory-budget") == 512 * (std::int64_t(1) << 20));
  CHECK(parse_memory_size("1.5GiB", "--memory-budget") == 1610612736);
  CHECK(parse_memory_size("3221225472", "--memory-budget") == 3 * kGiB);
  CHECK(parse_memory_size("2 GB", "--memory-budget") == 2000000000);
  CHECK(parse_memory_size("64k", "--memory-budget") == 65536);
  CHECK(parse_memory_size("1T", "--memory-budget") == (std::int64_t(1) << 40));
  CHECK(parse_memory_size("100 bytes", "memory_budget") == 100);
  CHECK(parse_memory_size("0.5K", "--memory-budget") == 512);
  const std::string expected =
      "expected a size such as 3221225472, 512M, 2G or 1.5GiB (K, M, G, T are 1024-based, KB, MB, GB, TB "
      "1000-based) but found '";
  for (const char* bad : {"", "abc", "-1", "2X", "1.2.3", "2e9", "G", ".", "2 G B", "0x10"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_memory_size(bad, "--memory-budget"),
                         ("--memory-budget: " + expected + bad + "'").c_str(), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_memory_size("0", "--memory-budget"),
                       "--memory-budget: must be at least 1 byte but found '0'", InputError);
  CHECK_THROWS_WITH_AS(parse_memory_size("0.4", "--memory-budget"),
                       "--memory-budget: a number of bytes must be whole (found '0.4'); use a unit for fractions, "
                       "such as 1.5G",
                       InputError);
  // Not taken as 1 byte: bytes are whole, with or without the word.
  CHECK_THROWS_WITH_AS(parse_memory_size("1.9999", "--memory-budget"),
                       "--memory-budget: a number of bytes must be whole (found '1.9999'); use a unit for fractions, "
                       "such as 1.5G",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_memory_size("100.5 bytes", "memory_budget"),
                       "memory_budget: a number of bytes must be whole (found '100.5 bytes'); use a unit for "
                       "fractions, such as 1.5G",
                       InputError);
  CHECK(parse_memory_size("1024.0", "--memory-budget") == 1024);   // whole, written with a point
  CHECK(parse_memory_size("1.9999K", "--memory-budget") == 2047);  // a fraction of a unit: whole bytes, rounded down
  CHECK_THROWS_WITH_AS(parse_memory_size("2000000T", "--memory-budget"),
                       "--memory-budget: must be at most 1.00 EiB but found '2000000T'", InputError);
}

TEST_CASE("the default budget is 3 GiB or half the physical memory, whichever is smaller") {
  CHECK(limits::kDefaultMemoryBudget == 3 * kGiB);
  CHECK(default_memory_budget(16 * kGiB) == 3 * kGiB);
  CHECK(default_memory_budget(6 * kGiB) == 3 * kGiB);
  CHECK(default_memory_budget(4 * kGiB) == 2 * kGiB);
  CHECK(default_memory_budget(kGiB) == kGiB / 2);
  CHECK(default_memory_budget(0) == 3 * kGiB);  // unknown: the fixed default
  const std::int64_t physical = std::int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  CHECK(cli::physical_memory_bytes() == physical);
  CHECK(cli::machine_memory_budget() == std::min(3 * kGiB, physical / 2));
}

TEST_CASE("--memory-budget on the command line: taken by every command, refused when malformed or repeated") {
  const std::string cat = asset("the_cat_sat.json");
  CHECK(run({"trace", cat, "--memory-budget", "2G"}).code == 0);
  CHECK(run({"trace", "--memory-budget", "64M", cat, "--json"}).code == 0);
  CHECK(run({"decode", cat, "--memory-budget", "1.5GiB"}).code == 0);
  CHECK(run({"kv", "--memory-budget", "2G", "--list"}).code == 0);
  const Run bad = run({"trace", cat, "--memory-budget", "lots"});
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "attention-lab: --memory-budget: expected a size such as 3221225472, 512M, 2G or 1.5GiB (K, M, G, T are "
        "1024-based, KB, MB, GB, TB 1000-based) but found 'lots'\n");
  const Run twice = run({"trace", cat, "--memory-budget", "2G", "--memory-budget", "3G"});
  CHECK(twice.code == 2);
  CHECK(twice.err == "attention-lab: --memory-budget: given twice (give it once)\n");
  const Run missing = run({"decode", cat, "--memory-budget"});
  CHECK(missing.code == 2);
  CHECK(missing.err == "attention-lab: --memory-budget: missing value\n");
  CHECK(contains(run({"--help"}).out, "--memory-budget SIZE"));
}

TEST_CASE("past the budget, trace, decode and online refuse before computing: exit 2 with both numbers") {
  const std::string cat = asset("the_cat_sat.json");
  for (const std::vector<std::string>& words : {std::vector<std::string>{"trace", cat},
                                                {"trace", cat, "--json"},
                                                {"trace", cat, "--markdown"},
                                                {"trace", cat, "--latex"},
                                                {"online", cat, "--head", "0", "--row", "1", "--block", "2"}}) {
    std::vector<std::string> args = words;
    args.insert(args.end(), {"--memory-budget", "1K"});
    CAPTURE(args[2]);
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("attention-lab: " + cat + ": this trace needs "));
    CHECK(
        r.err.ends_with(" but the memory budget is 1,024 bytes (1.00 KiB); use --memory-budget, fewer tokens or "
                        "heads\n"));
  }
  const Run d = run({"decode", cat, "--json", "--memory-budget", "1000"});
  CHECK(d.code == 2);
  CHECK(d.err.starts_with("attention-lab: " + cat + ": this decoding needs "));
  CHECK(d.err.ends_with(" but the memory budget is 1,000 bytes; use --memory-budget, fewer tokens or heads\n"));
}

TEST_CASE("what a command holds is known from the shapes: the trace, and printing it one head at a time") {
  Scenario s = load_scenario_file(asset("scale.json"));
  set_token_count(s, 4096);
  // 8 heads at 4,096 tokens: 2.34 GiB of trace; printing holds one head's scores, scaled, masked and weights.
  CHECK(predicted_trace_bytes(s) == 2511208448);
  CHECK(predicted_print_bytes(s) >= 4 * 4096 * std::int64_t(4096) * 8);
  CHECK(predicted_print_bytes(s) < 4 * 4096 * std::int64_t(4096) * 8 + 64 * (std::int64_t(1) << 20));
  // The scale scenario at 4,096 tokens prints within 3 GiB; within 2.5 GiB it may be computed but not printed.
  CHECK_NOTHROW(check_trace_budget(s, 3 * kGiB, predicted_print_bytes(s)));
  CHECK_NOTHROW(check_trace_budget(s, 5 * kGiB / 2));
  CHECK_THROWS_AS(check_trace_budget(s, 5 * kGiB / 2, predicted_print_bytes(s)), BudgetError);
  // Decoding keeps each head's weights over the cache, a triangle: 8 x 4096 x 4097 / 2 doubles and the rest.
  const std::int64_t triangle = 8 * std::int64_t(4096) * 4097 / 2 * 8;
  CHECK(predicted_decode_bytes(s) > triangle);
  CHECK(predicted_decode_bytes(s) < triangle + 400 * (std::int64_t(1) << 20));
}

TEST_CASE("JSON written as it is made: the bytes nlohmann-json's dump gives for the same tree") {
  std::ostringstream out;
  JsonStream js(out);
  const Matrix m = mat({{1.5, -std::numeric_limits<double>::infinity()}, {0.1, -2.0}});
  js.begin_object().field("a", 1).matrix("m", m).key("empty").begin_array().end_array();
  js.key("rows").begin_array().row(m.row(1)).row(Matrix(1, 0).row(0)).end_array();
  js.field("s", "tab\there \xC3\xA9").key("o").begin_object().field("x", nullptr).end_object().end_object();
  const ordered_json tree = {{"a", 1},
                             {"m", {{1.5, nullptr}, {0.1, -2.0}}},
                             {"empty", ordered_json::array()},
                             {"rows", {{0.1, -2.0}, ordered_json::array()}},
                             {"s", "tab\there \xC3\xA9"},
                             {"o", {{"x", nullptr}}}};
  CHECK(out.str() == tree.dump());
}

TEST_CASE("trace --json and decode --json stream the very bytes of the trees they were built as") {
  for (const MaskKind mask : {MaskKind::None, MaskKind::Causal}) {
    const Scenario s = with_mask(cat_sat(), mask);
    const Trace t = compute_trace(s);
    std::ostringstream streamed;
    write_trace_json(streamed, t);
    CHECK(streamed.str() == tree_trace(compute_trace(s)).dump());
    CHECK(trace_to_json(t) == tree_trace(t));
  }
  const Scenario gqa = load_scenario_file(asset("the_lazy_dog_gqa.json"));
  std::ostringstream streamed;
  write_trace_json(streamed, compute_trace(gqa));
  CHECK(streamed.str() == tree_trace(compute_trace(gqa)).dump());
  const DecodeTrace d = decode(cat_sat());
  std::ostringstream decoded;
  write_decode_json(decoded, d);
  CHECK(decoded.str() == tree_decode(d).dump());
  const Run r = run({"trace", asset("the_cat_sat.json"), "--json"});
  CHECK(r.out == tree_trace(compute_trace(cat_sat())).dump() + "\n");
}

TEST_CASE("printing a trace leaves each head's matrices made on demand to one head at a time") {
  Scenario s = load_scenario_file(asset("the_lazy_dog_gqa.json"));
  const Trace t = compute_trace(s);
  std::ostringstream out;
  write_trace_json(out, t);
  // The trace's own heads were not asked: what the printer made went with its copies.
  for (const HeadTrace& h : t.heads) CHECK(h.derived_->scores.size() == 0);
  for (const HeadTrace& h : t.heads) CHECK(h.derived_->weights.size() == 0);
}

TEST_CASE("token labels are shortened to 24 columns with an ellipsis, counted in UTF-8 code points") {
  CHECK(kMaxLabelColumns == 24);
  CHECK(shorten_label("cat") == "cat");
  const std::string a24(24, 'a');
  CHECK(shorten_label(a24) == a24);
  CHECK(shorten_label(a24 + "b") == std::string(23, 'a') + "\u2026");
  std::string e30;
  for (int i = 0; i < 30; ++i) e30 += "\u00E9";
  std::string e23;
  for (int i = 0; i < 23; ++i) e23 += "\u00E9";
  CHECK(display_width(e30) == 30);
  CHECK(shorten_label(e30) == e23 + "\u2026");
  CHECK(display_width(shorten_label(e30)) == 24);
  CHECK(shorten_label("abcdef", 4) == "abc\u2026");
}

TEST_CASE("long token names cannot blow up a table: rows x columns x a bounded width") {
  // 40 tokens of 250 letters (a label may have 256 bytes): padded to the longest token, trace's text was 40 x 40 x 250
  // bytes a matrix.
  Scenario s = cat_sat();
  const int n = 40;
  s.input.tokens.clear();
  for (int i = 0; i < n; ++i) s.input.tokens.push_back(std::string(250, 'x') + std::to_string(i));
  s.input.embeddings = Matrix::Constant(n, s.d_model(), 0.5);
  s.weights = {};
  const std::filesystem::path dir = fresh_dir("long-labels");
  const std::string file = (dir / "long.json").string();
  {
    std::ofstream f(file);
    ordered_json j = {{"name", "long labels"},
                      {"tokens", s.input.tokens},
                      {"embeddings", tree_matrix(s.input.embeddings)},
                      {"attention",
                       {{"variant", "mha"},
                        {"heads", 1},
                        {"head_dim", 3},
                        {"mask", "causal"},
                        {"scale", true},
                        {"kernel", "softmax"}}}};
    f << j.dump();
  }
  const std::string shortened = std::string(23, 'x') + "\u2026";
  const Run r = run({"trace", file});
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "  " + shortened + "  "));
  CHECK(!contains(r.out, std::string(24, 'x')));
  CHECK(r.out.size() < 40 * 40 * 40 * 12);  // 12 tables of at most 40 x 40 cells of 40 bytes
  // The handouts' tables (their sentences quote a token whole, as the app does, a few times a step).
  const Run md = run({"trace", file, "--markdown"});
  REQUIRE(md.code == 0);
  CHECK(contains(md.out, "| " + shortened + " |"));
  CHECK(!contains(md.out, "| " + std::string(24, 'x')));
  const Run tex = run({"trace", file, "--latex"});
  REQUIRE(tex.code == 0);
  CHECK(contains(tex.out, "\n" + std::string(23, 'x') + cli::latex_escape("\u2026") + " & "));
  CHECK(!contains(tex.out, "\n" + std::string(24, 'x') + " & "));
  const Run d = run({"decode", file});
  REQUIRE(d.code == 0);
  CHECK(contains(d.out, shortened));
  CHECK(!contains(d.out, std::string(24, 'x')));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the window holds every edit and file to its memory budget, and the tokens slider stops there") {
  // The numbers are worked out in test_window_memory.cpp; here, the budget as the window sets it.
  ui::AppState state(cat_sat(), asset("the_cat_sat.json"));
  CHECK(state.memory_budget == limits::kDefaultMemoryBudget);
  state.set_memory_budget(64 * 1024);
  CHECK(ui::max_window_tokens(state.scenario(), 4096, state.window_frame, state.memory_budget) == 1);
  CHECK_FALSE(state.edit([](Scenario& s) { set_token_count(s, 100); }));
  CHECK(state.message.starts_with("Not applied: this document in the window needs "));
  CHECK(
      state.message.ends_with(" but the memory budget is 65,536 bytes (64.0 KiB); use --memory-budget, fewer "
                              "tokens or heads, or a smaller window"));
  CHECK(state.scenario().n_q() == 3);
  state.set_memory_budget(limits::kDefaultMemoryBudget);
  CHECK(state.edit([](Scenario& s) { set_token_count(s, 10); }));
  Scenario big = cat_sat();
  set_token_count(big, 200);
  state.set_memory_budget(64 * 1024);
  CHECK_FALSE(state.open(big, "big.json"));
  CHECK(state.message.starts_with("big.json: this document in the window needs "));
}

TEST_CASE("the settings file keeps a memory budget: a size or a number of bytes") {
  const std::filesystem::path dir = fresh_dir("budget-settings");
  const std::filesystem::path file = dir / "settings.json";
  std::ofstream(file) << R"({"theme": "light", "memory_budget": "2G"})";
  CHECK(gui::load_settings(file).memory_budget == 2 * kGiB);
  std::ofstream(file) << R"({"memory_budget": 1073741824})";
  CHECK(gui::load_settings(file).memory_budget == kGiB);
  std::ofstream(file) << R"({"theme": "light"})";
  CHECK_FALSE(gui::load_settings(file).memory_budget.has_value());
  gui::Settings s;
  s.memory_budget = 512 * (std::int64_t(1) << 20);
  gui::save_settings(s, file);
  CHECK(contains(read_file(file), "\"memory_budget\": 536870912"));
  CHECK(gui::load_settings(file).memory_budget == s.memory_budget);
  std::filesystem::remove_all(dir);
}
