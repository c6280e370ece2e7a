#pragma once
// Why MLA needs a decoupled RoPE key (DeepSeek-V2, section 2.1.3): turn the keys expanded from the latent instead,
// and the absorbed form, which never forms keys, cannot follow. The turn R_i^T R_j sits between W_UQ and W_UK^T and
// depends on the distance, so no single W_UQK exists. This computes both forms side by side.
#include "core/attention.h"

namespace attn {

struct NaiveRopeMla {
  Matrix explicit_scores;     // (N_Q, N_KV): RoPE(q^(h)) RoPE(k^(h))^T, the keys turned after expansion
  Matrix absorbed_scores;     // (N_Q, N_KV): query_side W_UQK^(h) latent^T, all that absorption can give
  double max_difference = 0;  // max |explicit - absorbed|: not 0 once the positions differ
};

// Head h of an mla trace with an even head_dim (else empty matrices): its q and k turned by their row positions with
// the trace's rope_base, against the absorbed scores of the same weights.
NaiveRopeMla naive_rope_absorption(const Trace& t, int h);

}  // namespace attn
