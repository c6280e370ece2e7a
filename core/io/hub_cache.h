#pragma once
// The models a computer already has: Hugging Face's hub cache, where every download from the Hub lands. Each model is
// models--ORG--NAME/ with refs/main (the current revision), snapshots/REV/ (the files, as links into blobs/) and
// blobs/ (a file still downloading ends in .incomplete).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/checkpoint_config.h"

namespace attn {

// The hub cache: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else $HOME/.cache/huggingface/hub (as huggingface_hub finds it). `env` reads a variable (nullptr when unset).
std::filesystem::path hub_cache_dir(const std::function<const char*(const char*)>& env);

struct CachedModel {
  std::string id{};              // "HuggingFaceTB/SmolLM2-135M" ("gpt2" for a model without an organisation)
  std::filesystem::path path{};  // the snapshot's folder, what the commands open
  std::optional<CheckpointConfig> config{};
  std::uint64_t parameters = 0;  // the weights' numbers, without GPT-2's causal-mask buffers
  std::uint64_t bytes = 0;       // what the weights take in their files
  std::string dtype{};           // the weights' dtype ("BF16"), or "mixed"
  bool usable = false;
  std::string why_not{};  // for one that is not: no config, a missing weight file or tokenizer, a partial download
};

// Every model in `cache`, sorted by id; one whose files do not read says why, and the scan goes on. Only headers are
// read (each safetensors file's, held to `budget`), never the weights.
std::vector<CachedModel> scan_hub_cache(const std::filesystem::path& cache, std::int64_t budget);

// A model's id from its folder in the cache: "models--org--name" -> "org/name"; nullopt for another folder.
std::optional<std::string> hub_model_id(std::string_view repo_folder);
// How a model folder is named: its id when it is a snapshot in the cache (models--org--name/snapshots/REV), else the
// folder's own name.
std::string model_folder_name(const std::filesystem::path& folder);

// One model folder (a snapshot or any folder the user picks), as scan_hub_cache describes it.
CachedModel describe_model_folder(const std::filesystem::path& folder, std::string id, std::int64_t budget);

}  // namespace attn
