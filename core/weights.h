#pragma once
// Every weight matrix a variant may use, described once: its name in files, its shape for a given
// configuration, whether the variant uses it, and its seed stream. The loader, the validator, the seeding,
// the command-line overrides and the JSON output all walk this one table.
#include <array>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/matrix.h"
#include "core/shared_matrix.h"

namespace attn {

// Weights as a file gives them (any may be missing) or as the engine used them (exactly the used ones).
struct Weights {
  SharedMatrix W_Q;    // (d_model, H*d)    queries, unless mla compresses them
  SharedMatrix W_K;    // (d_model, G*d)    not mla
  SharedMatrix W_V;    // (d_model, G*d)    not mla
  SharedMatrix W_O;    // (H*d, d_model)    with output_projection
  SharedMatrix W_DKV;  // (d_model, d_c)    mla: down to the cached latent
  SharedMatrix W_UK;   // (d_c, H*d)        mla: latent up to keys
  SharedMatrix W_UV;   // (d_c, H*d)        mla: latent up to values
  SharedMatrix W_DQ;   // (d_model, d_c')   mla with query_latent_dim > 0
  SharedMatrix W_UQ;   // (d_c', H*d)       mla with query_latent_dim > 0
  SharedMatrix W_P;    // (max_positions, d_model)  learned positions
  SharedMatrix W_QR;   // (d_q, H*d_R)      mla with rope: the decoupled queries (d_q = d_c' or d_model)
  SharedMatrix W_KR;   // (d_model, d_R)    mla with rope: the one decoupled key per token
  SharedMatrix W_QI;   // (d_model, H_I*d_I)  sparse: the indexer's queries
  SharedMatrix W_KI;   // (d_model, d_I)      sparse: the indexer's key per token
  SharedMatrix W_wI;   // (d_model, H_I)      sparse: each indexer head's weight per query
  SharedMatrix b_Q;    // (1, H*d)          qkv_bias: added to the queries
  SharedMatrix b_K;    // (1, G*d)          qkv_bias: added to the keys
  SharedMatrix b_V;    // (1, G*d)          qkv_bias: added to the values
  SharedMatrix b_O;    // (1, d_model)      output_bias: added after W_O
};

enum class WeightId {
  W_Q,
  W_K,
  W_V,
  W_O,
  W_DKV,
  W_UK,
  W_UV,
  W_DQ,
  W_UQ,
  W_P,
  W_QR,
  W_KR,
  W_QI,
  W_KI,
  W_wI,
  b_Q,
  b_K,
  b_V,
  b_O
};
inline constexpr std::array kAllWeights{WeightId::W_Q,  WeightId::W_K,  WeightId::W_V,  WeightId::W_O,  WeightId::W_DKV,
                                        WeightId::W_UK, WeightId::W_UV, WeightId::W_DQ, WeightId::W_UQ, WeightId::W_P,
                                        WeightId::W_QR, WeightId::W_KR, WeightId::W_QI, WeightId::W_KI, WeightId::W_wI,
                                        WeightId::b_Q,  WeightId::b_K,  WeightId::b_V,  WeightId::b_O};

// A bias: one row, written in files as a flat array, drawn as zeros when a file does not give it.
inline bool is_bias(WeightId id) {
  return id == WeightId::b_Q || id == WeightId::b_K || id == WeightId::b_V || id == WeightId::b_O;
}

struct WeightShape {
  int rows = 0;
  std::string rows_meaning;  // "d_model", "heads x head_dim = 2 x 3", ...
  int cols = 0;
  std::string cols_meaning;
};

const char* weight_name(WeightId id);  // "W_Q"
SharedMatrix& weight_slot(Weights& w, WeightId id);
const SharedMatrix& weight_slot(const Weights& w, WeightId id);
bool weight_used(WeightId id, const AttentionConfig& a);
WeightShape weight_shape(WeightId id, const AttentionConfig& a, int d_model);
// "W_Q, W_K, W_V" for messages such as "not used by variant mla (it uses W_DKV, W_UK, W_UV, W_Q)".
std::string used_weight_names(const AttentionConfig& a);

}  // namespace attn
