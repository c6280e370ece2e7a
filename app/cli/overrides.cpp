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
    "  --positions P     none | sinusoidal | learned | rope: where a token's position enters (sinusoidal and\n"
    "                    learned add rows to X; rope turns each head's q and k; mla: a decoupled RoPE key)\n"
    "  --rope-base B     the base of the frequencies of sinusoidal and rope (default 10000)\n"
    "  --rope-dim R      mla with rope: width d_R of the decoupled key and queries (alone, implies --positions rope)\n"
    "  --position-offset C  shift every position by C (row p sits at C + p): RoPE's scores stay the same,\n"
    "                    sinusoidal and learned ones change\n"
    "  --top-k K         DeepSeek Sparse Attention: each query attends to the K keys its indexer scores highest\n"
    "                    (0 = dense again)\n"
    "  --indexer-heads H  the indexer's heads H_I (default 1)\n"
    "  --indexer-dim D   the indexer's width d_I (default head_dim)\n"
    "  --seed S          seed for every weight the file does not give\n";

namespace {

// The value after `option` as one of a fixed set of names (parse_mask with mask_names(), ...).
template <typename E>
E choice(const std::string& option, Args& args, std::optional<E> (*parse)(std::string_view), std::string_view names) {
  const std::string v = args.value(option);
  if (const std::optional<E> e = parse(v)) return *e;
  throw UsageError(option + ": expected one of " + std::string(names) + " but found '" + v + "'");
}

}  // namespace

bool Overrides::parse(const std::string& option, Args& args) {
  ConfigOverrides& c = config;
  if (option == "--mask") {
    c.mask = choice(option, args, parse_mask, mask_names());
  } else if (option == "--kernel") {
    c.kernel = choice(option, args, parse_kernel, kernel_names());
  } else if (option == "--window") {
    c.window = static_cast<int>(args.integer(option, 1, limits::kMaxTokens));
  } else if (option == "--scale" || option == "--no-scale") {
    if (c.scale) throw UsageError(option + ": --scale or --no-scale was given already (give one, once)");
    c.scale = option == "--scale";
  } else if (option == "--heads") {
    c.heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--head-dim") {
    c.head_dim = static_cast<int>(args.integer(option, 1, limits::kMaxHeadDim));
  } else if (option == "--variant") {
    c.variant = choice(option, args, parse_variant, variant_names());
  } else if (option == "--kv-heads") {
    c.kv_heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--latent-dim") {
    c.latent_dim = static_cast<int>(args.integer(option, 1, limits::kMaxProjectedDim));
  } else if (option == "--query-latent-dim") {
    c.query_latent_dim = static_cast<int>(args.integer(option, 0, limits::kMaxProjectedDim));
  } else if (option == "--positions") {
    c.positions = choice(option, args, parse_positions, positions_names());
  } else if (option == "--rope-base") {
    c.rope_base = args.number(option, 1.0, limits::kMaxAbsValue);
  } else if (option == "--rope-dim") {
    c.rope_dim = static_cast<int>(args.integer(option, 2, limits::kMaxHeadDim));
  } else if (option == "--position-offset") {
    c.position_offset = static_cast<int>(args.integer(option, 0, limits::kMaxPositionOffset));
  } else if (option == "--top-k") {
    c.top_k = static_cast<int>(args.integer(option, 0, limits::kMaxTokens));
  } else if (option == "--indexer-heads") {
    c.indexer_heads = static_cast<int>(args.integer(option, 1, limits::kMaxHeads));
  } else if (option == "--indexer-dim") {
    c.indexer_dim = static_cast<int>(args.integer(option, 1, limits::kMaxHeadDim));
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
