#include "core/io/converted_folder.h"

#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"
#include "core/io/checkpoint_model.h"
#include "core/io/json_fields.h"
#include "core/io/safetensors_write.h"
#include "core/text_format.h"

namespace attn {

KvConversion conversion_from_json(const JsonFields& f) {
  KvConversion c;
  const std::string to = f.nonempty_string("to");
  if (to != "gqa" && to != "mla") throw InputError(f.child("to"), "expected gqa or mla but found " + f.found("to"));
  c.to = to == "mla" ? KvTarget::Mla : KvTarget::Gqa;
  const char* size = c.to == KvTarget::Mla ? "latent_dim" : "kv_heads";
  if (!f.has(size)) throw InputError(f.child(size), "missing (" + to + " needs it)");
  if (c.to == KvTarget::Mla) f.only_for("kv_heads", "to gqa", "mla");
  else f.only_for("latent_dim", "to mla", "gqa");
  if (c.to == KvTarget::Mla) c.latent_dim = f.integer("latent_dim", 1, 1, limits::kMaxProjectedDim);
  else c.kv_heads = f.integer("kv_heads", 1, 1, limits::kMaxHeads);
  return c;
}

KvConversion layer_conversion(const KvConversion& c, int layer) {
  return KvConversion{c.to, c.kv_heads, c.latent_dim, {layer}};
}

void add_conversion_json(nlohmann::ordered_json& j, const KvConversion& c) {
  j["to"] = c.to == KvTarget::Mla ? "mla" : "gqa";
  if (c.to == KvTarget::Mla) j["latent_dim"] = c.latent_dim;
  else j["kv_heads"] = c.kv_heads;
}

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTensorPrefix = "attention_lab.layers.";
// The tokenizer's files and the small ones beside them that programs read with a model; the first that are there
// are copied (a folder has tokenizer.json, or GPT-2's vocab.json and merges.txt, or both).
constexpr std::string_view kCopiedFiles[] = {
    "tokenizer.json",        "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
    "generation_config.json"};

// One entry of "converted_layers", at `field`.
KvConversion read_layer_entry(const nlohmann::json& j, const std::string& field, int layers) {
  const JsonFields f(j, field, {"layer", "to", "kv_heads", "latent_dim"});
  KvConversion c = conversion_from_json(f);
  c.layers = {f.integer("layer", -1, 0, layers - 1)};
  if (!f.has("layer")) throw InputError(f.child("layer"), "missing (the layer's index)");
  return c;
}

std::vector<KvConversion> read_layer_entries(const nlohmann::json& j, int layers) {
  if (!j.is_array()) throw InputError("converted_layers", "expected an array but found " + describe_found(j));
  std::vector<KvConversion> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string field = "converted_layers[" + std::to_string(i) + "]";
    out.push_back(read_layer_entry(j[i], field, layers));
    if (i > 0 && out[i].layers[0] <= out[i - 1].layers[0])
      throw InputError(field + ".layer", "layers are listed once each, in ascending order (found " +
                                             std::to_string(out[i].layers[0]) + " after " +
                                             std::to_string(out[i - 1].layers[0]) + ")");
  }
  return out;
}

ConvertedDescription parse_description(const std::string& text) {
  const nlohmann::json j = parse_json_document(text, {"model.json", {"format", "source", "converted_layers"}, {}});
  const JsonFields root(j, "", {"format", "source", "converted_layers"}, "model.json");
  if (root.nonempty_string("format") != kConvertedFormat)
    throw InputError("format", "expected \"" + std::string(kConvertedFormat) + "\" but found " + root.found("format"));
  const JsonFields source(root.require("source"), "source", {"name", "config"});
  ConvertedDescription d;
  d.source_name = source.nonempty_string("name");
  d.config_text = source.require("config").dump();
  try {
    d.config = parse_checkpoint_config(d.config_text);
  } catch (const InputError& e) {
    const std::string what = e.what(), field = e.field();
    throw InputError("source.config" + (field.empty() ? "" : "." + field),
                     field.empty() ? what : what.substr(field.size() + 2));
  }
  d.layers = read_layer_entries(root.require("converted_layers"), d.config.layers);
  return d;
}

// model.json of `source` converted by `c`: the source's conversions of other layers kept, c's layers replaced.
nlohmann::ordered_json description_json(const CheckpointModel& source, const KvConversion& c) {
  std::vector<std::optional<KvConversion>> layers = source.conversions();
  for (const int l : c.layers) layers[static_cast<std::size_t>(l)] = layer_conversion(c, l);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    if (!layers[l]) continue;
    nlohmann::ordered_json e{{"layer", l}};
    add_conversion_json(e, *layers[l]);
    list.push_back(e);
  }
  return {{"format", kConvertedFormat},
          {"source", {{"name", source.source_name()}, {"config", nlohmann::ordered_json::parse(source.config_text())}}},
          {"converted_layers", list}};
}

// Whether `name` is one of the converted layers' own tensors ("attention_lab.layers.3.W_K" for a layer in `layers`).
bool replaced_tensor(std::string_view name, const std::vector<int>& layers) {
  if (!name.starts_with(kTensorPrefix)) return false;
  name.remove_prefix(kTensorPrefix.size());
  const std::string_view index = name.substr(0, name.find('.'));
  return std::ranges::any_of(layers, [&](int l) { return index == std::to_string(l); });
}

std::vector<TensorToWrite> tensors_to_write(const CheckpointModel& source, const KvConversion& c,
                                            const ConvertedAttention& attention) {
  std::vector<TensorToWrite> out;
  for (const std::string& name : source.weights().names()) {
    if (replaced_tensor(name, c.layers)) continue;
    const FoundTensor f = source.weights().find(name);
    out.push_back(stored_tensor(name, *f.file, *f.tensor));
  }
  for (const int l : c.layers)
    for (const WeightId id : kKeyValueWeights)
      if (const SharedMatrix& w = weight_slot(*attention.weights[static_cast<std::size_t>(l)], id))
        out.push_back(matrix_tensor(converted_tensor_name(l, id), w, is_bias(id)));
  return out;
}

void copy_small_files(const fs::path& from, const fs::path& to) {
  for (const std::string_view name : kCopiedFiles) {
    std::error_code ec;
    if (!fs::is_regular_file(from / name, ec)) continue;
    fs::copy_file(from / name, to / name, ec);
    if (ec) throw InputError("", shown_path(from / name) + ": cannot be copied: " + ec.message());
  }
}

// The folder itself for a path typed with a trailing slash ("out/", as a shell completes a folder's name).
fs::path folder_path(const fs::path& typed) { return typed.has_filename() ? typed : typed.parent_path(); }

// A new hidden folder beside `out` for the files being written.
fs::path partial_folder(const fs::path& out) {
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  std::string pattern = (parent / ("." + out.filename().string() + ".partial-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw InputError("--out", shown_path(parent) + ": cannot make a folder in it: " + std::strerror(errno));
  // mkdtemp's folder is the owner's alone; the model folder gets what a new folder would (0777 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(pattern.c_str(), 0777 & ~mask);
  return pattern;
}

void write_files(const CheckpointModel& source, const fs::path& source_folder, const KvConversion& c,
                 const ConvertedAttention& attention, const fs::path& folder) {
  write_safetensors(folder / "model.safetensors", tensors_to_write(source, c, attention),
                    {{"written_by", "attention-lab convert"}});
  write_file_atomically(folder / kConvertedModelFile, description_json(source, c).dump(2) + "\n");
  copy_small_files(source_folder, folder);
}

}  // namespace

bool is_converted_folder(const fs::path& folder) {
  std::error_code ec;
  // A link to nowhere counts as there: reading it says what is wrong with it.
  const bool config = fs::exists(fs::symlink_status(folder / "config.json", ec));
  const bool model = fs::exists(fs::symlink_status(folder / kConvertedModelFile, ec));
  if (config && model)
    throw InputError("",
                     "holds both config.json and model.json: a Hugging Face folder or a converted model's (the "
                     "lab would not know which to read)");
  return model;
}

ConvertedDescription read_converted_description(const fs::path& folder, std::int64_t budget) {
  const std::string label(kConvertedModelFile);
  try {
    return parse_description(read_document_file(folder / kConvertedModelFile, kMaxConfigBytes + (1u << 20),
                                                "a converted model's description", budget));
  } catch (const InputError& e) {
    throw in_file(label, e);
  }
}

bool is_converted_tensor_name(std::string_view name) { return name.starts_with("attention_lab."); }

std::string converted_tensor_name(int layer, WeightId id) {
  return std::string(kTensorPrefix) + std::to_string(layer) + "." + weight_name(id);
}

void check_converted_folder_target(const fs::path& out_as_typed) {
  if (out_as_typed.empty()) throw InputError("--out", "an empty name (the new folder's name)");
  const fs::path out = folder_path(out_as_typed);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(out, ec);
  if (fs::exists(st)) {
    if (fs::is_symlink(st))
      throw InputError("--out", shown_path(out) + " is a symbolic link: name a new folder, not a link to one");
    if (!fs::is_directory(st)) throw InputError("--out", shown_path(out) + " is there and is not a folder");
    if (!fs::is_empty(out, ec))
      throw InputError("--out", shown_path(out) +
                                    " is a folder with files in it: the lab writes a new folder, "
                                    "never over files that are there");
    return;
  }
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent, ec)) throw InputError("--out", shown_path(parent) + ": no such folder");
}

void write_converted_folder(const CheckpointModel& source, const fs::path& source_folder, const KvConversion& c,
                            const ConvertedAttention& attention, const fs::path& out_as_typed) {
  const fs::path out = folder_path(out_as_typed);
  check_converted_folder_target(out);
  const fs::path partial = partial_folder(out);
  try {
    write_files(source, source_folder, c, attention, partial);
    // An empty folder at `out` is replaced by the rename; any other is refused by it.
    if (::rename(partial.c_str(), out.c_str()) != 0)
      throw InputError("--out", shown_path(out) + ": cannot be made: " + std::strerror(errno));
  } catch (...) {
    std::error_code ec;
    fs::remove_all(partial, ec);
    throw;
  }
}

}  // namespace attn
