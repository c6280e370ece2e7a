// config.json as Hugging Face writes it for GPT-2, Llama, Qwen2 and Mistral: the keys the computation needs, with
// transformers' defaults for the ones a file leaves out, and a message naming the key for everything else.
#include <doctest/doctest.h>

#include "core/io/checkpoint_config.h"
#include "core/validate.h"

using namespace attn;

namespace {

std::string config_error(const std::string& text) {
  try {
    parse_checkpoint_config(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "read";
}

}  // namespace

TEST_CASE("GPT-2 small's config, and its defaults") {
  const CheckpointConfig c = parse_checkpoint_config(
      R"({"activation_function":"gelu_new","architectures":["GPT2LMHeadModel"],"layer_norm_epsilon":1e-05,)"
      R"("model_type":"gpt2","n_ctx":1024,"n_embd":768,"n_head":12,"n_layer":12,"n_positions":1024,"vocab_size":50257,)"
      R"("task_specific_params":{"text-generation":{"do_sample":true,"max_length":50}}})");
  CHECK(c.family == ModelFamily::Gpt2);
  CHECK(c.d_model == 768);
  CHECK(c.heads == 12);
  CHECK(c.kv_heads == 12);
  CHECK(c.head_dim == 64);
  CHECK(c.d_ff == 3072);  // n_inner absent: 4 n_embd
  CHECK(c.layers == 12);
  CHECK(c.max_positions == 1024);
  CHECK(c.vocab == 50257);
  CHECK(c.norm_eps == 1e-5);
  const CheckpointConfig tiny =
      parse_checkpoint_config(R"({"model_type":"gpt2","n_embd":16,"n_head":2,"n_layer":2,"n_inner":null})");
  CHECK(tiny.d_ff == 64);
  CHECK(tiny.vocab == 50257);
  CHECK(parse_checkpoint_config(R"({"architectures":["GPT2LMHeadModel"],"n_embd":8,"n_head":2,"n_inner":24})").d_ff ==
        24);
}

TEST_CASE("SmolLM2, Qwen2.5 and Mistral configs: GQA, head_dim, biases, rope and windows") {
  const CheckpointConfig smol = parse_checkpoint_config(
      R"({"architectures":["LlamaForCausalLM"],"hidden_size":576,"intermediate_size":1536,"model_type":"llama",)"
      R"("num_attention_heads":9,"num_hidden_layers":30,"num_key_value_heads":3,"rms_norm_eps":1e-05,)"
      R"("rope_theta":100000,"tie_word_embeddings":true,"vocab_size":49152,"max_position_embeddings":8192,)"
      R"("rope_scaling":null,"hidden_act":"silu"})");
  CHECK(smol.family == ModelFamily::Llama);
  CHECK(smol.heads == 9);
  CHECK(smol.kv_heads == 3);
  CHECK(smol.head_dim == 64);
  CHECK(smol.rope_theta == 100000);
  CHECK(!smol.llama3);
  CHECK(smol.tie_word_embeddings);
  const CheckpointConfig qwen = parse_checkpoint_config(
      R"({"model_type":"qwen2","hidden_size":896,"intermediate_size":4864,"num_attention_heads":14,)"
      R"("num_hidden_layers":24,"num_key_value_heads":2,"rms_norm_eps":1e-06,"rope_theta":1000000.0,)"
      R"("sliding_window":131072,"use_sliding_window":false,"max_window_layers":24,"tie_word_embeddings":true})");
  CHECK(qwen.family == ModelFamily::Qwen2);
  CHECK(qwen.vocab == 151936);  // Qwen2Config's default
  CHECK(!qwen.sliding_window);  // use_sliding_window false: the window is not used
  CHECK(qwen.norm_eps == 1e-6);
  const CheckpointConfig windowed = parse_checkpoint_config(
      R"({"model_type":"qwen2","hidden_size":8,"num_attention_heads":2,"num_key_value_heads":1,)"
      R"("use_sliding_window":true,"sliding_window":4,"max_window_layers":1})");
  CHECK(windowed.sliding_window == 4);
  CHECK(windowed.first_window_layer == 1);
  const CheckpointConfig mistral = parse_checkpoint_config(
      R"({"model_type":"mistral","hidden_size":16,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":8,)"
      R"("sliding_window":3})");
  CHECK(mistral.head_dim == 8);  // apart from hidden_size / heads
  CHECK(mistral.kv_heads == 2);
  CHECK(mistral.sliding_window == 3);
  CHECK(mistral.first_window_layer == 0);
}

TEST_CASE("llama3 rope scaling, spelled as rope_scaling or as transformers 5's rope_parameters") {
  const std::string shape = R"("model_type":"llama","hidden_size":8,"num_attention_heads":2,)";
  const CheckpointConfig old = parse_checkpoint_config(
      "{" + shape +
      R"("rope_theta":500000.0,"rope_scaling":{"factor":32.0,"high_freq_factor":4.0,"low_freq_factor":1.0,)"
      R"("original_max_position_embeddings":8192,"rope_type":"llama3"}})");
  REQUIRE(old.llama3);
  CHECK(old.llama3->factor == 32);
  CHECK(old.llama3->original_max_positions == 8192);
  CHECK(old.rope_theta == 500000);
  const CheckpointConfig v5 = parse_checkpoint_config(
      "{" + shape +
      R"("rope_parameters":{"rope_theta":50000.0,"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,)"
      R"("high_freq_factor":4.0,"original_max_position_embeddings":8192}})");
  REQUIRE(v5.llama3);
  CHECK(v5.rope_theta == 50000);
  CHECK(v5.llama3->factor == 8);
  CHECK(config_error("{" + shape + R"("rope_parameters":{"rope_type":"llama3","factor":8.0}})") ==
        "rope_parameters.low_freq_factor: missing (llama3 scaling needs factor, low_freq_factor, high_freq_factor and "
        "original_max_position_embeddings, as transformers does)");
  CHECK(
      !parse_checkpoint_config("{" + shape + R"("rope_parameters":{"rope_theta":1e4,"rope_type":"default"}})").llama3);
  CHECK(config_error("{" + shape + R"("rope_scaling":{"type":"yarn","factor":4.0}})") ==
        "rope_scaling.rope_type: \"yarn\" is a scaling the lab does not compute; it computes llama3's or none");
}

TEST_CASE("a config the lab does not read, or reads wrong, names the key") {
  CHECK(config_error(R"({"model_type":"bert","hidden_size":768})") ==
        "model_type: bert: not a causal language model the lab reads; it reads gpt2, llama, qwen2, mistral");
  CHECK(config_error(R"({"architectures":["T5ForConditionalGeneration"]})") ==
        "architectures: T5ForConditionalGeneration: not a causal language model the lab reads; it reads gpt2, llama, "
        "qwen2, mistral");
  CHECK(config_error("{}") ==
        "model_type: missing, and no architectures to tell the model by; the lab reads gpt2, "
        "llama, qwen2, mistral");
  CHECK(config_error("[]") == "expected a JSON object but found array");
  CHECK(config_error(R"({"model_type":"gpt2","n_embd":768,"n_head":5})") == "n_head: 5 does not divide n_embd 768");
  CHECK(config_error(R"({"model_type":"gpt2","n_head":"12"})") ==
        "n_head: expected a whole number but found string \"12\"");
  CHECK(config_error(R"({"model_type":"gpt2","n_layer":0})") == "n_layer: must be >= 1 (found 0)");
  CHECK(config_error(R"({"model_type":"gpt2","activation_function":"relu"})") ==
        "activation_function: expected gelu_new (the tanh form of gelu) but found \"relu\"");
  CHECK(config_error(R"({"model_type":"llama","hidden_size":8,"num_attention_heads":2,"num_key_value_heads":3})") ==
        "num_key_value_heads: 3 does not divide num_attention_heads 2");
  CHECK(config_error(R"({"model_type":"llama","hidden_size":9,"num_attention_heads":2})") ==
        "num_attention_heads: 2 does not divide hidden_size 9, and the config gives no head_dim");
  CHECK(config_error(R"({"model_type":"llama","hidden_size":6,"num_attention_heads":2})") ==
        "head_dim: must be even for RoPE's pairs but found 3");
  CHECK(config_error(R"({"model_type":"llama","rms_norm_eps":-1})") ==
        "rms_norm_eps: expected a number above 0 but found number -1");
  CHECK(config_error(R"({"model_type":"llama","hidden_act":"gelu"})") ==
        "hidden_act: expected silu but found \"gelu\"");
  CHECK(config_error(R"({"model_type":"gpt2","n_head":2,"n_head":3})") == "n_head: key appears twice in one object");
}
