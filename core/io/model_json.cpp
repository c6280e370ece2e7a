#include "core/io/model_json.h"

#include <cmath>

#include "core/io/attention_json.h"
#include "core/io/json_fields.h"
#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::json;

void read_layer_weights(const json& j, const std::string& path, ModelLayer& layer) {
  std::vector<std::string_view> names;
  for (WeightId id : kAllWeights) names.push_back(weight_name(id));
  for (const LayerWeightField& f : kLayerWeightFields) names.push_back(f.name);
  const JsonFields r(j, path, names);
  for (WeightId id : kAllWeights)
    if (r.has(weight_name(id)))
      weight_slot(layer.weights, id) = read_weight(id, r.at(weight_name(id)), r.child(weight_name(id)));
  for (const LayerWeightField& f : kLayerWeightFields)
    if (r.has(f.name))
      layer.own.*f.slot = f.row ? read_row(r.at(f.name), r.child(f.name)) : read_matrix(r.at(f.name), r.child(f.name));
}

// A layer's attention block: a scenario's, except that positions belong to the model (rope is turned in every
// layer) and that the mask is causal unless it says otherwise.
AttentionConfig read_layer_attention(const json& j, const std::string& path, const Model& m, const JsonSource* source) {
  if (!j.is_object()) throw InputError(path, "expected an object but found " + describe_found(j));
  for (const char* key : {"positions", "rope_base", "max_positions", "rope_pairing", "rope_scaling"})
    if (j.contains(key))
      throw InputError(path + "." + key, "belongs to the model, not to a layer (the model's \"" + std::string(key) +
                                             "\" applies to every layer)");
  if (j.contains("position_offset"))
    throw InputError(path + ".position_offset", "is for scenarios: a model's positions start at 0");
  if (j.contains("mask") && j["mask"] == "custom")
    throw InputError(path + ".mask",
                     "\"custom\" is for scenarios: a model runs on any number of tokens (use "
                     "\"causal\", \"sliding_window\" or \"none\")");
  json block = j;
  if (m.positions == Positions::Rope) {
    block["positions"] = "rope";
    block["rope_base"] = m.rope_base;
    block["rope_pairing"] = to_string(m.rope_pairing);
  }
  AttentionConfig a = read_attention(block, path, true, 0, m.max_positions, source);  // a copy, at the same path
  a.rope_scaling = m.rope_scaling;
  if (!j.contains("mask")) a.mask = MaskKind::Causal;
  if (!a.output_projection)
    throw InputError(path + ".output_projection", "a model layer always has W_O (it writes back to the stream)");
  return a;
}

void read_layers(const json& j, Model& m, const JsonSource* source) {
  if (!j.is_array()) throw InputError("layers", "expected an array of layers but found " + describe_found(j));
  if (j.empty()) throw InputError("layers", "expected at least one layer but found none");
  for (std::size_t l = 0; l < j.size(); ++l) {
    const std::string path = index_path("layers", l);
    const JsonFields r(j[l], path, {"attention", "weights"}, "model", source);
    ModelLayer layer;
    layer.attention = read_layer_attention(r.require("attention"), r.child("attention"), m, source);
    if (r.has("weights")) read_layer_weights(r.at("weights"), r.child("weights"), layer);
    m.layers.push_back(std::move(layer));
  }
}

FfnConfig read_ffn(const json& j, const JsonSource* source) {
  const JsonFields r(j, "ffn", {"kind", "d_ff"}, "model", source);
  FfnConfig f;
  f.kind = r.choice("kind", FfnKind::None, parse_ffn_kind, ffn_kind_names());
  if (f.kind == FfnKind::None) r.only_for("d_ff", "an ffn of kind relu, gelu, swiglu or gelu_tanh", "kind \"none\"");
  else r.require("d_ff");
  f.d_ff = r.integer("d_ff", 0, 1, limits::kMaxProjectedDim);
  return f;
}

// RoPE's pairing and scaling, the model's like rope_base: every layer turns with them.
void read_rope_settings(const JsonFields& r, Model& m) {
  if (m.positions != Positions::Rope) {
    const std::string kind = "positions \"" + std::string(to_string(m.positions)) + "\"";
    r.only_for("rope_pairing", "positions \"rope\"", kind);
    r.only_for("rope_scaling", "positions \"rope\"", kind);
  }
  m.rope_pairing = r.choice("rope_pairing", RopePairing::Interleaved, parse_rope_pairing, rope_pairing_names());
  if (!r.has("rope_scaling")) return;
  m.rope_scaling = read_rope_scaling(r.at("rope_scaling"), "rope_scaling", r.source());
  check_rope_scaling(*m.rope_scaling, "rope_scaling.");  // here, not as every layer's
}

std::uint64_t read_seed(const JsonFields& r) {
  const json& seed = r.at("seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0))
    throw InputError("seed", "expected a non-negative integer but found " + r.found("seed"));
  return seed.get<std::uint64_t>();
}

void read_model_weights(const JsonFields& r, Model& m) {
  if (r.has("embedding")) m.embedding = read_matrix(r.at("embedding"), "embedding");
  if (r.has("W_P")) m.W_P = read_matrix(r.at("W_P"), "W_P");
  if (r.has("final_gain")) m.final_gain = read_row(r.at("final_gain"), "final_gain");
  if (r.has("final_bias")) m.final_bias = read_row(r.at("final_bias"), "final_bias");
  if (r.has("unembedding")) {
    if (m.tied_unembedding)
      throw InputError("unembedding", "given, but tied_unembedding is true (the logits read the embedding)");
    m.unembedding = read_matrix(r.at("unembedding"), "unembedding");
  }
}

}  // namespace

const RootKeys& model_root_keys() {
  static const RootKeys keys{
      "model",
      {"name",        "description",      "vocab",        "d_model", "max_positions", "positions",
       "rope_base",   "rope_pairing",     "rope_scaling", "norm",    "norm_function", "norm_eps",
       "ffn",         "layers",           "embedding",    "W_P",     "final_gain",    "final_bias",
       "unembedding", "tied_unembedding", "seed"},
      {"tokens", "embeddings", "context", "attention", "weights", "weight_scale"}};
  return keys;
}

bool is_model_json(const json& j) { return j.is_object() && j.contains("layers"); }

Model model_from_json(const json& j, const JsonSource* source) {
  // A scenario where a model is expected would otherwise be "tokens: unknown key".
  if (j.is_object() && !j.contains("layers") && j.contains("attention"))
    throw InputError("",
                     "this is a scenario file (it has \"attention\" and no \"layers\"), not a model; use trace or "
                     "decode, or give a model file here");
  const JsonFields r(j, "", model_root_keys().allowed, "model", source);
  Model m;
  m.name = r.string("name", "untitled model");
  m.description = r.string("description", "");
  m.vocab = read_tokens(r.require("vocab"), "vocab");
  check_vocab(m.vocab);
  r.require("d_model");
  m.d_model = r.integer("d_model", 1, 1, limits::kMaxModelDim);
  r.require("max_positions");
  m.max_positions = r.integer("max_positions", 1, 1, limits::kMaxTokens);
  m.positions = r.choice("positions", Positions::None, parse_positions, positions_names());
  if (m.positions == Positions::None || m.positions == Positions::Learned)
    r.only_for("rope_base", "positions \"sinusoidal\" and \"rope\"",
               "positions \"" + std::string(to_string(m.positions)) + "\"");
  m.rope_base = r.number("rope_base", 10000.0);
  if (!(m.rope_base >= 1.0 && m.rope_base <= limits::kMaxAbsValue))
    throw InputError("rope_base",
                     "expected a number in [1, 1e12] but found " + written_value(j["rope_base"], "rope_base", source));
  read_rope_settings(r, m);
  m.norm = r.choice("norm", Norm::Pre, parse_norm, norm_names());
  m.norm_function = r.choice("norm_function", NormFunction::LayerNorm, parse_norm_function, norm_function_names());
  if (m.norm == Norm::None) r.only_for("norm_function", "norm \"pre\" or \"post\"", "norm \"none\"");
  if (m.norm == Norm::None) r.only_for("norm_eps", "norm \"pre\" or \"post\"", "norm \"none\"");
  m.norm_eps = r.number("norm_eps", 1e-5);  // its range: check_model
  m.tied_unembedding = r.boolean("tied_unembedding", false);
  if (r.has("ffn")) m.ffn = read_ffn(r.at("ffn"), source);
  read_layers(r.require("layers"), m, source);
  read_model_weights(r, m);
  if (r.has("seed")) m.seed = read_seed(r);
  check_model(m);
  return m;
}

Model parse_model(std::string_view text) {
  const JsonSource source{text, ""};
  return model_from_json(parse_json_document(text, model_root_keys()), &source);
}

Model load_model_file(const std::filesystem::path& path, std::int64_t budget) {
  return parse_model(read_document_file(path, kMaxModelFileBytes, "a model file", budget));
}

}  // namespace attn
