#pragma once
// A Hugging Face model folder's config.json, for the causal language models the lab reads: GPT-2 (GPT2LMHeadModel)
// and the Llama family (LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM). Only the keys the computation needs
// are read; a config holds many more (training settings, token ids), which are left alone.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/memory.h"

namespace attn {

enum class ModelFamily { Gpt2, Llama, Qwen2, Mistral };
std::string_view to_string(ModelFamily f);  // "gpt2", "llama", "qwen2", "mistral": config.json's model_type

struct CheckpointConfig {
  ModelFamily family = ModelFamily::Gpt2;
  int layers = 1, d_model = 1, heads = 1, kv_heads = 1, head_dim = 1, d_ff = 1, vocab = 1, max_positions = 1;
  double norm_eps = 1e-5;  // LayerNorm's (GPT-2) or RMSNorm's epsilon
  // The Llama family's positions: RoPE with this theta, pairing (i, i + head_dim / 2).
  double rope_theta = 10000;
  std::optional<RopeScaling> llama3;  // Llama 3's rope_scaling (core/config.h)
  bool attention_bias = false;  // biases on q, k, v and o (Llama's attention_bias); Qwen2 has q, k, v biases always
  bool mlp_bias = false;        // biases on gate, up and down (Llama's mlp_bias)
  // Layers from first_window_layer on attend to the last `sliding_window` keys only (Mistral: every layer; Qwen2 with
  // use_sliding_window: from max_window_layers on).
  std::optional<int> sliding_window;
  int first_window_layer = 0;
  bool tie_word_embeddings = false;  // the logits read the token embedding (lm_head.weight, if any, is not read)
  bool scale_attention = true;       // GPT-2's scale_attn_weights: scores divided by sqrt(head_dim)
};

// The shape the KV cache reports read (core/memory.h): the model's attention as configured, named `name`. A window on
// only some layers that do not repeat in groups (Qwen2's from max_window_layers on) is refused: InputError naming
// max_window_layers.
ModelShape kv_shape(const CheckpointConfig& c, std::string name, std::string source);

// The config of `text` (config.json's contents); throws InputError naming the key, what was expected and what was
// found, and for another kind of model its model_type ("bert: not a causal language model the lab reads; it reads
// gpt2, llama, qwen2, mistral").
CheckpointConfig parse_checkpoint_config(std::string_view text);
// The same, read from the folder's config.json within `budget`; messages start with "config.json".
CheckpointConfig read_checkpoint_config(const std::filesystem::path& folder, std::int64_t budget);
// config.json's text, read within `budget` (at most kMaxConfigBytes); messages start with "config.json".
inline constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;
std::string read_checkpoint_config_text(const std::filesystem::path& folder, std::int64_t budget);

}  // namespace attn
