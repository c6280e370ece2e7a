#include "app/cli/overrides.h"

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
  ConfigOverrides& c = config;
  if (option == "--mask") {
    const std::string v = args.value(option);
    c.mask = parse_mask(v);
    if (!c.mask) throw UsageError("--mask: expected one of " + std::string(mask_names()) + " but found '" + v + "'");
  } else if (option == "--kernel") {
    const std::string v = args.value(option);
    c.kernel = parse_kernel(v);
    if (!c.kernel)
      throw UsageError("--kernel: expected one of " + std::string(kernel_names()) + " but found '" + v + "'");
  } else if (option == "--window") {
    c.window = static_cast<int>(args.integer(option, 1, limits::kMaxTokens));
  } else if (option == "--scale" || option == "--no-scale") {
    c.scale = option == "--scale";
  } else if (option == "--heads") {
    c.heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--head-dim") {
    c.head_dim = static_cast<int>(args.integer(option, 1, limits::kMaxHeadDim));
  } else if (option == "--variant") {
    const std::string v = args.value(option);
    c.variant = parse_variant(v);
    if (!c.variant)
      throw UsageError("--variant: expected one of " + std::string(variant_names()) + " but found '" + v + "'");
  } else if (option == "--kv-heads") {
    c.kv_heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--latent-dim") {
    c.latent_dim = static_cast<int>(args.integer(option, 1, limits::kMaxProjectedDim));
  } else if (option == "--query-latent-dim") {
    c.query_latent_dim = static_cast<int>(args.integer(option, 0, limits::kMaxProjectedDim));
  } else if (option == "--seed") {
    seed = args.unsigned_integer(option);
  } else {
    return false;
  }
  return true;
}

void Overrides::apply(Scenario& s, std::ostream& notes) const {
  if (seed) s.seed = *seed;
  for (const std::string& note : apply_overrides(s, config)) notes << "note: " << note << '\n';
}

}  // namespace attn::cli
