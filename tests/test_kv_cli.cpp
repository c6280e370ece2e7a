// `attention-lab kv`: exact text and JSON, --compare, --list, the presets file and every usage error.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/cli.h"
#include "app/cli/units.h"
#include "helpers.h"

using nlohmann::json;
namespace fs = std::filesystem;
using namespace attn;
using namespace attn::test;

namespace {

json run_json(std::vector<std::string> args) {
  args.push_back("--json");
  const Run r = run(args);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  return json::parse(r.out);
}

// A scratch folder for presets files, removed at the end of the test.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("attn_kv_test_" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path / "presets"); }
  ~ScratchDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

const std::string kOneModel =
    R"({"models": [{"name": "tiny", "source": "a test", "variant": "gqa", "layers": 2, "d_model": 8,)"
    R"( "heads": 4, "kv_heads": 2, "head_dim": 2}]})";

}  // namespace

TEST_CASE("kv --preset llama-3-70b: 327,680 bytes per token, 10 GiB at 32,768 tokens") {
  const Run r = run({"kv", "--preset", "llama-3-70b"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "Model: llama-3-70b\n"
        "  GQA, 80 layers, d_model 8,192, 64 query heads sharing 8 KV heads, head_dim 128\n"
        "  source: Table 3 of arXiv 2604.00965; The Llama 3 Herd of Models (arXiv 2407.21783)\n"
        "Cache for 32,768 tokens (the default; change with --seq), batch 1, bf16 (16 bits per number)\n"
        "\n"
        "Elements per token per layer:  2,048 = 2 (key and value) x 8 KV heads x 128 head_dim\n"
        "Bytes per token (80 layers):   327,680 bytes (320 KiB) = 2,048 x 80 layers x 2 bytes\n"
        "Total KV cache:                10,737,418,240 bytes (10.0 GiB) = 327,680 bytes x 32,768 tokens x batch 1\n"
        "Longest context that fits:     73,242 tokens in 24 GB, 244,140 in 80 GB, 430,297 in 141 GB\n"
        "\n"
        "  Only the 8 KV heads are cached; the 64 query heads add nothing to the cache.\n");
}

TEST_CASE("kv --preset gemma-3-27b: the window-aware total beside the full-attention one") {
  const Run r = run({"kv", "--preset", "gemma-3-27b"});
  CHECK(r.code == 0);
  CHECK(r.out ==
        "Model: gemma-3-27b\n"
        "  GQA, 62 layers, d_model 5,376, 32 query heads sharing 16 KV heads, head_dim 128\n"
        "  sliding window of 1,024 tokens on 52 of 62 layers (5 local : 1 global, repeating); the other 10 attend to "
        "every token\n"
        "  source: Table 3 of arXiv 2604.00965; Gemma 3 Technical Report (arXiv 2503.19786)\n"
        "Cache for 32,768 tokens (the default; change with --seq), batch 1, bf16 (16 bits per number)\n"
        "\n"
        "Elements per token per layer:  4,096 = 2 (key and value) x 16 KV heads x 128 head_dim\n"
        "Bytes per token (62 layers):   507,904 bytes (496 KiB) = 4,096 x 62 layers x 2 bytes\n"
        "Total KV cache, window-aware:  3,120,562,176 bytes (2.91 GiB)\n"
        "                               = 4,096 x 2 bytes x (10 layers x 32,768 + 52 layers x 1,024 tokens) x batch 1\n"
        "Total with full attention:     16,642,998,272 bytes (15.5 GiB) = 507,904 bytes x 32,768 tokens x batch 1\n"
        "Longest context that fits:     287,643 tokens in 24 GB, 971,237 in 80 GB, 1,715,866 in 141 GB\n"
        "  The 52 sliding-window layers keep only the last 1,024 tokens; the 10 global layers keep all 32,768,\n"
        "  so the real cache is 18.75% of the full-attention figure.\n"
        "\n"
        "  Only the 16 KV heads are cached; the 32 query heads add nothing to the cache.\n"
        "  head_dim 128 is the model's own figure, not d_model / heads = 5,376 / 32 = 168.\n");
}

TEST_CASE("kv --preset mistral-7b: a rolling buffer on every layer -- within the window both totals agree") {
  const Run r = run({"kv", "--preset", "mistral-7b"});
  CHECK(r.out.find("Total KV cache, window-aware:  536,870,912 bytes (512 MiB)\n"
                   "                               = 2,048 x 2 bytes x 32 layers x 4,096 tokens x batch 1\n"
                   "Total with full attention:     4,294,967,296 bytes (4.00 GiB)") != std::string::npos);
  CHECK(r.out.find("  Every layer is a sliding-window layer (a rolling buffer) that keeps only the last 4,096 tokens,\n"
                   "  so the real cache is 12.50% of the full-attention figure.\n") != std::string::npos);
  const Run short_seq = run({"kv", "--preset", "mistral-7b", "--seq", "1000"});
  CHECK(short_seq.out.find("Cache for 1,000 tokens, batch 1, bf16 (16 bits per number)\n") != std::string::npos);
  CHECK(short_seq.out.find("  At 1,000 tokens no sliding-window layer has filled its 4,096-token window yet, so both "
                           "totals agree.\n") != std::string::npos);
}

TEST_CASE("kv --json: the exact numbers under stable keys") {
  const json l = run_json({"kv", "--preset", "llama-3-70b"});
  CHECK(l["elements_per_token_per_layer"] == 2048);
  CHECK(l["bytes_per_token"] == 327680);
  CHECK(l["total_bytes"] == 10737418240ull);
  CHECK(l["total_bytes_full_attention"] == 10737418240ull);
  CHECK(l["seq"] == 32768);
  CHECK(l["seq_is_default"] == true);
  CHECK(l["batch"] == 1);
  CHECK(l["dtype"] == "bf16");
  CHECK(l["bits_per_element"] == 16);
  CHECK(l["model"]["name"] == "llama-3-70b");
  CHECK(l["model"]["variant"] == "gqa");
  CHECK(l["model"]["kv_heads"] == 8);

  const json g = run_json({"kv", "--preset", "gemma-3-27b"});
  CHECK(g["total_bytes"] == 3120562176ull);
  CHECK(g["total_bytes_full_attention"] == 16642998272ull);
  CHECK(g["local_layer_count"] == 52);
  CHECK(g["global_layer_count"] == 10);
  CHECK(g["tokens_per_local_layer"] == 1024);

  const json d = run_json({"kv", "--preset", "deepseek-v2", "--seq", "4096", "--dtype", "fp8", "--batch", "8"});
  CHECK(d["elements_per_token_per_layer"] == 576);
  CHECK(d["bytes_per_token"] == 34560);      // 576 x 60 x 1 byte
  CHECK(d["total_bytes"] == 1132462080ull);  // 34,560 x 4,096 x 8
  CHECK(d["seq_is_default"] == false);
}

TEST_CASE("kv traps: KV heads decide the size, head_dim is its own field, Falcon has one KV head") {
  // A shape typed by hand with Llama 3 70B's numbers gives the preset's figures; the 64 query heads do not count.
  const json typed = run_json({"kv", "--layers", "80", "--heads", "64", "--kv-heads", "8", "--head-dim", "128"});
  CHECK(typed["bytes_per_token"] == 327680);
  CHECK(typed["model"]["variant"] == "gqa");
  const json fewer_queries =
      run_json({"kv", "--layers", "80", "--heads", "32", "--kv-heads", "8", "--head-dim", "128"});
  CHECK(fewer_queries["bytes_per_token"] == 327680);
  // Gemma 3 27B: 2 x 16 x 128 (not 168 = 5,376 / 32) numbers per layer.
  CHECK(run_json({"kv", "--preset", "gemma-3-27b"})["elements_per_token_per_layer"] == 4096);
  // Falcon 7B: 71 query heads, one KV head: 2 x 64 numbers per layer.
  const Run f = run({"kv", "--preset", "falcon-7b"});
  CHECK(f.out.find("Elements per token per layer:  128 = 2 (key and value) x 1 KV head x 64 head_dim\n") !=
        std::string::npos);
  CHECK(f.out.find("  Only the single KV head is cached; the 71 query heads add nothing to the cache.\n") !=
        std::string::npos);
}

TEST_CASE("kv infers the variant of a typed shape: latent -> mla, G = H -> mha, G = 1 -> mqa, else gqa") {
  const std::vector<std::string> base{"kv", "--layers", "2", "--heads", "4", "--head-dim", "8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_json(args);
  };
  CHECK(with({"--kv-heads", "4"})["model"]["variant"] == "mha");
  CHECK(with({"--kv-heads", "1"})["model"]["variant"] == "mqa");
  CHECK(with({"--kv-heads", "2"})["model"]["variant"] == "gqa");
  const json mla = with({"--latent-dim", "32", "--rope-dim", "4"});
  CHECK(mla["model"]["variant"] == "mla");
  CHECK(mla["elements_per_token_per_layer"] == 36);
  CHECK(with({"--variant", "mha"})["elements_per_token_per_layer"] == 64);  // 2 x 4 x 8
  CHECK(with({"--variant", "mqa"})["elements_per_token_per_layer"] == 16);  // 2 x 8
  CHECK(with({"--kv-heads", "4", "--variant", "gqa"})["model"]["variant"] == "gqa");
  // A window on the command line: every layer local, or a repeating pattern.
  const json window = with({"--kv-heads", "2", "--window", "4", "--seq", "10"});
  CHECK(window["total_bytes"] == 32 * 2 * 4 * 2);  // 32 numbers x 2 layers x 4 tokens x 2 bytes
  CHECK(window["total_bytes_full_attention"] == 32 * 2 * 10 * 2);
  const json pattern =
      with({"--kv-heads", "2", "--window", "4", "--local-layers", "1", "--global-layers", "1", "--seq", "10"});
  CHECK(pattern["total_bytes"] == 32 * (4 + 10) * 2);
  CHECK(pattern["model"]["local_layers"] == 1);
}

TEST_CASE("kv --dtype int4 counts half bytes exactly, and says when it must round") {
  const json q = run_json({"kv", "--preset", "llama-3-70b", "--dtype", "int4"});
  CHECK(q["bytes_per_token"] == 81920);
  CHECK(q["total_bytes"] == 2684354560ull);
  CHECK(q["whole_bytes"] == true);
  const Run odd = run({"kv", "--layers", "1", "--heads", "1", "--head-dim", "1", "--latent-dim", "513", "--seq", "1",
                       "--dtype", "int4"});
  CHECK(odd.out.find("Total KV cache:                257 bytes = 256.5 bytes x 1 token x batch 1 = 256.5, rounded up "
                     "to whole bytes\n"
                     "  int4 packs two numbers per byte; an odd count leaves half a byte, counted as a whole one.\n") !=
        std::string::npos);
  // Every printed equation holds: half a byte per token, three of them 1.5 bytes, stored in 2.
  const std::vector<std::string> one = {"kv", "--layers", "1",    "--heads", "1", "--latent-dim",
                                        "1",  "--dtype",  "int4", "--seq",   "3"};
  const Run tiny = run(one);
  CHECK(tiny.out.find("Bytes per token (1 layer):     0.5 bytes = 1 x 1 layer x 0.5 bytes\n"
                      "Total KV cache:                2 bytes = 0.5 bytes x 3 tokens x batch 1 = 1.5, rounded up to "
                      "whole bytes\n") != std::string::npos);
  const json j = run_json(one);
  CHECK(j["bits_per_token"] == 4);
  CHECK(j["bytes_per_token"] == 0.5);
  CHECK(j["total_bytes"] == 2);
  CHECK(j["whole_bytes"] == false);
  // A window's totals say their rounding too.
  const Run window = run(
      {"kv", "--layers", "1", "--heads", "1", "--latent-dim", "1", "--dtype", "int4", "--seq", "3", "--window", "1"});
  CHECK(window.out.find("Total KV cache, window-aware:  1 byte\n"
                        "                               = 1 x 0.5 bytes x 1 layer x 1 token x batch 1 = 0.5, rounded "
                        "up to whole bytes\n"
                        "Total with full attention:     2 bytes = 0.5 bytes x 3 tokens x batch 1 = 1.5, rounded up to "
                        "whole bytes\n") != std::string::npos);
}

TEST_CASE("kv --compare with one head: one KV head, in the singular, and int4 halves exact in the table") {
  const Run r = run({"kv", "--variant", "mha", "--layers", "1", "--heads", "1", "--kv-heads", "1", "--head-dim", "2",
                     "--compare", "--seq", "3"});
  CHECK(r.code == 0);
  CHECK(contains(r.out, "MHA *    1 KV head (one per head)"));
  CHECK_FALSE(contains(r.out, "1 KV heads"));
  const Run q = run({"kv", "--variant", "mha", "--layers", "1", "--heads", "1", "--kv-heads", "1", "--head-dim", "2",
                     "--compare", "--seq", "3", "--dtype", "int4", "--json"});
  const json j = json::parse(q.out);
  // MLA from head_dim 2: d_c = 8, d_rope = 1, so 9 numbers of 4 bits a token: 4.5 bytes, 3 tokens 13.5 -> 14.
  const json& mla = j["variants"][3];
  CHECK(mla["bits_per_token"] == 36);
  CHECK(mla["bytes_per_token"] == 4.5);
  CHECK(mla["total_bytes"] == 14);
}

TEST_CASE("kv --compare: the same model as MHA, GQA, MQA and MLA") {
  const Run r = run({"kv", "--preset", "gemma-3-27b", "--compare"});
  CHECK(r.code == 0);
  CHECK(r.out ==
        "gemma-3-27b as each attention variant, everything else kept\n"
        "  62 layers, d_model 5,376, 32 query heads, head_dim 128\n"
        "  sliding window of 1,024 tokens on 52 of 62 layers (5 local : 1 global, repeating); the other 10 attend to "
        "every token\n"
        "Cache for 32,768 tokens (the default; change with --seq), batch 1, bf16 (16 bits per number); totals are "
        "window-aware\n"
        "\n"
        "variant  cached per token per layer  elements  bytes per token    total bytes             vs MHA\n"
        "MHA      32 KV heads (one per head)     8,192        1,015,808  6,241,124,352  5.81 GiB  100.00%\n"
        "GQA *    16 KV heads                    4,096          507,904  3,120,562,176  2.91 GiB   50.00%  (1/2)\n"
        "MQA      1 KV head                        256           31,744    195,035,136   186 MiB    3.13%  (1/32)\n"
        "MLA      latent 512 + RoPE key 64         576           71,424    438,829,056   419 MiB    7.03%\n"
        "\n"
        "* the model's own attention.\n"
        "MLA: the model has no latent of its own, so DeepSeek's proportions are used: d_c = 4 x head_dim = 512, "
        "d_rope = head_dim / 2 = 64.\n");
}

TEST_CASE("kv --compare states the G it chose, and when GQA is impossible") {
  const Run gpt2 = run({"kv", "--preset", "gpt-2-small", "--compare"});
  CHECK(gpt2.out.find("GQA      6 KV heads ") != std::string::npos);
  CHECK(gpt2.out.find(
            "GQA: the model has no grouping of its own, so G = 6 is used (the largest divisor of 12 below 12).\n") !=
        std::string::npos);
  const Run falcon = run({"kv", "--preset", "falcon-7b", "--compare"});
  CHECK(falcon.out.find("GQA      not possible (see below)") != std::string::npos);
  CHECK(falcon.out.find("GQA: not possible with 71 heads: no G with 1 < G < 71 divides 71.\n") != std::string::npos);
  CHECK(falcon.out.find("MQA *    1 KV head") != std::string::npos);
  const Run v2 = run({"kv", "--preset", "deepseek-v2", "--compare"});
  CHECK(v2.out.find("GQA: the model has no grouping of its own, so G = 8 is used (8 divides 128, as in Llama 3, "
                    "Mistral 7B and Qwen2.5).\n") != std::string::npos);
  CHECK(v2.out.find("MLA: ") == std::string::npos);  // its own latent: nothing to explain
  CHECK(v2.out.find("128 KV heads (one per head), keys 128 + 64 ") != std::string::npos);
  CHECK(v2.out.find("MHA, GQA, MQA: keys of head_dim + d_rope = 128 + 64 = 192, as wide as the model's, and values of "
                    "128.\n") != std::string::npos);
  CHECK(gpt2.out.find("keys") == std::string::npos);  // no decoupled RoPE: keys of head_dim
}

TEST_CASE("kv --compare --json") {
  const json j = run_json({"kv", "--preset", "deepseek-v2", "--compare"});
  REQUIRE(j["variants"].size() == 4);
  const json& mha = j["variants"][0];
  CHECK(mha["variant"] == "mha");
  // DeepSeek V2 scores keys of 128 + 64: as MHA it caches 128 x (192 + 128) per token and layer.
  CHECK(mha["key_dim"] == 192);
  CHECK(mha["elements_per_token_per_layer"] == 40960);
  CHECK(mha["total_bytes"] == 161061273600ull);  // 40,960 x 60 x 2 x 32,768
  CHECK(mha["ratio_vs_mha"] == 1.0);
  CHECK(mha["attention_flops_per_pair"] == 81920);  // 2 x 128 x 192 + 2 x 128 x 128
  const json& mla = j["variants"][3];
  CHECK(mla["model_own"] == true);
  CHECK(mla["latent_dim"] == 512);
  CHECK(mla["rope_dim"] == 64);
  CHECK(mla["total_bytes"] == 2264924160ull);  // 576 x 60 x 2 x 32,768
  CHECK(mla["ratio_vs_mha"] == 576.0 / 40960.0);
  CHECK(mla["attention_flops_per_pair"] == 278528);  // 2 x 128 x (512 + 64) + 2 x 128 x 512
  CHECK(j["variants"][1]["kv_heads"] == 8);
  CHECK(j["variants"][1]["ratio_vs_mha"] == 0.0625);
  CHECK(j["variants"][2]["ratio_vs_mha"] == 1.0 / 128.0);
  const json falcon = run_json({"kv", "--preset", "falcon-7b", "--compare"});
  CHECK(falcon["variants"][1] == json({{"variant", "gqa"},
                                       {"model_own", false},
                                       {"possible", false},
                                       {"note", "GQA: not possible with 71 heads: no G with 1 < G < 71 divides 71."}}));
}

TEST_CASE("kv --list: every preset with its shape and source") {
  const Run r = run({"kv", "--list"});
  CHECK(r.code == 0);
  CHECK(r.out.starts_with(
      "Presets in " + kShippedPresets +
      " (use: attention-lab kv --preset NAME)\n\n"
      "name          variant  layers  d_model  heads  KV heads  head_dim  latent + RoPE  sliding window\n"
      "llama-3-70b   GQA          80    8,192     64         8       128              -  -\n"
      "gemma-3-27b   GQA          62    5,376     32        16       128              -  1,024 (5 local : 1 global)\n"
      "deepseek-v2   MLA          60    5,120    128         -       128       512 + 64  -\n"));
  CHECK(r.out.find("falcon-7b     MQA          32    4,544     71         1        64              -  -\n") !=
        std::string::npos);
  CHECK(
      r.out.find(
          "mistral-7b    GQA          32    4,096     32         8       128              -  4,096 (every layer)\n") !=
      std::string::npos);
  CHECK(
      r.out.find(
          "\nSources:\n  llama-3-70b: Table 3 of arXiv 2604.00965; The Llama 3 Herd of Models (arXiv 2407.21783)\n") !=
      std::string::npos);
  const json j = run_json({"kv", "--list"});
  CHECK(j["presets_file"] == kShippedPresets);
  REQUIRE(j["models"].size() == 9);
  CHECK(j["models"][6] == json({{"name", "falcon-7b"},
                                {"source",
                                 "The Falcon Series of Open Language Models (arXiv 2311.16867); Hugging "
                                 "Face config tiiuae/falcon-7b"},
                                {"variant", "mqa"},
                                {"layers", 32},
                                {"d_model", 4544},
                                {"heads", 71},
                                {"kv_heads", 1},
                                {"head_dim", 64}}));
}

TEST_CASE("kv reads another presets file with --presets, or the assets folder from ATTENTION_LAB_ASSETS") {
  const ScratchDir dir;
  const std::string file = dir.write("mine.json", kOneModel);
  const json j = run_json({"kv", "--presets", file, "--preset", "tiny"});
  CHECK(j["bytes_per_token"] == 32);  // 2 x 2 x 2 numbers x 2 layers x 2 bytes
  dir.write("presets/models.json", kOneModel);
  ::setenv("ATTENTION_LAB_ASSETS", dir.path.c_str(), 1);
  const Run env = run({"kv", "--preset", "tiny", "--json"});
  const Run missing = run({"kv", "--preset", "llama-3-70b"});
  ::setenv("ATTENTION_LAB_ASSETS", (dir.path / "nowhere").c_str(), 1);
  const Run no_assets = run({"kv", "--list"});
  ::unsetenv("ATTENTION_LAB_ASSETS");
  CHECK(env.code == 0);
  CHECK(json::parse(env.out)["model"]["name"] == "tiny");
  CHECK(missing.code == 2);
  CHECK(missing.err == "attention-lab: kv: unknown preset 'llama-3-70b' (known: tiny)\n");
  CHECK(no_assets.code == 2);
  CHECK(no_assets.err ==
        "attention-lab: kv: " + (dir.path / "nowhere" / "presets" / "models.json").string() +
            ": no such file (set ATTENTION_LAB_ASSETS to the assets folder, or pass --presets FILE)\n");

  const std::string bad =
      dir.write("bad.json", R"({"models": [{"name": "x", "source": "s", "variant": "gqa",)"
                            R"( "layers": 80, "d_model": 8192, "heads": 64, "kv_heads": 7, "head_dim": 128}]})");
  const Run r = run({"kv", "--presets", bad, "--preset", "x"});
  CHECK(r.code == 2);
  CHECK(r.err == "attention-lab: kv: " + bad + ": models[0].kv_heads: must divide heads (64) but found 7\n");
  const Run none = run({"kv", "--presets", "/nonexistent/presets.json", "--list"});
  CHECK(none.err == "attention-lab: kv: /nonexistent/presets.json: no such file\n");
}

TEST_CASE("kv usage errors: a clear message on stderr, nothing on stdout, exit 2") {
  const std::vector<std::string> shape{"--layers", "80", "--heads", "64", "--head-dim", "128"};
  auto typed = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"kv"};
    args.insert(args.end(), shape.begin(), shape.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {typed({"--kv-heads", "7"}), "attention-lab: --kv-heads: must divide --heads (64) but found 7\n"},
      {typed({"--latent-dim", "0"}),
       "attention-lab: --latent-dim: must be >= 1 for mla, the width of the cached latent (found 0)\n"},
      {{"kv", "--preset", "llama-4"},
       "attention-lab: kv: unknown preset 'llama-4' (known: llama-3-70b, gemma-3-27b, deepseek-v2, gpt-2-small, "
       "llama-3.1-8b, mistral-7b, falcon-7b, qwen2.5-72b, deepseek-v3)\n"},
      {{"kv", "--preset", "llama-3-70b", "--seq", "-5"},
       "attention-lab: --seq: must be between 1 and 1,073,741,824 (found -5)\n"},
      {{"kv", "--preset", "llama-3-70b", "--seq", "0"},
       "attention-lab: --seq: must be between 1 and 1,073,741,824 (found 0)\n"},
      {{"kv", "--preset", "llama-3-70b", "--seq", "1073741825"},
       "attention-lab: --seq: must be between 1 and 1,073,741,824 (found 1073741825)\n"},
      {{"kv", "--preset", "llama-3-70b", "--seq", "99999999999999999999999"},
       "attention-lab: --seq: must be between 1 and 1,073,741,824 (found 99999999999999999999999)\n"},
      {{"kv", "--preset", "llama-3-70b", "--seq", "32k"},
       "attention-lab: --seq: expected a whole number but found '32k'\n"},
      {{"kv", "--preset", "llama-3-70b", "--batch", "0"},
       "attention-lab: --batch: must be between 1 and 1,048,576 (found 0)\n"},
      {{"kv", "--preset", "llama-3-70b", "--dtype", "fp64"},
       "attention-lab: --dtype: expected one of fp32 | fp16 | bf16 | fp8 | int8 | int4 but found 'fp64'\n"},
      {{"kv", "--kv-heads", "65536", "--layers", "65536", "--heads", "65536", "--head-dim", "65536", "--seq",
        "1073741824"},
       "attention-lab: kv: overflow: the KV cache size in bits exceeds the 64-bit limit of 18,446,744,073,709,551,615 "
       "(use a smaller --seq, --batch or model)\n"},
      {{"kv", "--preset", "llama-3-70b", "--kv-heads", "4"},
       "attention-lab: kv: --preset cannot be combined with shape options (found --kv-heads); give either a preset "
       "or a whole shape\n"},
      {{"kv"},
       "attention-lab: kv: give a model: a Hugging Face model's FOLDER, --preset NAME (see attention-lab kv --list) or "
       "a shape with --layers, "
       "--heads, --kv-heads and --head-dim\n"},
      {typed({}),
       "attention-lab: kv: missing --kv-heads (the number of key/value heads: they, not the query heads, set the "
       "cache size), or state --variant mha|mqa|mla\n"},
      {{"kv", "--kv-heads", "8", "--heads", "64"},
       "attention-lab: kv: the shape is missing --layers and --head-dim (or give --preset NAME; see attention-lab kv "
       "--list)\n"},
      {{"kv", "--variant", "mla", "--layers", "2"},
       "attention-lab: kv: the shape is missing --heads and --latent-dim (or give --preset NAME; see "
       "attention-lab kv --list)\n"},
      {typed({"--variant", "mqa", "--kv-heads", "8"}), "attention-lab: --kv-heads: must be 1 for mqa but found 8\n"},
      {typed({"--variant", "mha", "--kv-heads", "8"}),
       "attention-lab: --kv-heads: must equal --heads (64) for mha, one key/value head per query head, but found 8\n"},
      {typed({"--latent-dim", "512", "--kv-heads", "8"}),
       "attention-lab: --kv-heads: only used by mha, gqa and mqa (mla caches its latent, --latent-dim)\n"},
      {typed({"--kv-heads", "8", "--variant", "gqa", "--rope-dim", "64"}),
       "attention-lab: --rope-dim: only used by mla (this is gqa)\n"},
      {{"kv", "--layers", "1", "--heads", "1", "--latent-dim", "1", "--rope-dim", "1"},
       "attention-lab: --rope-dim: rope turns pairs of dimensions, so it must be even (found 1)\n"},
      {typed({"--variant", "mxa"}),
       "attention-lab: --variant: expected one of mha | gqa | mqa | mla but found 'mxa'\n"},
      {typed({"--kv-heads", "8", "--local-layers", "5"}),
       "attention-lab: --local-layers: given, but --window is not set\n"},
      {typed({"--kv-heads", "8", "--window", "1024", "--local-layers", "5"}),
       "attention-lab: kv: give both --local-layers and --global-layers (the repeating pattern), or neither for a "
       "window on every layer\n"},
      {typed({"--kv-heads", "8", "--window", "1024", "--local-layers", "0", "--global-layers", "1"}),
       "attention-lab: --local-layers: must be >= 1 (found 0)\n"},
      {typed({"--kv-heads", "0"}), "attention-lab: --kv-heads: must be between 1 and 65,536 (found 0)\n"},
      {typed({"--kv-heads", "eight"}), "attention-lab: --kv-heads: expected a whole number but found 'eight'\n"},
      {{"kv", "--list", "--seq", "5"},
       "attention-lab: kv: --list takes only --presets FILE and --json (found --seq)\n"},
      {{"kv", "--list", "--preset", "x"},
       "attention-lab: kv: --list takes only --presets FILE and --json (found --preset)\n"},
      {{"kv", "--preset"}, "attention-lab: --preset: missing value\n"},
      {{"kv", "--frobnicate"}, "attention-lab: kv: unknown option '--frobnicate' (see attention-lab --help)\n"},
      {{"kv", "llama-3-70b"},
       "attention-lab: kv: 'llama-3-70b' is not a folder (a model's folder holds config.json; a preset is --preset "
       "NAME, see attention-lab kv --list)\n"},
      {{"kv", "a", "b"},
       "attention-lab: kv: unexpected argument 'b' (options start with --; see attention-lab --help)\n"},
      {{"kv", ".", "--preset", "gpt-2-small"},
       "attention-lab: kv: a model's folder is a complete shape, so it cannot be combined with --preset\n"},
  };
  for (const auto& [args, message] : cases) {
    std::string typed_line;
    for (const auto& a : args) typed_line += a + " ";
    CAPTURE(typed_line);
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.err == message);
    CHECK(r.out.empty());
  }
}

TEST_CASE("--help documents kv and its options") {
  const Run r = run({"--help"});
  for (const char* option :
       {"attention-lab kv (FOLDER | --preset NAME", "config.json", "--layers L --heads H --kv-heads G --head-dim D",
        "--latent-dim C [--rope-dim R]", "--window W [--local-layers A --global-layers B]", "--seq N",
        "1 .. 1,073,741,824 (default 32,768)", "--batch B", "--dtype T", "--compare", "--list", "--presets FILE",
        "ATTENTION_LAB_ASSETS",
        "cannot be\n                    combined with the shape options below (that is an error, not an override)"}) {
    CAPTURE(option);
    CHECK(r.out.find(option) != std::string::npos);
  }
}

TEST_CASE("byte counts read as people write them") {
  using namespace attn::cli;
  CHECK(binary_size(1) == "1 byte");
  CHECK(binary_size(1023) == "1023 bytes");
  CHECK(binary_size(1024) == "1.00 KiB");
  CHECK(binary_size(1207959552) == "1.13 GiB");  // 1.125 rounds up
  CHECK(binary_size((1ull << 30) - 1) == "1.00 GiB");
  CHECK(binary_size(10ull << 40) == "10.0 TiB");
  CHECK(bytes_text(512) == "512 bytes");
  CHECK(bytes_text(10737418240ull) == "10,737,418,240 bytes (10.0 GiB)");
  CHECK(percent(1, 32) == "3.13%");
  CHECK(percent(1, 3) == "33.33%");
}

TEST_CASE("a cache size reads the same in the kv report, a chart's bar and tooltip, and a message") {
  // gemma-3-27b's GQA cache for 32,768 tokens: 3,120,562,176 bytes (the compare table above).
  const double bytes = 3120562176.0;
  const Run r = run({"kv", "--preset", "gemma-3-27b", "--compare"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("3,120,562,176  " + format_value(bytes, NumberUnit::Bytes) + " ") != std::string::npos);
  CHECK(format_value(bytes, NumberUnit::Bytes) == "2.91 GiB");
  CHECK(format_exact(bytes, NumberUnit::Bytes) == "3,120,562,176 bytes (2.91 GiB)");
  CHECK(cli::bytes_text(3120562176ull) == format_exact(bytes, NumberUnit::Bytes));
  CHECK(tick_text(10737418240.0, NumberUnit::Bytes, 3) == "10 GiB");  // a tick at a round value drops its zeros
  CHECK(percent(1, 8) == percent_text(0.125));
}

TEST_CASE("kv FOLDER: the cache of a Hugging Face model from its config.json") {
  const fs::path hub = attn::test::fresh_dir("kv-folder") / "models--HuggingFaceTB--SmolLM2-135M" / "snapshots" / "abc";
  fs::create_directories(hub);
  std::ofstream(hub / "config.json")
      << R"({"model_type":"llama","hidden_size":576,"intermediate_size":1536,"num_attention_heads":9,)"
         R"("num_hidden_layers":30,"num_key_value_heads":3,"vocab_size":49152,"tie_word_embeddings":true})";
  const Run r = run({"kv", hub.string(), "--seq", "8192", "--json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"]["name"] == "HuggingFaceTB/SmolLM2-135M");
  CHECK(j["model"]["variant"] == "gqa");
  CHECK(j["model"]["kv_heads"] == 3);
  CHECK(j["model"]["head_dim"] == 64);
  // 2 (K and V) x 30 layers x 3 KV heads x 64 x 2 bytes (bf16) = 23,040 bytes a token; 8,192 tokens.
  CHECK(j["bytes_per_token"] == 23040);
  CHECK(j["total_bytes"] == 23040ull * 8192);
  const fs::path mistral = attn::test::fresh_dir("kv-mistral");
  std::ofstream(mistral / "config.json") << R"({"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,)"
                                            R"("num_key_value_heads":8,"num_hidden_layers":32,"sliding_window":4096})";
  const Run m = run({"kv", mistral.string(), "--seq", "32768"});
  CHECK(m.code == 0);
  CHECK(contains(m.out, "sliding window of 4,096 tokens"));
  std::ofstream(mistral / "config.json") << R"({"model_type":"bert"})";
  const Run bert = run({"kv", mistral.string()});
  CHECK(bert.code == 2);
  CHECK(bert.err == "attention-lab: " + mistral.string() +
                        ": config.json: model_type: bert: not a causal language model the lab reads; it reads gpt2, "
                        "llama, qwen2, mistral\n");
}
