#pragma once
// What `attention-lab kv` prints: one model's cache (text or JSON), the variant comparison, the presets.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory.h"

namespace attn::cli {

struct KvRequest {
  ModelShape model;
  std::uint64_t seq = 32768;
  bool seq_is_default = true;
  std::uint64_t batch = 1;
  Dtype dtype = Dtype::BF16;
};

inline constexpr std::uint64_t kDefaultSeq = 32768;

// Throw OverflowError when a total does not fit in 64 bits.
void print_kv(std::ostream& out, const KvRequest& r);
nlohmann::json kv_json(const KvRequest& r);
void print_kv_compare(std::ostream& out, const KvRequest& r);
nlohmann::json kv_compare_json(const KvRequest& r);

void print_preset_list(std::ostream& out, const std::vector<ModelShape>& presets, const std::string& file);
nlohmann::json preset_list_json(const std::vector<ModelShape>& presets, const std::string& file);

// Shared by the printers: "GQA, 80 layers, 64 query heads sharing 8 KV heads, head_dim 128".
std::string describe_shape(const ModelShape& m);
// "32,768 tokens (the default; change with --seq), batch 1, bf16 (16 bits per number)".
std::string describe_settings(const KvRequest& r);
// "1,024 tokens on 52 of 62 layers (5 local : 1 global)", or "" without a window.
std::string describe_window(const ModelShape& m);
// bytes_per_token in JSON: exact, so a fraction (0.5) when int4 packs an odd count of numbers.
nlohmann::json bytes_per_token_json(const KvCacheSize& s);

}  // namespace attn::cli
