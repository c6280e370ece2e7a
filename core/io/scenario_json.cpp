#include "core/io/scenario_json.h"

#include "core/io/attention_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/text_format.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

namespace attn {
namespace {

using nlohmann::json;

TokenRows read_token_rows(const json& tokens, const json& embeddings, const std::string& prefix) {
  return {read_tokens(tokens, prefix + "tokens"), read_matrix(embeddings, prefix + "embeddings")};
}

Weights read_weights(const json& j) {
  std::vector<std::string_view> names;
  for (WeightId id : kAllWeights) names.push_back(weight_name(id));
  const JsonFields r(j, "weights", names);
  Weights w;
  for (WeightId id : kAllWeights)
    if (r.has(weight_name(id))) weight_slot(w, id) = read_weight(id, r.at(weight_name(id)), r.child(weight_name(id)));
  return w;
}

}  // namespace

const RootKeys& scenario_root_keys() {
  static const RootKeys keys{
      "scenario",
      {"name", "description", "tokens", "embeddings", "context", "attention", "weights", "seed", "weight_scale"},
      model_root_keys().allowed};
  return keys;
}

Scenario scenario_from_json(const json& j, const JsonSource* source) {
  // A model file where a scenario is expected would otherwise be "layers: unknown key".
  if (is_model_json(j))
    throw InputError("",
                     "this is a model file (it has \"layers\"), not a scenario; use run, or trace and decode with "
                     "--layer L --tokens \"...\"");
  const JsonFields r(j, "", scenario_root_keys().allowed, "scenario", source);
  Scenario s;
  s.name = r.string("name", "untitled");
  s.description = r.string("description", "");
  s.input = read_token_rows(r.require("tokens"), r.require("embeddings"), "");
  if (r.has("context")) {
    const JsonFields c(r.at("context"), "context", {"tokens", "embeddings"}, "scenario", source);
    s.context = read_token_rows(c.require("tokens"), c.require("embeddings"), "context.");
  }
  s.weights = r.has("weights") ? read_weights(r.at("weights")) : Weights{};
  const int w_p_rows = s.weights.W_P ? static_cast<int>(s.weights.W_P->rows()) : 0;
  s.attention = read_attention(r.require("attention"), "attention", s.weights.W_O.has_value(), w_p_rows,
                               std::max(s.n_q(), s.n_kv()), source);
  if (r.has("seed")) {
    const json& seed = r.at("seed");
    if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0))
      throw InputError("seed", "expected a non-negative integer but found " + r.found("seed"));
    s.seed = seed.get<std::uint64_t>();
  }
  if (r.has("weight_scale")) {
    const json& scale = r.at("weight_scale");
    if (!scale.is_number()) throw InputError("weight_scale", "expected a number but found " + r.found("weight_scale"));
    s.weight_scale = scale.get<double>();
  }
  validate(s);
  return s;
}

Scenario parse_scenario(std::string_view text) {
  const JsonSource source{text, ""};
  return scenario_from_json(parse_json_document(text, scenario_root_keys()), &source);
}

Scenario load_scenario_file(const std::filesystem::path& path, std::int64_t budget) {
  return parse_scenario(read_document_file(path, kMaxScenarioFileBytes, "a scenario file", budget));
}

DocumentKind document_file_kind(const std::filesystem::path& path, std::int64_t budget) {
  const std::uintmax_t size =
      checked_document_size(path, kMaxModelFileBytes, "a model file, 64 MiB for a scenario file", budget);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "cannot be opened for reading");
  constexpr std::string_view kKinds[] = {"layers", "real_model"};
  std::string_view found;
  switch (find_root_key(in, kKinds, found)) {
    case RootKeyFound::Present: return found == "layers" ? DocumentKind::Model : DocumentKind::RealModel;
    case RootKeyFound::OnlyWhitespace:
      throw InputError("", size == 0 ? "the file is empty (expected a JSON object)"
                                     : "the file holds only whitespace (expected a JSON object)");
    case RootKeyFound::Absent: break;
  }
  if (size > kMaxScenarioFileBytes)
    throw InputError("", "file is larger than " + std::to_string(kMaxScenarioFileBytes >> 20) +
                             " MiB, the limit for a scenario file (found " + bytes_text(size) + ")");
  return DocumentKind::Scenario;
}

}  // namespace attn
