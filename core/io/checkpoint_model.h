#pragma once
// A Hugging Face model folder as the lab runs it: config.json turned into the lab's Model (every layer's attention a
// scenario's configuration, the norms, the FFN, the positions), the tokenizer, and the weights, which stay in the
// mapped safetensors files and are converted to float64 a part at a time as a forward pass asks for them.
//
// GPT-2: x = wte[ids] + wpe[positions]; pre-LayerNorm blocks, c_attn's (in, 3E) columns split into W_Q, W_K, W_V
// with their biases, c_proj with its bias, gelu_tanh; logits through lm_head or wte. Llama, Qwen2, Mistral: nn.Linear
// weights (out, in) transposed into the lab's x W, RMSNorm, RoPE on the pairs (i, i + d/2) with the config's theta and
// llama3 scaling, GQA, Qwen2's q/k/v biases (all four with attention_bias), SwiGLU (gate W_1, up W_3, down W_2), the
// sliding window on the layers the config names; logits through lm_head or embed_tokens.
//
// A folder `attention-lab convert --out` wrote (core/io/converted_folder.h) opens the same way: the source's config
// and tensors, and the converted layers' attention (gqa or mla) with their key and value weights read from beside them.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/io/checkpoint_config.h"
#include "core/io/checkpoint_weights.h"
#include "core/kv_conversion.h"
#include "core/memory.h"
#include "core/memory_budget.h"
#include "core/model.h"
#include "core/tokenizer.h"

namespace attn {

// Where each of the model's tensors is: a name of the file's for every part.
struct CheckpointNames {
  std::string prefix;     // GPT-2: "" or "transformer."; the Llama family: "model."
  std::string embedding;  // "wte.weight" or "model.embed_tokens.weight", with the prefix
  std::string lm_head;    // "lm_head.weight", or "" when the logits read the token embedding (tied)
};

// The config's sizes within what its files hold (a layer count past their tensors) and what the engine computes (the
// width, each layer's attention as validate checks it); InputError naming config.json's key.
void check_checkpoint_limits(const CheckpointConfig& c, const CheckpointWeights& w);

class CheckpointModel final : public ModelWeights {
 public:
  // Reads config.json, the tokenizer and every weights file's header, and checks that each tensor the model needs is
  // there in the shape the config gives (InputError naming the file and the tensor, expected and found). No weight is
  // converted yet.
  static std::shared_ptr<const CheckpointModel> open(const std::filesystem::path& folder, std::int64_t budget);
  // `source` with `c` applied in memory, the model `attention-lab convert` would write: its converted layers' key and
  // value weights made now (an SVD a layer for mla) and held, every other weight read from the source's files as
  // before. Named "gpt2 as mla 64" ("... on 3 layers" for some). InputError as check_kv_conversion says, or past
  // `budget` (the weights made and one layer's conversion under way).
  static std::shared_ptr<const CheckpointModel> converted(const CheckpointModel& source, const KvConversion& c,
                                                          std::int64_t budget, const HeldBeside& beside = {});
  // The bytes a model converted in memory holds for its layers' key and value weights (0 for one read from files).
  std::int64_t held_bytes() const;

  // The source's config: for a converted model, the model it was made from (model() has the converted layers).
  const CheckpointConfig& config() const { return config_; }
  const std::string& config_text() const { return config_text_; }  // config.json's text, as read
  const CheckpointWeights& weights() const { return weights_; }
  // Per layer, the conversion that made it (none for a layer as the source has it, and for every layer of a model
  // that is not a converted one); source_name() is the model it was made from (name() when none).
  const std::vector<std::optional<KvConversion>>& conversions() const { return conversions_; }
  const std::string& source_name() const { return source_name_; }
  bool converted() const;
  // The model's KV cache as the memory views draw it, named `name` (core/memory.h): a converted model's when every
  // layer was converted alike; InputError for a mix (the views draw one kind of layer) and as kv_shape refuses.
  ModelShape cache_shape(std::string name, std::string source) const;
  const Model& model() const { return model_; }  // the configuration: no weights, no vocabulary of words
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const std::string& name() const { return model_.name; }
  // A token id as text: the tokenizer's piece (shown_piece), or "<id 151700>" for an embedding row past it.
  std::string piece(int id) const;
  // The bytes of float64 one layer's weights take once converted: what a forward pass holds beside its trace.
  std::int64_t layer_bytes() const;
  // The bytes of float64 the unembedding's blocks being read at once take, at width d_model.
  static std::int64_t unembedding_bytes(std::int64_t d_model);

  ModelLayer layer(int l) const override;
  Matrix embedding_rows(const std::vector<int>& ids) const override;
  Matrix learned_positions(int n) const override;
  SharedMatrix final_gain() const override;
  SharedMatrix final_bias() const override;
  Matrix logits(const Matrix& final) const override;

 private:
  CheckpointModel() = default;
  Matrix read(const std::string& name) const;         // as stored, (rows, cols); a vector as one row
  Matrix read_linear(const std::string& name) const;  // an nn.Linear weight (out, in), as the lab's (in, out)
  const StoredTensor& tensor(const std::string& name) const;
  const SafetensorsFile& file_of(const std::string& name) const;

  // Each converted layer's attention and the check that its weights are there in their shapes.
  void apply_conversions(const std::vector<KvConversion>& conversions);

  CheckpointConfig config_;
  std::string config_text_;
  std::string source_name_;
  std::vector<std::optional<KvConversion>> conversions_;
  // A model converted in memory (converted()): its layers' key and value weights, in place of the files'.
  std::shared_ptr<const ConvertedAttention> held_;
  Model model_;
  Tokenizer tokenizer_;
  CheckpointWeights weights_;
  CheckpointNames names_;
};

}  // namespace attn
