#pragma once
// Autoregressive decoding with a KV cache: the tokens arrive one at a time; each step computes only the new
// token's query, appends its keys and values (MLA: its latent) to the cache and attends over the cache.
// Because a causal model never lets a token see its future, step t reproduces row t of the full trace.
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/scenario.h"

namespace attn {

// One layer's cache after the last step. After step t it held the first t+1 rows of each matrix.
struct KvCache {
  std::vector<Matrix> k;  // per KV head: (T, d)       mha, gqa, mqa
  std::vector<Matrix> v;  // per KV head: (T, d)       mha, gqa, mqa
  Matrix latent;          // (T, d_c)                  mla: the only thing cached
};

struct DecodeStep {
  int t = 0;
  std::string token;
  Matrix output;                  // (1, d_out)  the new token's output row
  std::vector<Matrix> weights;    // per query head: (1, t+1) its weights over the cached tokens
  std::vector<RowStatus> status;  // per query head
  int cache_tokens = 0;           // t + 1
  std::int64_t cache_elements = 0;
};

struct DecodeTrace {
  std::string name;
  AttentionConfig attention;
  Weights weights;
  std::int64_t elements_per_token = 0;  // per layer: 2*G*d, or d_c for mla
  std::vector<DecodeStep> steps;
  KvCache cache;                        // the final cache; step t saw its first t+1 rows
};

// Cached numbers per token per layer for this configuration.
std::int64_t cache_elements_per_token(const AttentionConfig& a);

// The mask decoding applies: the scenario's own mask, and never the future (T, T).
Matrix decode_mask(const AttentionConfig& a, int n);

// Validates (throws ScenarioError; cross-attention has nothing to decode) and runs every step.
DecodeTrace decode(const Scenario& s);

}  // namespace attn
