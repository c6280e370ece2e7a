// `eval` and `convert` as a user meets them: the windows every token is predicted in, the memory budget checked
// before a text is tokenized, messages that name the file at fault and say what it is, the model's own name in the
// JSON, options given once, and an mla error that stays meaningful when W_K is tiny beside W_V.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "checkpoint_folders.h"
#include "core/io/checkpoint_text.h"
#include "core/io/json_fields.h"
#include "core/kv_conversion.h"
#include "core/memory_budget.h"
#include "core/tokenizer.h"
#include "gui_args.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// The zero GPT-2 of checkpoint_folders.h: 3 positions (windows of 3), the tokens a, b, c and d.
std::string zero_gpt2(const std::string& name) { return gpt2_folder(name, gpt2_tensors()); }

std::string text_file(const std::filesystem::path& dir, const std::string& name, const std::string& text) {
  const std::filesystem::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace

TEST_CASE("eval: consecutive windows share their boundary token, so every token 1..N-1 is predicted once") {
  const std::string folder = zero_gpt2("eval-windows");
  // 5 tokens in windows of 3: 0-2 and 2-4, predicting 2 + 2 (not 0-2 and 3-4, predicting 2 + 1).
  const std::string text = text_file(folder, "five.txt", "abcda");
  const Run r = run({"eval", folder, "--text-file", text, "--json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["tokens"] == 5);
  CHECK(j["windows"] == 2);
  CHECK(j["predicted"] == 4);
  CHECK(j["loss"].get<double>() == doctest::Approx(std::log(4.0)));  // every logit 0
  // 4 tokens: 0-2 and 2-3; no window of one token.
  const auto four =
      nlohmann::json::parse(run({"eval", folder, "--text-file", text_file(folder, "four.txt", "abcd"), "--json"}).out);
  CHECK(four["windows"] == 2);
  CHECK(four["predicted"] == 3);
}

TEST_CASE("eval and convert: the memory budget is checked before the text is tokenized") {
  const std::string folder = zero_gpt2("eval-budget");
  const std::string text = text_file(folder, "big.txt", std::string(1 << 20, 'a'));
  const std::string tokenizing = "attention-lab: " + folder + ": tokenizing the text for " +
                                 std::filesystem::path(folder).filename().string() + " needs ";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"eval", folder, "--text-file", text, "--memory-budget", "40MB"},
        {"convert", folder, "--to", "gqa", "--kv-heads", "1", "--eval", text, "--memory-budget", "40MB"},
        {"convert", folder, "--ladder", "--eval", text, "--memory-budget", "40MB"}}) {
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with(tokenizing));
    CHECK(r.err.ends_with("; use --memory-budget, a shorter text\n"));
  }
  // Below what the program and an empty text's tokenizing hold, no shorter text would do: only a larger budget.
  const std::string two = text_file(folder, "two.txt", "ab");
  const Run tiny = run({"eval", folder, "--text-file", two, "--memory-budget", "10M"});
  CHECK(tiny.code == 2);
  CHECK(tiny.err.starts_with(tokenizing));
  CHECK(tiny.err.ends_with("but the memory budget is 10,485,760 bytes (10.0 MiB); use --memory-budget\n"));
  // What tokenizing holds is bounded from the text: a byte a symbol for a byte-level tokenizer, the template besides.
  const Tokenizer t = [] {
    Tokenizer k;
    k.byte_level = true;
    k.prefix = {0};
    return k;
  }();
  CHECK(symbol_bound(t, "abc") == 1 + 3 + 1);
  CHECK(encode_bytes(t, std::string(1000, 'a')) == kEncodeBytesPerSymbol * 1002);
}

TEST_CASE("eval and convert: a refusal advises only what lowers the need enough") {
  const std::string folder = zero_gpt2("convert-advice");
  // Only a larger budget lets the zero model convert at all: no "narrower latent" for gqa, no "fewer layers".
  const Run gqa = run({"convert", folder, "--to", "gqa", "--kv-heads", "1", "--memory-budget", "17MB"});
  CHECK(gqa.code == 2);
  CHECK(gqa.err.starts_with("attention-lab: " + folder + ": converting "));
  CHECK(gqa.err.ends_with("; use --memory-budget\n"));
  CHECK(!contains(gqa.err, "latent"));
}

TEST_CASE("eval and convert: messages name the text file and say what the folder is") {
  const std::filesystem::path dir = fresh_dir("eval-messages");
  const std::string folder = zero_gpt2("eval-messages-model");
  const std::string bad = text_file(dir, "bad.txt",
                                    "ab\xff"
                                    "cd");
  Run r = run({"eval", folder, "--text-file", bad});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: " + bad + ": byte 3 is not UTF-8 (\\xff)\n");
  r = run({"convert", folder, "--to", "gqa", "--kv-heads", "1", "--eval", bad});
  CHECK(r.err == "attention-lab: " + bad + ": byte 3 is not UTF-8 (\\xff)\n");
  const std::string empty = text_file(dir, "empty.txt", "");
  CHECK(run({"eval", folder, "--text-file", empty}).err ==
        "attention-lab: " + empty + ": empty: give the text the model reads\n");
  // A FOLDER that is a file, or a loop of links.
  r = run({"eval", bad, "--text-file", bad});
  CHECK(r.err == "attention-lab: " + bad +
                     ": is a file, not a model folder (a Hugging Face model's folder holds config.json and its "
                     "weights)\n");
  std::filesystem::create_symlink(dir / "loop2", dir / "loop1");
  std::filesystem::create_symlink(dir / "loop1", dir / "loop2");
  const std::string loop = (dir / "loop1").string();
  CHECK(run({"eval", loop, "--text-file", bad}).err ==
        "attention-lab: " + loop + ": too many levels of symbolic links\n");
  CHECK(run({"eval", folder, "--text-file", (dir / "loop1" / "t.txt").string()}).err ==
        "attention-lab: " + (dir / "loop1" / "t.txt").string() +
            ": cannot be read: too many levels of symbolic links\n");
  CHECK(run({"eval", (dir / "none").string(), "--text-file", bad}).err ==
        "attention-lab: " + (dir / "none").string() + ": no such folder (a Hugging Face model's folder)\n");
}

TEST_CASE("read_text_file: a file whose size the system gives as 0 is read to its end") {
  const std::string status =
      read_text_file("/proc/self/status", kMaxTextBytes, "a text to evaluate on", limits::kDefaultMemoryBudget);
  CHECK(status.starts_with("Name:"));
  // Past the limit, even so: refused, not cut.
  CHECK_THROWS_WITH_AS(read_text_file("/proc/self/maps", 16, "a text", limits::kDefaultMemoryBudget),
                       doctest::Contains("the limit for a text"), InputError);
}

TEST_CASE("eval --json: the model is the folder's own name, unescaped, and \".\" is the folder it names") {
  const std::string folder = zero_gpt2("eval\tname");
  const std::string text = text_file(folder, "t.txt", "abc");
  auto j = nlohmann::json::parse(run({"eval", folder, "--text-file", text, "--json"}).out);
  CHECK(j["model"] == std::filesystem::path(folder).filename().string());
  CHECK(contains(j["model"].get<std::string>(), "\t"));
  j = nlohmann::json::parse(run({"eval", folder + "/.", "--text-file", text, "--json"}).out);
  CHECK(j["model"] == std::filesystem::path(folder).filename().string());
}

TEST_CASE("eval and convert: flags are given once, help wins, and the model's own G is named as such") {
  const std::string folder = zero_gpt2("convert-options");
  const std::string text = text_file(folder, "t.txt", "abcd");
  CHECK(run({"eval", folder, "--text-file", text, "--json", "--json"}).err ==
        "attention-lab: --json: given twice (give each option once)\n");
  CHECK(run({"convert", folder, "--ladder", "--ladder", "--eval", text}).err ==
        "attention-lab: --ladder: given twice (give each option once)\n");
  const Run help = run({"convert", "--help", "--to", "x"});
  CHECK(help.code == 0);
  CHECK(help.out.starts_with("Usage:\nattention-lab convert FOLDER"));
  CHECK(contains(help.out, "up to eight latent widths"));
  const Run same = run({"convert", folder, "--to", "gqa", "--kv-heads", "2"});
  CHECK(same.code == 0);
  CHECK(contains(same.out, " as the model as shipped (its own 2 key/value heads: no change), 1 layer converted\n"));
  // A command after a window option: the command must come first.
  CHECK(gui_args_refusal({"--memory-budget", "50MB", "eval", folder, "--text-file", text}) ==
        "'eval' is a command: write it first, before every option (attention-lab eval ...)");
}

TEST_CASE("convert --to mla: k_error stays the share of W_K the latent drops when W_K is tiny beside W_V") {
  ModelLayer layer;
  layer.attention.heads = 2;
  layer.attention.head_dim = 2;
  Matrix w_k(4, 4), w_v(4, 4);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      w_k(r, c) = 1e-30 * std::sin(1.3 * r + 0.7 * c + 0.2);
      w_v(r, c) = std::cos(0.9 * r - 1.1 * c + 0.4);
    }
  layer.weights.W_K = w_k;
  layer.weights.W_V = w_v;
  const KvSvd svd = kv_svd(layer);
  for (int c = 1; c <= 4; ++c) {
    const KvError e = factorise_kv(layer, svd, c).error;
    INFO("latent " << c);
    CHECK(e.k_error >= 0.0);
    CHECK(e.k_error <= 1.0 + 1e-12);
    // Exactly what the latent's columns leave of W_K, however small W_K is.
    const Matrix U = svd.U.leftCols(c);
    const Matrix outside = w_k - U * (U.transpose() * w_k);
    CHECK(e.k_error == doctest::Approx(outside.norm() / w_k.norm()).epsilon(1e-9));
  }
  // At full rank nothing is dropped.
  CHECK(factorise_kv(layer, svd, 4).error.k_error < 1e-12);
}

TEST_CASE("eval and convert: a weight past the engine's bound is named as the file names it") {
  const std::string folder = zero_gpt2("eval-huge-weight");
  // h.0.attn.c_attn.weight[0][4], W_K's first number: after the 52 numbers of the tensors before it.
  std::fstream f(std::filesystem::path(folder) / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  std::uint64_t header = 0;
  f.read(reinterpret_cast<char*>(&header), 8);
  const float huge = 3e38f;
  f.seekp(static_cast<std::streamoff>(8 + header + 4 * (52 + 4)));
  f.write(reinterpret_cast<const char*>(&huge), 4);
  f.close();
  const std::string text = text_file(folder, "t.txt", "abcd");
  const std::string expected = "attention-lab: " + folder +
                               ": model.safetensors, tensor h.0.attn.c_attn.weight[0][4]: magnitude must be <= "
                               "1e12 (found ";
  CHECK(run({"eval", folder, "--text-file", text}).err.starts_with(expected));
  CHECK(run({"convert", folder, "--to", "mla", "--latent-dim", "2"}).err.starts_with(expected));
}
