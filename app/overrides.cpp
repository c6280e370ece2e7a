#include "app/overrides.h"

#include "core/init.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kOverridesHelp =
    "  --mask M          none | causal | sliding_window | custom (custom needs attention.custom_mask)\n"
    "  --window N        the sliding window: query i sees keys i-N+1 .. i (alone, implies --mask sliding_window)\n"
    "  --scale, --no-scale   divide the scores by sqrt(head_dim), or not\n"
    "  --heads N         number of heads H\n"
    "  --head-dim D      dimension d of each head\n"
    "                    (a weight from the file that no longer fits is drawn from the seed, with a note)\n"
    "  --variant V       mha | gqa | mqa | mla\n"
    "  --kv-heads G      gqa: number of key/value heads, a divisor of heads (alone, implies --variant gqa)\n"
    "  --latent-dim C    mla: width d_c of the cached latent (alone, implies --variant mla)\n"
    "  --query-latent-dim C'  mla: compress the queries through a latent of width C' too (0 = no)\n"
    "  --kernel K        softmax | linear\n"
    "  --seed S          seed for every weight the file does not give\n";

bool Overrides::parse(const std::string& option, Args& args) {
  if (option == "--mask") {
    const std::string v = args.value(option);
    mask = parse_mask(v);
    if (!mask) throw UsageError("--mask: expected one of " + std::string(mask_names()) + " but found '" + v + "'");
  } else if (option == "--kernel") {
    const std::string v = args.value(option);
    kernel = parse_kernel(v);
    if (!kernel) throw UsageError("--kernel: expected one of " + std::string(kernel_names()) + " but found '" + v + "'");
  } else if (option == "--window") {
    window = static_cast<int>(args.integer(option, 1, limits::kMaxTokens));
    if (!mask) mask = MaskKind::SlidingWindow;
  } else if (option == "--scale" || option == "--no-scale") {
    scale = option == "--scale";
  } else if (option == "--heads") {
    heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--head-dim") {
    head_dim = static_cast<int>(args.integer(option, 1, limits::kMaxHeadDim));
  } else if (option == "--variant") {
    const std::string v = args.value(option);
    variant = parse_variant(v);
    if (!variant) throw UsageError("--variant: expected one of " + std::string(variant_names()) + " but found '" + v + "'");
  } else if (option == "--kv-heads") {
    kv_heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--latent-dim") {
    latent_dim = static_cast<int>(args.integer(option, 1, limits::kMaxProjectedDim));
  } else if (option == "--query-latent-dim") {
    query_latent_dim = static_cast<int>(args.integer(option, 0, limits::kMaxProjectedDim));
  } else if (option == "--seed") {
    seed = args.unsigned_integer(option);
  } else {
    return false;
  }
  return true;
}

void Overrides::apply(Scenario& s, std::ostream& notes) const {
  AttentionConfig& a = s.attention;
  if (mask == MaskKind::SlidingWindow && !window && a.mask != MaskKind::SlidingWindow)
    throw UsageError("--mask sliding_window: also give --window N (query i then sees keys i-N+1 .. i)");
  if (mask) a.mask = *mask;
  if (window) a.window = *window;
  if (scale) a.scale = *scale;
  if (kernel) a.kernel = *kernel;
  if (seed) s.seed = *seed;
  if (heads) a.heads = *heads;
  if (head_dim) a.head_dim = *head_dim;
  apply_variant(a);
  check_config(a);  // a bad size is the real problem; do not report weights that merely no longer fit it
  for (const std::string& note : drop_unfit_weights(s)) notes << "note: " << note << '\n';
}

void Overrides::apply_variant(AttentionConfig& a) const {
  const Variant from_file = a.variant;
  Variant v = variant.value_or(kv_heads ? Variant::Gqa : latent_dim || query_latent_dim ? Variant::Mla : from_file);
  if (v == Variant::Gqa && !kv_heads && from_file != Variant::Gqa)
    throw UsageError("--variant gqa: also give --kv-heads G (a divisor of heads)");
  if (v == Variant::Mla && !latent_dim && from_file != Variant::Mla)
    throw UsageError("--variant mla: also give --latent-dim C (the width of the cached latent)");
  if (kv_heads && v != Variant::Gqa) throw UsageError("--kv-heads: only used by variant gqa");
  if ((latent_dim || query_latent_dim) && v != Variant::Mla)
    throw UsageError(std::string(latent_dim ? "--latent-dim" : "--query-latent-dim") + ": only used by variant mla");
  a.variant = v;
  if (kv_heads) a.kv_heads = *kv_heads;
  if (latent_dim) a.latent_dim = *latent_dim;
  if (query_latent_dim) a.query_latent_dim = *query_latent_dim;
  if (v == Variant::Mha || v == Variant::Mla) a.kv_heads = a.heads;
  if (v == Variant::Mqa) a.kv_heads = 1;
  if (v != Variant::Mla) a.latent_dim = a.query_latent_dim = 0;
}

}  // namespace attn::cli
