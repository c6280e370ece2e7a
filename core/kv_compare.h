#pragma once
// One model's attention recast as each variant (MHA, GQA, MQA, MLA), everything else kept, so the
// cache sizes can be set side by side. Where the model has no numbers of its own for a variant, the
// choice is a documented rule, flagged so the output can say so.
#include <array>
#include <optional>

#include "core/memory.h"

namespace attn {

struct VariantForm {
  Variant variant = Variant::Mha;
  std::optional<ModelShape> shape;  // empty: the variant cannot be formed (GQA with a prime head count)
  bool model_own = false;           // the model's own G (GQA) or latent widths (MLA), not a chosen one
};

// G for a GQA form when the model has none of its own: 8 when 8 divides H and 8 < H (as Llama 3,
// Mistral 7B and Qwen2.5), else the largest divisor of H below H; 0 when only 1 and H divide it.
int chosen_gqa_kv_heads(int heads);

// MLA widths when the model has none of its own, in DeepSeek's proportions (V2/V3: d_c = 512 = 4·128,
// d_rope = 64 = 128/2): d_c = 4·head_dim, d_rope = head_dim / 2.
inline int chosen_latent_dim(int head_dim) { return 4 * head_dim; }
inline int chosen_rope_dim(int head_dim) { return head_dim / 2; }

// In the order mha, gqa, mqa, mla. The MHA, GQA and MQA forms of an MLA model with decoupled RoPE keep its
// rope_dim: their keys are head_dim + rope_dim wide, as the model's queries and keys are (DeepSeek: 192).
std::array<VariantForm, 4> variant_forms(const ModelShape& m);

}  // namespace attn
