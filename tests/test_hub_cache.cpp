// A Hugging Face hub cache built here as huggingface_hub lays it out (refs/main, snapshots linking into blobs/, a
// download still .incomplete): which models open, and why the others do not.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/io/hub_cache.h"
#include "core/memory_budget.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

const std::string kGpt2Config = R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":1,"vocab_size":3})";

// A safetensors file of F32 tensors {name: elements}, each one row, data all zero.
std::string safetensors_bytes(const std::vector<std::pair<std::string, int>>& tensors) {
  std::string header = "{";
  std::uint64_t at = 0;
  for (const auto& [name, n] : tensors) {
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + R"(":{"dtype":"F32","shape":[)" +
              std::to_string(n) + R"(],"data_offsets":[)" + std::to_string(at) + "," + std::to_string(at + 4 * n) +
              "]}";
    at += 4 * static_cast<std::uint64_t>(n);
  }
  header += "}";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(header.size() >> (8 * i) & 0xFF);
  return bytes + header + std::string(at, '\0');
}

// A file of the snapshot as the hub writes it: the content in blobs/, the snapshot's name a relative link to it.
void blob(const fs::path& repo, const std::string& revision, const std::string& name, const std::string& content) {
  fs::create_directories(repo / "blobs");
  fs::create_directories(repo / "snapshots" / revision);
  const std::string hash = std::to_string(std::hash<std::string>{}(revision + name));
  std::ofstream(repo / "blobs" / hash, std::ios::binary) << content;
  fs::create_symlink(fs::path("..") / ".." / "blobs" / hash, repo / "snapshots" / revision / name);
}

fs::path hub_with_models() {
  const fs::path hub = fresh_dir("hub");
  fs::remove_all(hub);
  const fs::path good = hub / "models--org--good";
  for (const char* rev : {"old", "main_rev"}) {
    blob(good, rev, "config.json", kGpt2Config);
    blob(good, rev, "tokenizer.json", "{}");
  }
  blob(good, "main_rev", "model.safetensors",
       safetensors_bytes({{"wte.weight", 12}, {"h.0.attn.bias", 9}, {"h.0.attn.masked_bias", 1}, {"ln_f.bias", 4}}));
  fs::create_directories(good / "refs");
  std::ofstream(good / "refs" / "main") << "main_rev";
  blob(hub / "models--gpt2", "abc", "config.json", kGpt2Config);
  blob(hub / "models--org--partial", "r", "config.json", kGpt2Config);
  std::ofstream(hub / "models--org--partial" / "blobs" / "f00.incomplete") << "";
  blob(hub / "models--org--bert", "r", "config.json", R"({"model_type":"bert"})");
  blob(hub / "models--org--notok", "r", "config.json", kGpt2Config);
  blob(hub / "models--org--notok", "r", "model.safetensors", safetensors_bytes({{"wte.weight", 12}}));
  fs::create_directories(hub / "models--org--empty");
  fs::create_directories(hub / "datasets--org--data" / "snapshots" / "r");
  return hub;
}

}  // namespace

TEST_CASE("the hub cache is found where huggingface_hub looks") {
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  CHECK(hub_cache_dir(env({{"HF_HUB_CACHE", "/a"}, {"HF_HOME", "/b"}})) == "/a");
  CHECK(hub_cache_dir(env({{"HUGGINGFACE_HUB_CACHE", "/c"}, {"HF_HOME", "/b"}})) == "/c");
  CHECK(hub_cache_dir(env({{"HF_HOME", "/b"}, {"XDG_CACHE_HOME", "/x"}})) == "/b/hub");
  CHECK(hub_cache_dir(env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})) == "/x/huggingface/hub");
  CHECK(hub_cache_dir(env({{"HOME", "/h"}, {"HF_HOME", ""}})) == "/h/.cache/huggingface/hub");
}

TEST_CASE("scanning the hub cache: the current snapshot of each model, and why the others do not open") {
  const fs::path hub = hub_with_models();
  const std::vector<CachedModel> models = scan_hub_cache(hub, limits::kDefaultMemoryBudget);
  REQUIRE(models.size() == 6);
  CHECK(models[0].id == "gpt2");
  CHECK(!models[0].usable);
  CHECK(models[0].why_not ==
        "no model.safetensors or model.safetensors.index.json: the lab reads a model's weights from safetensors files");
  CHECK(models[1].id == "org/bert");
  CHECK(
      models[1].why_not ==
      "config.json: model_type: bert: not a causal language model the lab reads; it reads gpt2, llama, qwen2, mistral");
  CHECK(models[2].id == "org/empty");
  CHECK(models[2].why_not == "no snapshot: nothing was downloaded");
  const CachedModel& good = models[3];
  CHECK(good.id == "org/good");
  CHECK(good.usable);
  CHECK(good.path == hub / "models--org--good" / "snapshots" / "main_rev");  // refs/main's, not the other
  REQUIRE(good.config);
  CHECK(good.config->heads == 2);
  CHECK(good.parameters == 16);  // 12 + 4: the causal-mask buffers are not parameters
  CHECK(good.bytes == 4 * 26);
  CHECK(good.dtype == "F32");
  CHECK(models[4].id == "org/notok");
  CHECK(models[4].why_not == "no tokenizer.json, nor vocab.json and merges.txt");
  CHECK(models[5].id == "org/partial");
  CHECK(models[5].why_not == "a partial download (a file in blobs/ is still .incomplete)");
  CHECK(scan_hub_cache(hub / "none", limits::kDefaultMemoryBudget).empty());
}

TEST_CASE("models: the hub cache as a table and as JSON") {
  const fs::path hub = hub_with_models();
  const ScopedEnv cache("HF_HUB_CACHE", hub.string());
  const Run json_run = run({"models", "--json"});
  REQUIRE(json_run.code == 0);
  const nlohmann::json j = nlohmann::json::parse(json_run.out);
  REQUIRE(j.size() == 6);
  CHECK(j[3] == nlohmann::json::parse(R"({"id":"org/good","path":")" +
                                      (hub / "models--org--good" / "snapshots" / "main_rev").string() +
                                      R"(","family":"gpt2","layers":1,"heads":2,"kv_heads":2,"parameters":16,)"
                                      R"("dtype":"F32","bytes":104,"usable":true,"why_not":null})"));
  CHECK(j[2]["family"].is_null());
  const Run text = run({"models"});
  CHECK(text.out.starts_with("Hugging Face models in " + hub.string() + ": 6 models\n"));
  CHECK(contains(text.out, "org/good "));
  CHECK(contains(text.out, "a partial download"));
  CHECK(run({"models", "extra"}).err == "attention-lab: models: unexpected argument 'extra' (it takes only --json)\n");
}

TEST_CASE("a model folder's name: org/name for a cache snapshot, else the folder's own") {
  CHECK(hub_model_id("models--Qwen--Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B");
  CHECK(hub_model_id("models--gpt2") == "gpt2");
  CHECK(!hub_model_id("datasets--org--data"));
  CHECK(model_folder_name("/c/models--org--name/snapshots/abc") == "org/name");
  CHECK(model_folder_name("/c/models--org--name/snapshots/abc/") == "org/name");
  CHECK(model_folder_name("/home/me/gpt2/") == "gpt2");
  CHECK(model_folder_name("/home/me/snapshots/abc") == "abc");
}

TEST_CASE("refs/main is read only as a revision's name from a small regular file") {
  const fs::path hub = fresh_dir("hub-refs");
  fs::remove_all(hub);
  const fs::path repo = hub / "models--org--m";
  blob(repo, "r1", "config.json", kGpt2Config);
  fs::create_directories(repo / "refs");
  const fs::path ref = repo / "refs" / "main";
  const auto scanned = [&] {
    const std::vector<CachedModel> models = scan_hub_cache(hub, limits::kDefaultMemoryBudget);
    REQUIRE(models.size() == 1);
    return models[0].path;
  };
  // A pipe would stop the scan for good, /dev/zero would fill memory: neither is read, the newest snapshot is taken.
  REQUIRE(mkfifo(ref.c_str(), 0600) == 0);
  CHECK(scanned() == repo / "snapshots" / "r1");
  fs::remove(ref);
  fs::create_symlink("/dev/zero", ref);
  CHECK(scanned() == repo / "snapshots" / "r1");
  fs::remove(ref);
  // A path out of snapshots/ is no revision.
  fs::create_directories(hub / "elsewhere");
  std::ofstream(ref) << "../../elsewhere";
  CHECK(scanned() == repo / "snapshots" / "r1");
  std::ofstream(ref) << std::string(300, 'a');  // past any commit hash
  CHECK(scanned() == repo / "snapshots" / "r1");
}
