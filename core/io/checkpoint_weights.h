#pragma once
// A Hugging Face model folder's weights: model.safetensors, or the shards model.safetensors.index.json lists in its
// weight_map ({"metadata": {...}, "weight_map": {tensor: file}}). Shard names are taken from the index as written,
// never rebuilt (DeepSeek's are "-of-000004", six digits).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/safetensors.h"

namespace attn {

inline constexpr std::string_view kSingleWeightsFile = "model.safetensors";
inline constexpr std::string_view kWeightsIndexFile = "model.safetensors.index.json";

struct FoundTensor {
  const SafetensorsFile* file = nullptr;
  const StoredTensor* tensor = nullptr;
  explicit operator bool() const { return tensor != nullptr; }
};

class CheckpointWeights {
 public:
  // Opens and checks every weights file of `folder`; throws InputError naming the file (none for a folder without
  // weights, which the caller names), and the tensor where one is at
  // fault: no weights file, an index that is not {"weight_map": {name: file}}, a shard name with a path separator or
  // "..", a missing shard, a tensor the index names but its shard does not hold. With an index, the tensors are the
  // ones it names (as Hugging Face loads them).
  static CheckpointWeights open(const std::filesystem::path& folder, std::int64_t budget);

  FoundTensor find(std::string_view name) const;  // empty when no file holds it
  std::vector<std::string> names() const;         // every tensor, sorted
  // The files, in the order the index first names them (one for model.safetensors).
  const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }
  std::uint64_t stored_bytes() const;  // what the tensors' data takes in the files

 private:
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, FoundTensor, std::less<>> tensors_;
};

}  // namespace attn
