#pragma once
// Tiny Hugging Face model folders written by the tests: a GPT-2 of zeros (every logit 0, so predictions are exact).
#include <fstream>
#include <string>
#include <vector>

#include "helpers.h"

namespace attn::test {

struct ZeroTensor {
  std::string name;
  std::vector<int> shape;
};

// A safetensors file of F32 tensors, every number 0.
inline std::string zero_safetensors(const std::vector<ZeroTensor>& tensors) {
  std::string header = "{";
  std::uint64_t at = 0;
  for (const ZeroTensor& t : tensors) {
    std::uint64_t n = 1;
    std::string shape;
    for (int d : t.shape) {
      n *= static_cast<std::uint64_t>(d);
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + t.name + R"(":{"dtype":"F32","shape":[)" + shape +
              R"(],"data_offsets":[)" + std::to_string(at) + "," + std::to_string(at + 4 * n) + "]}";
    at += 4 * n;
  }
  header += "}";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(header.size() >> (8 * i) & 0xFF);
  return bytes + header + std::string(at, '\0');
}

// GPT-2 with n_embd 4, 2 heads, 1 layer, 3 positions and the 4 tokens a, b, c, d (no merges).
inline std::vector<ZeroTensor> gpt2_tensors() {
  return {{"wte.weight", {4, 4}},
          {"wpe.weight", {3, 4}},
          {"ln_f.weight", {4}},
          {"ln_f.bias", {4}},
          {"h.0.ln_1.weight", {4}},
          {"h.0.ln_1.bias", {4}},
          {"h.0.ln_2.weight", {4}},
          {"h.0.ln_2.bias", {4}},
          {"h.0.attn.c_attn.weight", {4, 12}},
          {"h.0.attn.c_attn.bias", {12}},
          {"h.0.attn.c_proj.weight", {4, 4}},
          {"h.0.attn.c_proj.bias", {4}},
          {"h.0.mlp.c_fc.weight", {4, 16}},
          {"h.0.mlp.c_fc.bias", {16}},
          {"h.0.mlp.c_proj.weight", {16, 4}},
          {"h.0.mlp.c_proj.bias", {4}}};
}

inline std::string gpt2_folder(const std::string& name, const std::vector<ZeroTensor>& tensors) {
  const std::filesystem::path d = fresh_dir(name);
  std::ofstream(d / "config.json")
      << R"({"model_type":"gpt2","n_embd":4,"n_head":2,"n_layer":1,"n_positions":3,"vocab_size":4})";
  std::ofstream(d / "vocab.json") << R"({"a":0,"b":1,"c":2,"d":3})";
  std::ofstream(d / "merges.txt") << "#version: 0.2\n";
  std::ofstream(d / "model.safetensors", std::ios::binary) << zero_safetensors(tensors);
  return d.string();
}

}  // namespace attn::test
