#pragma once
// Autoregressive decoding with a KV cache: the tokens arrive one at a time; each step computes only the new
// token's query, appends its keys and values (MLA: its latent) to the cache and attends over the cache.
// Because a causal model never lets a token see its future, step t reproduces row t of the full trace.
// Cross-attention (a scenario with a context, as in an encoder-decoder model's decoder): the context's keys
// and values are computed once, before the first step, and every new token's query attends to all of them;
// step t then reproduces row t of the full trace as it is, mask and all.
#include <cstdint>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/scenario.h"

namespace attn {

// One layer's cache. Rows [0, tokens) of each matrix are filled; rows past them are room reserved for the next
// steps. After step t it holds t+1 tokens; after decode() every row is filled.
struct KvCache {
  std::vector<Matrix> k;  // per KV head: (T, d)       mha, gqa, mqa
  std::vector<Matrix> v;  // per KV head: (T, d)       mha, gqa, mqa
  Matrix latent;          // (T, d_c)                  mla: the latent
  Matrix k_r;             // (T, d_R)                  mla with rope: the decoupled key, turned at its position
  Matrix indexer_k;       // (T, d_I)                  sparse: the indexer's key of each token
  int tokens = 0;         // how many rows are filled
};

// MLA as it is served: W_UK folded into the query side and W_UV into the output projection, once, before the
// first step. Keys and values are never formed, unless RoPE turns the expanded keys or biases sit beside the latent
// (a model converted to mla): then each step expands every cached latent again.
struct DecodeStep {
  int t = 0;
  std::string token;
  Matrix output;                  // (1, d_out)  the new token's output row
  std::vector<Matrix> weights;    // per query head: (1, t+1) its weights over the cached tokens
  std::vector<RowStatus> status;  // per query head
  Matrix indexer_scores;          // (1, t+1) sparse: the new token's indexer score of every cached token (-inf hidden)
  Matrix selected;                // (1, t+1) sparse: 1 = among its top_k, the only tokens its heads attend to
  int cache_tokens = 0;           // t + 1
  std::int64_t cache_elements = 0;
};

struct DecodeTrace {
  std::string name;
  AttentionConfig attention;
  Weights weights;
  std::int64_t elements_per_token = 0;  // per layer and cached token: 2*G*d or d_c (+ d_R, + d_I)
  std::vector<DecodeStep> steps;
  KvCache cache;                 // the final cache; step t saw its first t+1 rows (cross-attention: all of it)
  bool cross_attention = false;  // the cache holds the context, filled before step 0
  std::vector<std::string> cached_tokens;  // the cache's rows: the tokens, or the context's for cross-attention
};

// Cached numbers per token per layer for this configuration: 2*G*d (mla: d_c, + d_R with rope), + d_I with sparse
// attention (the indexer keeps a key per token too).
std::int64_t cache_elements_per_token(const AttentionConfig& a);

// The mask decoding applies: the scenario's own mask, and never the future (T, T).
Matrix decode_mask(const AttentionConfig& a, int n);

// An empty cache with room for `capacity` tokens (decode_step grows it past that, at the cost of a copy).
KvCache make_kv_cache(const AttentionConfig& a, int capacity);

// Positions here are row indices: row t sits at first_position(a) + t.
// One step: x_row (1, d_model) is the new token's embedding, at row t = cache.tokens. Its keys and values
// (mla: its latent) are appended to the cache as row t, then every query head attends over the t+1 cached
// tokens, seeing those whose entry of mask_row (1, t+1) is 1 (sparse: and that its indexer selects). w holds the
// weights the variant uses (resolve_weights); mla reads `absorbed` (absorb_weights, prepared once) or, when it is
// null, absorbs for this step alone. Does not validate: decode() does. The step's token label is left empty.
DecodeStep decode_step(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row,
                       const Matrix& mask_row, const AbsorbedWeights* absorbed = nullptr);

// Appends what the cache keeps of the embedding x_row (1, d_model) at row cache.tokens: its keys (turned with
// rope) and values, or mla's latent (and turned decoupled key); the indexer's key with sparse attention.
void append_to_cache(const AttentionConfig& a, const Weights& w, KvCache& cache, const Matrix& x_row);
// The query of the embedding x_row at row `position` attends to every cached token it sees by mask_row
// (1, cache.tokens); t and token are left for the caller.
DecodeStep attend_to_cache(const AttentionConfig& a, const Weights& w, const KvCache& cache, const Matrix& x_row,
                           int position, const Matrix& mask_row, const AbsorbedWeights* absorbed = nullptr);

// Validates (throws InputError) and runs every step.
DecodeTrace decode(const Scenario& s);
// The same with resolve_weights(s) at hand (see compute_trace_with_weights).
DecodeTrace decode_with_weights(const Scenario& s, const Weights& resolved);

}  // namespace attn
