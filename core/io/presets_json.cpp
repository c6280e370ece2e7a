#include "core/io/presets_json.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/io/json_fields.h"
#include "core/memory_budget.h"
#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::json;

ModelShape read_model(const json& j, const std::string& path, const JsonSource* source) {
  const JsonFields f(j, path,
                     {"name", "source", "variant", "layers", "d_model", "heads", "kv_heads", "head_dim", "latent_dim",
                      "rope_dim", "window", "local_layers", "global_layers"},
                     "presets", source);
  ModelShape m;
  m.name = f.nonempty_string("name");
  m.source = f.nonempty_string("source");
  f.require("variant");
  m.variant = f.choice("variant", Variant::Mha, parse_variant, variant_names());
  f.require("layers");
  m.layers = f.integer("layers", 0, 1, kv_limits::kMaxLayers);
  f.require("d_model");
  m.d_model = f.integer("d_model", 0, 1, kv_limits::kMaxDModel);
  f.require("heads");
  m.heads = f.integer("heads", 0, 1, kv_limits::kMaxHeads);
  f.require("head_dim");
  m.head_dim = f.integer("head_dim", 0, 1, kv_limits::kMaxHeadDim);
  switch (m.variant) {
    case Variant::Mha: m.kv_heads = f.integer("kv_heads", m.heads, 1, kv_limits::kMaxHeads); break;
    case Variant::Mqa: m.kv_heads = f.integer("kv_heads", 1, 1, kv_limits::kMaxHeads); break;
    case Variant::Gqa:
      f.require("kv_heads");
      m.kv_heads = f.integer("kv_heads", 0, 1, kv_limits::kMaxHeads);
      break;
    case Variant::Mla:
      f.only_for("kv_heads", "mha, gqa and mqa", to_string(m.variant));  // its cache is the latent, not key/value heads
      m.kv_heads = m.heads;
      f.require("latent_dim");
      break;
  }
  if (m.variant != Variant::Mla) {
    f.only_for("latent_dim", "mla", to_string(m.variant));
    f.only_for("rope_dim", "mla", to_string(m.variant));
  }
  m.latent_dim = f.integer("latent_dim", 0, 0, kv_limits::kMaxLatentDim);
  m.rope_dim = f.integer("rope_dim", 0, 0, kv_limits::kMaxRopeDim);
  if (f.has("window")) {
    m.window = f.integer("window", 0, 1, kv_limits::kMaxTokens);
    f.require("local_layers");
    f.require("global_layers");
  } else {
    for (const char* key : {"local_layers", "global_layers"})
      if (f.has(key)) throw InputError(f.child(key), "given, but window is not set");
  }
  m.local_layers = f.integer("local_layers", 0, 0, kv_limits::kMaxLayers);
  m.global_layers = f.integer("global_layers", 0, 0, kv_limits::kMaxLayers);
  validate_shape(m, {path + ".", false});
  return m;
}

}  // namespace

std::vector<ModelShape> presets_from_json(const json& j, const JsonSource* source) {
  const JsonFields top(j, "", {"description", "models"}, "presets", source);
  const json& models = top.require("models");
  if (!models.is_array()) throw InputError("models", "expected an array of models but found " + describe_found(models));
  if (models.empty()) throw InputError("models", "expected at least one model but found none");
  std::vector<ModelShape> shapes;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string path = "models[" + std::to_string(i) + "]";
    shapes.push_back(read_model(models[i], path, source));
    for (std::size_t k = 0; k + 1 < shapes.size(); ++k)
      if (shapes[k].name == shapes.back().name)
        throw InputError(path + ".name",
                         "\"" + shapes.back().name + "\" is already the name of models[" + std::to_string(k) + "]");
  }
  return shapes;
}

std::vector<ModelShape> parse_presets(std::string_view text) {
  const JsonSource source{text, ""};
  return presets_from_json(parse_json_document(text), &source);
}

std::vector<ModelShape> load_presets_file(const std::filesystem::path& path) {
  return parse_presets(read_document_file(path, kMaxPresetsFileBytes, "a presets file", limits::kDefaultMemoryBudget));
}

json shape_to_json(const ModelShape& m) {
  json j = json::object();
  j["name"] = m.name;
  j["source"] = m.source;
  j["variant"] = to_string(m.variant);
  j["layers"] = m.layers;
  if (m.d_model > 0) j["d_model"] = m.d_model;
  j["heads"] = m.heads;
  if (m.variant != Variant::Mla) j["kv_heads"] = m.kv_heads;
  if (m.head_dim > 0) j["head_dim"] = m.head_dim;
  if (m.variant == Variant::Mla) {
    j["latent_dim"] = m.latent_dim;
    j["rope_dim"] = m.rope_dim;
  }
  if (has_sliding_window(m)) {
    j["window"] = m.window;
    j["local_layers"] = m.local_layers;
    j["global_layers"] = m.global_layers;
  }
  return j;
}

}  // namespace attn
