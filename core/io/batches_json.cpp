#include "core/io/batches_json.h"

#include <string>

#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/validate.h"

namespace attn {
namespace {

// One sequence: at least two ids, each an index of the vocabulary as written (no wrap past 32 or 64 bits).
Sequence read_batch_sequence(const nlohmann::json& ids, const std::string& at, const Model& m) {
  if (!ids.is_array() || ids.size() < 2) throw InputError(at, "expected a list of at least two token ids");
  Sequence q;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string id = at + "[" + std::to_string(i) + "]";
    if (!ids[i].is_number_integer()) throw InputError(id, "expected a token id but found " + describe_found(ids[i]));
    q.ids.push_back(static_cast<int>(integer_within(ids[i], 0, static_cast<std::int64_t>(m.vocab.size()) - 1, id)));
  }
  check_range(static_cast<std::int64_t>(q.ids.size()), 2, m.max_positions, at + " (its length)");
  q.targets = next_token_targets(q.ids);
  return q;
}

}  // namespace

std::vector<std::vector<Sequence>> batches_from_json(const nlohmann::json& j, const Model& m) {
  const JsonFields f(j, "", {"batches"}, "batches file");
  const nlohmann::json& list = f.require("batches");
  if (!list.is_array() || list.empty()) throw InputError("batches", "expected a non-empty list of batches");
  std::vector<std::vector<Sequence>> batches;
  for (std::size_t b = 0; b < list.size(); ++b) {
    const std::string at = "batches[" + std::to_string(b) + "]";
    if (!list[b].is_array() || list[b].empty()) throw InputError(at, "expected a non-empty list of sequences");
    std::vector<Sequence>& batch = batches.emplace_back();
    for (std::size_t s = 0; s < list[b].size(); ++s)
      batch.push_back(read_batch_sequence(list[b][s], at + "[" + std::to_string(s) + "]", m));
  }
  return batches;
}

std::vector<std::vector<Sequence>> load_batches_file(const std::filesystem::path& path, const Model& m) {
  return batches_from_json(parse_json_document(read_document_file(path, kMaxModelFileBytes)), m);
}

}  // namespace attn
