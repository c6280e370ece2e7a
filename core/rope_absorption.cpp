#include "core/rope_absorption.h"

#include "core/engine_entries.h"
#include "core/positions.h"

namespace attn {

NaiveRopeMla naive_rope_absorption(const Trace& t, int h) {
  note_engine_entry();
  const AttentionConfig& a = t.attention;
  NaiveRopeMla r;
  if (a.variant != Variant::Mla || a.head_dim % 2 != 0 || !t.absorbed || h < 0 || h >= a.heads) return r;
  const HeadTrace& head = t.heads[static_cast<std::size_t>(h)];
  r.explicit_scores = rotate(head.q, 0, a) * rotate(head.k, 0, a).transpose();
  r.absorbed_scores = t.query_side() * t.absorbed->W_UQK[static_cast<std::size_t>(h)] * t.latent.transpose();
  r.max_difference = (r.explicit_scores - r.absorbed_scores).cwiseAbs().maxCoeff();
  return r;
}

}  // namespace attn
