#include "core/io/checkpoint_weights.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

// An index lists a few thousand tensors in a few hundred kilobytes.
constexpr std::uintmax_t kMaxIndexBytes = 64u << 20;

// A shard's name as the index writes it: a file in the folder, nothing that leads out of it.
void check_shard_name(const std::string& file, const std::string& tensor) {
  const std::string where = std::string(kWeightsIndexFile) + ": weight_map." + escaped_text(tensor);
  if (file.empty()) throw InputError(where, "names no file");
  if (file.find_first_of("/\\") != std::string::npos || file.find("..") != std::string::npos)
    throw InputError(where, "\"" + escaped_text(file) + "\" is not a file name in the model's folder (it has " +
                                (file.find("..") != std::string::npos ? "\"..\"" : "a path separator") + ")");
}

// {tensor: file} of the index, each file name checked.
std::vector<std::pair<std::string, std::string>> weight_map(const std::filesystem::path& index, std::int64_t budget) {
  const std::string label(kWeightsIndexFile);
  nlohmann::json j;
  try {
    j = parse_json_document(read_document_file(index, kMaxIndexBytes, "a weights index", budget));
  } catch (const InputError& e) {
    throw in_file(label, e);
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw InputError(label,
                     "expected an object with a \"weight_map\" object but found " +
                         (j.is_object() && j.contains("weight_map") ? "weight_map " + describe_found(j["weight_map"])
                                                                    : describe_found(j)));
  std::vector<std::pair<std::string, std::string>> map;
  for (const auto& [tensor, file] : j["weight_map"].items()) {
    if (!file.is_string())
      throw InputError(label + ": weight_map." + escaped_text(tensor),
                       "expected a file name but found " + describe_found(file));
    check_shard_name(file.get<std::string>(), tensor);
    map.emplace_back(tensor, file.get<std::string>());
  }
  return map;
}

std::string missing_weights_message(const std::filesystem::path& folder) {
  std::string m = "no " + std::string(kSingleWeightsFile) + " or " + std::string(kWeightsIndexFile) +
                  ": the lab reads a model's weights from safetensors files";
  std::error_code ec;
  if (std::filesystem::exists(folder / "pytorch_model.bin", ec))
    m += " (pytorch_model.bin is a pickle it does not run)";
  return m;
}

}  // namespace

CheckpointWeights CheckpointWeights::open(const std::filesystem::path& folder, std::int64_t budget) {
  CheckpointWeights w;
  std::error_code ec;
  const std::filesystem::path index = folder / kWeightsIndexFile;
  if (std::filesystem::exists(index, ec)) {
    std::map<std::string, std::size_t, std::less<>> opened;  // shard name -> its place in files_
    for (const auto& [tensor, file] : weight_map(index, budget)) {
      auto [at, fresh] = opened.try_emplace(file, w.files_.size());
      if (fresh) {
        if (!std::filesystem::exists(folder / file, ec))
          throw InputError(escaped_text(file), "no such file in the model's folder (" + std::string(kWeightsIndexFile) +
                                                   " names it for tensor " + escaped_text(tensor) + ")");
        w.files_.push_back(SafetensorsFile::open(folder / file, budget));
      }
      const SafetensorsFile& f = *w.files_[at->second];
      const StoredTensor* t = f.find(tensor);
      if (!t)
        throw InputError(tensor_place(f.label(), tensor),
                         "not in the file, though " + std::string(kWeightsIndexFile) + " says it is there");
      w.tensors_.emplace(tensor, FoundTensor{&f, t});
    }
    return w;
  }
  if (!std::filesystem::exists(folder / kSingleWeightsFile, ec)) throw InputError("", missing_weights_message(folder));
  w.files_.push_back(SafetensorsFile::open(folder / kSingleWeightsFile, budget));
  for (const StoredTensor& t : w.files_.front()->tensors())
    w.tensors_.emplace(t.name, FoundTensor{w.files_.front().get(), &t});
  return w;
}

FoundTensor CheckpointWeights::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? FoundTensor{} : it->second;
}

std::vector<std::string> CheckpointWeights::names() const {
  std::vector<std::string> out;
  for (const auto& [name, found] : tensors_) out.push_back(name);
  return out;
}

std::uint64_t CheckpointWeights::stored_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& [name, found] : tensors_) bytes += found.tensor->end - found.tensor->begin;
  return bytes;
}

}  // namespace attn
