// A Hugging Face model folder run from the command line: a tiny GPT-2 whose weights are all zero (so every logit is 0
// and the prediction is exact), and the refusals of a folder whose tensors do not fit its config or a text longer
// than its positions. The numbers of real layouts are tests/crosscheck/checkpoint_crosscheck.py's.
#include <doctest/doctest.h>

#include <fstream>

#include "checkpoint_folders.h"
#include "core/io/model_json.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("run FOLDER --text: zero weights give every token the same probability") {
  const std::string folder = gpt2_folder("ckpt-zero", gpt2_tensors());
  const Run r = run({"run", folder, "--text", "abc"});
  REQUIRE(r.code == 0);
  const std::string name = std::filesystem::path(folder).filename().string();
  CHECK(r.out == name +
                     ": the 4 likeliest next tokens at each position\n"
                     "after 'a' (position 0):  a 0.2500  b 0.2500  c 0.2500  d 0.2500\n"
                     "after 'b' (position 1):  a 0.2500  b 0.2500  c 0.2500  d 0.2500\n"
                     "after 'c' (position 2):  a 0.2500  b 0.2500  c 0.2500  d 0.2500\n"
                     "loss: 1.386 nats per predicted token, over 2 next tokens\n");  // ln 4
  const Run ablated = run({"run", folder, "--text", "abc", "--ablate", "0", "--ablate-mode", "mean"});
  REQUIRE(ablated.code == 0);
  CHECK(ablated.out.starts_with("ablated (mean): 2 heads, 0.0,0.1\n" + name + ": the 4 likeliest"));
  const Run json = run({"run", folder, "--text", "ab", "--json"});
  REQUIRE(json.code == 0);
  CHECK(json.out.starts_with(R"({"ids":[0,1],"tokens":["a","b"],"layers":[{"residual_in":)"));
}

TEST_CASE("run FOLDER refuses a text longer than the model's positions, and tensors that do not fit its config") {
  const std::string folder = gpt2_folder("ckpt-long", gpt2_tensors());
  const Run long_text = run({"run", folder, "--text", "abcd"});
  CHECK(long_text.code == 2);
  CHECK(long_text.err == "attention-lab: " + folder +
                             ": --text: 4 tokens, more than the model's 3 positions (config.json's n_positions)\n");
  std::vector<ZeroTensor> wrong = gpt2_tensors();
  wrong[8].shape = {4, 11};
  const std::string bad_shape = gpt2_folder("ckpt-shape", wrong);
  CHECK(run({"run", bad_shape, "--text", "ab"}).err ==
        "attention-lab: " + bad_shape +
            ": model.safetensors, tensor h.0.attn.c_attn.weight: expected shape [4, 12] from config.json but found "
            "[4, 11]\n");
  std::vector<ZeroTensor> missing = gpt2_tensors();
  missing.erase(missing.begin() + 3);
  const std::string no_bias = gpt2_folder("ckpt-missing", missing);
  CHECK(run({"run", no_bias, "--text", "ab"}).err ==
        "attention-lab: " + no_bias +
            ": model.safetensors, tensor ln_f.bias: missing (the config's model reads it, shape [4])\n");
  CHECK(run({"run", folder, "--tokens", "a b"}).err ==
        "attention-lab: run: a model folder reads --text \"...\" (its tokenizer splits it), not --tokens\n");
  CHECK(run({"trace", folder, "--text", "ab"}).err ==
        "attention-lab: " + folder +
            ": --layer: a model folder needs --layer L and --text \"...\" to be traced as a "
            "scenario\n");
}

TEST_CASE("trace FOLDER --layer L --text: the layer's attention as a scenario, with its biases") {
  const std::string folder = gpt2_folder("ckpt-trace", gpt2_tensors());
  const Run r = run({"trace", folder, "--layer", "0", "--text", "ab", "--json"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find(R"("attention":{"variant":"mha","heads":2,"kv_heads":2,"head_dim":2,"mask":"causal","scale":true,)"
                   R"("kernel":"softmax","output_projection":true,"qkv_bias":true,"output_bias":true})") !=
        std::string::npos);
  CHECK(r.out.find(R"("b_Q":[0.0,0.0,0.0,0.0])") != std::string::npos);
}

TEST_CASE("a config's sizes are held to the files and to the engine before a tensor name is made") {
  const std::filesystem::path folder = gpt2_folder("ckpt-layers", gpt2_tensors());
  std::ofstream(folder / "config.json") << R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":60000000})";
  CHECK(run({"run", folder.string(), "--text", "ab"}).err ==
        "attention-lab: " + folder.string() +
            ": config.json: n_layer: 60,000,000 layers, but the weights hold only 16 tensors\n");
  std::ofstream(folder / "config.json") << R"({"model_type":"gpt2","n_embd":600,"n_head":300,"n_layer":1})";
  CHECK(run({"run", folder.string(), "--text", "ab"}).err ==
        "attention-lab: " + folder.string() +
            ": config.json: layer 0's attention as it describes it: attention.heads: must be <= 256 (found 300)\n");
}

TEST_CASE("a model's rope_scaling is checked where the file writes it, and overrides leave rope's settings") {
  const std::string corpus = std::string(ATTN_TEST_DATA_DIR) + "/../corpus/";
  const std::string text = read_file(corpus + "seed_model_rms_gelu_tanh_tied.json");
  CHECK(parse_model(text).rope_pairing == RopePairing::RotateHalf);
  std::string bad = text;
  bad.replace(bad.find("\"factor\": 4"), 11, "\"factor\": 0.5");
  CHECK_THROWS_WITH_AS(parse_model(bad), "rope_scaling.factor: expected a number in [1, 1e12] but found 0.5",
                       InputError);
  const std::string scenario = corpus + "seed_biases_rotate_half_llama3.json";
  CHECK(run({"trace", scenario, "--positions", "none", "--json"}).code == 0);
  const Run mla = run({"trace", scenario, "--variant", "mla", "--latent-dim", "2", "--rope-dim", "2", "--json"});
  CHECK(mla.code == 0);
  CHECK(mla.err.starts_with("note: weights.b_Q is not used without qkv_bias; left out\n"));
}

TEST_CASE("a model folder's own files are never an output, and its tie and scaling follow config.json") {
  const std::string folder = gpt2_folder("ckpt-output", gpt2_tensors());
  const std::string config = read_file(std::filesystem::path(folder) / "config.json");
  const Run onto = run({"trace", folder, "--layer", "0", "--text", "ab", "--scenario", folder + "/config.json"});
  CHECK(onto.code == 2);
  CHECK(onto.err.find("is also the model file config.json this command reads") != std::string::npos);
  CHECK(read_file(std::filesystem::path(folder) / "config.json") == config);
  CHECK(run({"trace", folder, "--layer", "0", "--text", "ab", "--scenario", folder + "/new.json"}).code == 2);
  std::ofstream(std::filesystem::path(folder) / "config.json")
      << R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":1,"n_positions":3,"vocab_size":4,)"
      << R"("tie_word_embeddings":false})";
  CHECK(run({"run", folder, "--text", "ab"}).err ==
        "attention-lab: " + folder +
            ": model.safetensors, tensor lm_head.weight: missing (the config's model reads it, shape [4, 4])\n");
  std::ofstream(std::filesystem::path(folder) / "config.json")
      << R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":1,"scale_attn_by_inverse_layer_idx":true})";
  CHECK(run({"run", folder, "--text", "ab"}).err.find("scale_attn_by_inverse_layer_idx: true, but the lab") !=
        std::string::npos);
  CHECK(run({"run", "/no/such/model", "--text", "ab"}).err ==
        "attention-lab: /no/such/model: no such folder (a Hugging Face model's folder)\n");
  CHECK(run({"run", folder, "--text", "ab", "--layer", "0"}).err ==
        "attention-lab: run: --layer is for --json (the text shows every layer's predictions)\n");
}
