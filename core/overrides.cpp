#include "core/overrides.h"

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
  a.variant = v;
  if (o.kv_heads) a.kv_heads = *o.kv_heads;
  if (o.latent_dim) a.latent_dim = *o.latent_dim;
  if (o.query_latent_dim) a.query_latent_dim = *o.query_latent_dim;
  if (v == Variant::Mha || v == Variant::Mla) a.kv_heads = a.heads;
  if (v == Variant::Mqa) a.kv_heads = 1;
  if (v != Variant::Mla) a.latent_dim = a.query_latent_dim = 0;
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
  check_config(a);  // a bad size is the real problem, not the weights that merely no longer fit it
  return drop_unfit_weights(s);
}

}  // namespace attn
