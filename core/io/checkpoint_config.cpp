#include "core/io/checkpoint_config.h"

#include <array>
#include <cmath>
#include <limits>

#include "core/io/json_fields.h"
#include "core/io/safetensors.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::json;

constexpr std::string_view kConfigFile = "config.json";
// Sizes a config may give; the memory budget bounds what the weights of those sizes may take.
constexpr std::int64_t kMaxConfigSize = std::numeric_limits<int>::max();

struct FamilyName {
  ModelFamily family;
  std::string_view model_type, architecture;
};
constexpr std::array<FamilyName, 4> kFamilies{{{ModelFamily::Gpt2, "gpt2", "GPT2LMHeadModel"},
                                               {ModelFamily::Llama, "llama", "LlamaForCausalLM"},
                                               {ModelFamily::Qwen2, "qwen2", "Qwen2ForCausalLM"},
                                               {ModelFamily::Mistral, "mistral", "MistralForCausalLM"}}};

// A size from a config: at least 1 (0 for a layer index), at most what an int holds.
int config_int(const ForeignFields& c, std::string_view key, std::int64_t fallback, std::int64_t lo = 1) {
  return static_cast<int>(c.integer(key, fallback, lo, kMaxConfigSize));
}

std::string families_read() {
  std::string s;
  for (const FamilyName& f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f.model_type);
  return s;
}

// model_type, or the first of architectures when a config has none.
ModelFamily family_of(const ForeignFields& c) {
  if (c.find("model_type")) {
    const std::string t = c.text("model_type", "");
    for (const FamilyName& f : kFamilies)
      if (f.model_type == t) return f.family;
    throw InputError("model_type",
                     escaped_text(t) + ": not a causal language model the lab reads; it reads " + families_read());
  }
  if (const json* arch = c.find("architectures");
      arch && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
    const std::string a = (*arch)[0].get<std::string>();
    for (const FamilyName& f : kFamilies)
      if (f.architecture == a) return f.family;
    throw InputError("architectures",
                     escaped_text(a) + ": not a causal language model the lab reads; it reads " + families_read());
  }
  throw InputError("model_type",
                   "missing, and no architectures to tell the model by; the lab reads " + families_read());
}

// GPT2Config's keys and defaults (transformers' configuration_gpt2.py).
void read_gpt2(const ForeignFields& c, CheckpointConfig& m) {
  m.d_model = config_int(c, "n_embd", 768);
  m.heads = config_int(c, "n_head", 12);
  m.layers = config_int(c, "n_layer", 12);
  m.max_positions = config_int(c, "n_positions", 1024);
  m.vocab = config_int(c, "vocab_size", 50257);
  m.norm_eps = c.positive("layer_norm_epsilon", 1e-5);
  m.d_ff = config_int(c, "n_inner", 4 * static_cast<std::int64_t>(m.d_model));
  const std::string act = c.text("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    throw InputError("activation_function",
                     "expected gelu_new (the tanh form of gelu) but found \"" + escaped_text(act) + "\"");
  if (m.d_model % m.heads != 0)
    throw InputError("n_head", std::to_string(m.heads) + " does not divide n_embd " + std::to_string(m.d_model));
  m.kv_heads = m.heads;
  m.head_dim = m.d_model / m.heads;
  m.tie_word_embeddings = c.boolean("tie_word_embeddings", true);
  m.scale_attention = c.boolean("scale_attn_weights", true);
  if (c.boolean("scale_attn_by_inverse_layer_idx", false))
    throw InputError("scale_attn_by_inverse_layer_idx",
                     "true, but the lab scales every layer's scores by 1/sqrt(head_dim) alone (it does not divide them "
                     "by the layer's number too)");
}

// rope_scaling (or transformers 5's rope_parameters): none, "default", or llama3's.
void read_rope_scaling(const json& s, const std::string& key, CheckpointConfig& m) {
  if (!s.is_object()) throw InputError(key, "expected an object but found " + describe_found(s));
  const ForeignFields r{s, key + "."};
  const std::string type = r.find("rope_type") ? r.text("rope_type", "") : r.text("type", "default");
  if (type == "default") return;
  if (type != "llama3")
    throw InputError(key + ".rope_type", "\"" + escaped_text(type) +
                                             "\" is a scaling the lab does not compute; it computes llama3's or none");
  for (const char* field : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
    if (!r.find(field))
      throw InputError(r.field(field),
                       "missing (llama3 scaling needs factor, low_freq_factor, high_freq_factor and "
                       "original_max_position_embeddings, as transformers does)");
  m.llama3 = RopeScaling{r.positive("factor", 8), r.positive("low_freq_factor", 1), r.positive("high_freq_factor", 4),
                         config_int(r, "original_max_position_embeddings", 8192)};
  if (!(m.llama3->high_freq_factor > m.llama3->low_freq_factor))
    throw InputError(key + ".high_freq_factor", "must be above low_freq_factor " +
                                                    general_number(m.llama3->low_freq_factor) + " but found " +
                                                    general_number(m.llama3->high_freq_factor));
}

// The defaults each family's config class gives a key it leaves out.
struct LlamaDefaults {
  std::int64_t vocab, d_ff, max_positions, kv_heads;
};

// LlamaConfig, Qwen2Config and MistralConfig's keys (transformers' configuration_*.py).
void read_llama(const ForeignFields& c, CheckpointConfig& m) {
  const LlamaDefaults d = m.family == ModelFamily::Qwen2     ? LlamaDefaults{151936, 22016, 32768, 32}
                          : m.family == ModelFamily::Mistral ? LlamaDefaults{32000, 14336, 131072, 8}
                                                             : LlamaDefaults{32000, 11008, 2048, -1};
  m.d_model = config_int(c, "hidden_size", 4096);
  m.d_ff = config_int(c, "intermediate_size", d.d_ff);
  m.layers = config_int(c, "num_hidden_layers", 32);
  m.heads = config_int(c, "num_attention_heads", 32);
  m.kv_heads = config_int(c, "num_key_value_heads", d.kv_heads < 0 ? m.heads : d.kv_heads);
  m.vocab = config_int(c, "vocab_size", d.vocab);
  m.max_positions = config_int(c, "max_position_embeddings", d.max_positions);
  m.norm_eps = c.positive("rms_norm_eps", 1e-6);
  m.tie_word_embeddings = c.boolean("tie_word_embeddings", false);
  if (c.find("head_dim")) m.head_dim = config_int(c, "head_dim", 0);
  else if (m.d_model % m.heads != 0)
    throw InputError("num_attention_heads", std::to_string(m.heads) + " does not divide hidden_size " +
                                                std::to_string(m.d_model) + ", and the config gives no head_dim");
  else m.head_dim = m.d_model / m.heads;
  if (m.head_dim % 2 != 0)
    throw InputError("head_dim", "must be even for RoPE's pairs but found " + std::to_string(m.head_dim));
  if (m.heads % m.kv_heads != 0)
    throw InputError("num_key_value_heads",
                     std::to_string(m.kv_heads) + " does not divide num_attention_heads " + std::to_string(m.heads));
  const std::string act = c.text("hidden_act", "silu");
  if (act != "silu") throw InputError("hidden_act", "expected silu but found \"" + escaped_text(act) + "\"");
  m.attention_bias = c.boolean("attention_bias", false);
  m.mlp_bias = c.boolean("mlp_bias", false);
  m.rope_theta = c.positive("rope_theta", 10000);
  if (const json* p = c.find("rope_parameters")) {
    m.rope_theta = ForeignFields{*p, "rope_parameters."}.positive("rope_theta", m.rope_theta);
    read_rope_scaling(*p, "rope_parameters", m);
  } else if (const json* s = c.find("rope_scaling")) {
    read_rope_scaling(*s, "rope_scaling", m);
  }
}

// Mistral's window covers every layer; Qwen2's only with use_sliding_window, from max_window_layers on.
void read_window(const ForeignFields& c, CheckpointConfig& m) {
  if (m.family == ModelFamily::Mistral && c.find("sliding_window"))
    m.sliding_window = config_int(c, "sliding_window", 0);
  if (m.family == ModelFamily::Qwen2 && c.boolean("use_sliding_window", false)) {
    m.sliding_window = config_int(c, "sliding_window", 4096);
    m.first_window_layer = config_int(c, "max_window_layers", 28, 0);
  }
}

}  // namespace

std::string_view to_string(ModelFamily f) {
  for (const FamilyName& n : kFamilies)
    if (n.family == f) return n.model_type;
  return "";
}

ModelShape kv_shape(const CheckpointConfig& c, std::string name, std::string source) {
  ModelShape m;
  m.name = std::move(name);
  m.source = std::move(source);
  m.variant = c.kv_heads == c.heads ? Variant::Mha : c.kv_heads == 1 ? Variant::Mqa : Variant::Gqa;
  m.layers = c.layers;
  m.d_model = c.d_model;
  m.heads = c.heads;
  m.kv_heads = c.kv_heads;
  m.head_dim = c.head_dim;
  if (c.sliding_window) {
    if (c.first_window_layer > 0)
      throw InputError("max_window_layers", "a window on layers " + std::to_string(c.first_window_layer) +
                                                " and up only is not a pattern the cache report computes (it "
                                                "computes windows on every layer, or on groups that repeat)");
    m.window = *c.sliding_window;
    m.local_layers = 1;
    m.global_layers = 0;
  }
  return m;
}

CheckpointConfig parse_checkpoint_config(std::string_view text) {
  const json j = parse_json_document(text);
  if (!j.is_object()) throw InputError("", "expected a JSON object but found " + describe_found(j));
  const ForeignFields c{j, ""};
  CheckpointConfig m;
  m.family = family_of(c);
  if (m.family == ModelFamily::Gpt2) read_gpt2(c, m);
  else read_llama(c, m);
  read_window(c, m);
  return m;
}

std::string read_checkpoint_config_text(const std::filesystem::path& folder, std::int64_t budget) {
  std::error_code ec;
  if (!std::filesystem::exists(folder / kConfigFile, ec))
    throw InputError("", "no config.json: a Hugging Face model folder holds one beside its weights");
  try {
    return read_document_file(folder / kConfigFile, kMaxConfigBytes, "a model's config", budget);
  } catch (const InputError& e) {
    throw in_file(std::string(kConfigFile), e);
  }
}

CheckpointConfig read_checkpoint_config(const std::filesystem::path& folder, std::int64_t budget) {
  const std::string text = read_checkpoint_config_text(folder, budget);
  try {
    return parse_checkpoint_config(text);
  } catch (const InputError& e) {
    throw in_file(std::string(kConfigFile), e);
  }
}

}  // namespace attn
