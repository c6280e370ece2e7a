#pragma once
// A converted model's folder, as `attention-lab convert --out` writes it and CheckpointModel opens it:
//   model.json         {"format": "attention-lab converted model",
//                       "source": {"name": "gpt2", "config": {config.json of the model it was made from}},
//                       "converted_layers": [{"layer": 0, "to": "mla", "latent_dim": 64},
//                                            {"layer": 1, "to": "gqa", "kv_heads": 4}, ...]}
//   model.safetensors  every tensor of the source as it was stored (its names, dtypes and bytes), and each converted
//                      layer's new key and value weights in the lab's x W layout, "attention_lab.layers.L.W_DKV"
//                      (biases one-dimensional), each in the narrowest of BF16, F32 and F64 that holds it exactly
//   the tokenizer's files, copied
// The converted layers' weights replace the source's keys and values of those layers; every other weight is the
// source's. There is no config.json: a program that reads Hugging Face folders does not take it for the source.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/checkpoint_config.h"
#include "core/io/json_fields.h"
#include "core/kv_conversion.h"

namespace attn {

class CheckpointModel;

inline constexpr std::string_view kConvertedModelFile = "model.json";
inline constexpr std::string_view kConvertedFormat = "attention-lab converted model";

// What model.json says.
struct ConvertedDescription {
  std::string source_name;
  std::string config_text;           // the source's config.json, as JSON text
  CheckpointConfig config;           // parsed from it
  std::vector<KvConversion> layers;  // one per converted layer (its `layers` that one), ascending
};

// Whether the folder is a converted model's: model.json and no config.json.
bool is_converted_folder(const std::filesystem::path& folder);
// Reads and checks model.json within `budget`: InputError naming "model.json" and the field. The conversions are
// checked against the source's configuration (G divides its key/value heads, d_c within the rank bound).
ConvertedDescription read_converted_description(const std::filesystem::path& folder, std::int64_t budget);

// "to" and "kv_heads" or "latent_dim" of an object (a converted layer's entry; a Real model file's "converted"),
// layers left empty; InputError naming the field. add_conversion_json writes them.
KvConversion conversion_from_json(const JsonFields& f);
void add_conversion_json(nlohmann::ordered_json& j, const KvConversion& c);

// One layer's part of `c` (its entry of converted_layers): c with `layers` just {layer}.
KvConversion layer_conversion(const KvConversion& c, int layer);

// The name of a converted layer's weight in model.safetensors: "attention_lab.layers.3.W_DKV".
std::string converted_tensor_name(int layer, WeightId id);
// Whether a tensor's name is one of those (it starts with "attention_lab.").
bool is_converted_tensor_name(std::string_view name);

// Writes `source` (opened from `source_folder`) converted by `c` as a new folder `out`: refused (InputError naming
// --out) when `out` is a file or a folder that is not empty. Written first as a hidden folder beside `out`, renamed
// when whole, removed on any failure: `out` never holds half a model.
void write_converted_folder(const CheckpointModel& source, const std::filesystem::path& source_folder,
                            const KvConversion& c, const ConvertedAttention& attention,
                            const std::filesystem::path& out);
// What write_converted_folder refuses, checked before the conversion's long work starts.
void check_converted_folder_target(const std::filesystem::path& out);

}  // namespace attn
