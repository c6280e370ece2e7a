#include "core/overrides.h"

#include <algorithm>

#include "core/init.h"
#include "core/validate.h"

namespace attn {
namespace {

void apply_mask(AttentionConfig& a, const ConfigOverrides& o, const OverrideField& field) {
  const MaskKind mask = o.mask.value_or(o.window ? MaskKind::SlidingWindow : o.custom_mask ? MaskKind::Custom : a.mask);
  if (o.window && mask != MaskKind::SlidingWindow)
    throw InputError(field("window"), "given, but the mask is not \"sliding_window\"");
  if (o.custom_mask && mask != MaskKind::Custom)
    throw InputError(field("custom_mask"), "given, but the mask is not \"custom\"");
  if (mask == MaskKind::SlidingWindow && a.mask != MaskKind::SlidingWindow && !o.window)
    throw InputError(field("window"), "missing (required for a sliding window: query i then sees keys i-N+1 .. i)");
  a.mask = mask;
  if (o.window) a.window = *o.window;
  if (o.custom_mask) a.custom_mask = *o.custom_mask;
}

void apply_variant(AttentionConfig& a, const ConfigOverrides& o, const OverrideField& field) {
  const Variant v = o.variant.value_or(o.kv_heads                           ? Variant::Gqa
                                       : o.latent_dim || o.query_latent_dim ? Variant::Mla
                                                                            : a.variant);
  const std::string name(to_string(v));
  if (v == Variant::Gqa && !o.kv_heads && a.variant != Variant::Gqa)
    throw InputError(field("kv_heads"), "missing (required for variant gqa: a divisor of heads)");
  if (v == Variant::Mla && !o.latent_dim && a.variant != Variant::Mla)
    throw InputError(field("latent_dim"), "missing (required for variant mla: the width of the cached latent)");
  if (o.kv_heads && v != Variant::Gqa)
    throw InputError(field("kv_heads"), "only used by variant gqa (this is " + name + ")");
  if (o.latent_dim && v != Variant::Mla)
    throw InputError(field("latent_dim"), "only used by variant mla (this is " + name + ")");
  if (o.query_latent_dim && v != Variant::Mla)
    throw InputError(field("query_latent_dim"), "only used by variant mla (this is " + name + ")");
  const bool to_mla = v == Variant::Mla && a.variant != Variant::Mla;
  a.variant = v;
  if (o.kv_heads) a.kv_heads = *o.kv_heads;
  if (o.latent_dim) a.latent_dim = *o.latent_dim;
  if (o.query_latent_dim) a.query_latent_dim = *o.query_latent_dim;
  if (v == Variant::Mha || v == Variant::Mla) a.kv_heads = a.heads;
  if (v == Variant::Mqa) a.kv_heads = 1;
  if (v != Variant::Mla) a.latent_dim = a.query_latent_dim = 0;
  if (to_mla) a.qkv_bias = false;  // its keys and values come from a new latent, drawn without biases
}

void apply_positions(Scenario& s, const ConfigOverrides& o, const OverrideField& field) {
  AttentionConfig& a = s.attention;
  const Positions p = o.positions.value_or(o.rope_dim ? Positions::Rope : a.positions);
  const std::string kind = "positions are \"" + std::string(to_string(p)) + "\"";
  if (o.rope_base && (p == Positions::None || p == Positions::Learned))
    throw InputError(field("rope_base"),
                     "given, but the " + kind + " (it sets the frequencies of sinusoidal and rope)");
  a.positions = p;
  if (p != Positions::Rope) {  // the pairing and the scaling are rope's
    a.rope_pairing = RopePairing::Interleaved;
    a.rope_scaling.reset();
  }
  if (o.rope_base) a.rope_base = *o.rope_base;
  if (o.rope_dim && !mla_with_rope(a))
    throw InputError(field("rope_dim"), "only used by variant mla with rope (this is variant " +
                                            std::string(to_string(a.variant)) + " and the " + kind + ")");
  if (o.rope_dim) a.rope_dim = *o.rope_dim;
  // Made mla with rope here, it takes DeepSeek-V2's decoupled key, whose width is for the options to say (as the
  // window's editor gives one); a file's mla without rope_dim turns its expanded keys.
  if (mla_with_rope(a) && a.rope_dim == 0 && (o.positions || o.variant))
    throw InputError(field("rope_dim"), "missing (required for mla with rope: the width d_R of the decoupled key)");
  if (!mla_with_rope(a)) a.rope_dim = 0;
  if (o.position_offset && p == Positions::None)
    throw InputError(field("position_offset"), "given, but the " + kind + " (it shifts every position)");
  if (o.position_offset) a.position_offset = *o.position_offset;
  if (p == Positions::None) a.position_offset = 0;
  if (p != Positions::Learned) a.max_positions = 0;
  else if (a.max_positions < positions_needed(s)) a.max_positions = positions_needed(s);
  check_learned_shift(s, field("position_offset"));
}

void apply_sparse(AttentionConfig& a, const ConfigOverrides& o, const OverrideField& field) {
  if (o.top_k && *o.top_k == 0) {
    if (o.indexer_heads || o.indexer_dim)
      throw InputError(field(o.indexer_heads ? "indexer_heads" : "indexer_dim"),
                       "given, but " + field("top_k") + " 0 turns sparse attention off");
    a.sparse.reset();
    return;
  }
  if (!o.top_k && !a.sparse && (o.indexer_heads || o.indexer_dim))
    throw InputError(field(o.indexer_heads ? "indexer_heads" : "indexer_dim"),
                     "given, but attention is not sparse (" + field("top_k") + " K turns it on)");
  if (!o.top_k && !a.sparse) return;
  if (!a.sparse) a.sparse = SparseConfig{1, 1, a.head_dim};
  if (o.top_k) a.sparse->top_k = *o.top_k;
  if (o.indexer_heads) a.sparse->indexer_heads = *o.indexer_heads;
  if (o.indexer_dim) a.sparse->indexer_dim = *o.indexer_dim;
}

}  // namespace

std::string option_field(std::string_view key) {
  std::string option = "--" + std::string(key);
  for (char& c : option)
    if (c == '_') c = '-';
  return option;
}

std::vector<std::string> apply_overrides(Scenario& s, const ConfigOverrides& o, const OverrideField& field) {
  AttentionConfig& a = s.attention;
  apply_mask(a, o, field);
  if (o.scale) a.scale = *o.scale;
  if (o.kernel) a.kernel = *o.kernel;
  if (o.heads) a.heads = *o.heads;
  if (o.head_dim) a.head_dim = *o.head_dim;
  apply_variant(a, o, field);
  apply_positions(s, o, field);
  apply_sparse(a, o, field);
  check_config(a);  // a bad size is the real problem, not the weights that merely no longer fit it
  return drop_unfit_weights(s);
}

}  // namespace attn
