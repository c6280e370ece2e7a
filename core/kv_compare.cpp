#include "core/kv_compare.h"

namespace attn {
namespace {

ModelShape recast(ModelShape m, Variant v, int kv_heads, int latent_dim, int rope_dim) {
  m.variant = v;
  m.kv_heads = kv_heads;
  m.latent_dim = latent_dim;
  m.rope_dim = rope_dim;
  return m;
}

}  // namespace

int chosen_gqa_kv_heads(int heads) {
  if (heads > 8 && heads % 8 == 0) return 8;
  for (int p = 2; p < heads; ++p)
    if (heads % p == 0) return heads / p;  // the smallest factor gives the largest proper divisor
  return 0;
}

std::array<VariantForm, 4> variant_forms(const ModelShape& m) {
  const int H = m.heads, d = m.head_dim;
  // An MLA model's queries and keys carry its decoupled RoPE part (DeepSeek: 128 + 64 = 192): its other forms keep
  // it, so that they score with the keys the model does. A shape without head_dim has no keys to extend.
  const int r = m.variant == Variant::Mla && d > 0 ? m.rope_dim : 0;
  std::array<VariantForm, 4> forms;
  forms[0] = {Variant::Mha, recast(m, Variant::Mha, H, 0, r), m.variant == Variant::Mha};

  const bool own_gqa = m.variant == Variant::Gqa && m.kv_heads > 1 && m.kv_heads < H;
  const int G = own_gqa ? m.kv_heads : chosen_gqa_kv_heads(H);
  forms[1] = {Variant::Gqa, G > 0 ? std::optional(recast(m, Variant::Gqa, G, 0, r)) : std::nullopt, own_gqa};

  forms[2] = {Variant::Mqa, recast(m, Variant::Mqa, 1, 0, r), m.variant == Variant::Mqa};

  const bool own_mla = m.variant == Variant::Mla;
  forms[3] = {Variant::Mla, own_mla ? m : recast(m, Variant::Mla, H, chosen_latent_dim(d), chosen_rope_dim(d)),
              own_mla};
  return forms;
}

}  // namespace attn
