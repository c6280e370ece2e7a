#pragma once
// The sets S_i of the documents as a 0/1 matrix: mask(i, j) = 1 when query i may attend to key j.
#include "core/config.h"
#include "core/matrix.h"

namespace attn {

Matrix build_mask(const AttentionConfig& config, int n_q, int n_kv);  // (N_Q, N_KV)

}  // namespace attn
