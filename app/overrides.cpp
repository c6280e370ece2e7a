#include "app/overrides.h"

namespace attn::cli {

const char* const kOverridesHelp =
    "  --mask M          none | causal | sliding_window | custom (custom needs attention.custom_mask)\n"
    "  --window N        the sliding window: query i sees keys i-N+1 .. i\n"
    "  --scale, --no-scale   divide the scores by sqrt(head_dim), or not\n"
    "  --heads N         number of heads H\n"
    "  --head-dim D      dimension d of each head\n"
    "  --kernel K        softmax | linear\n"
    "  --seed S          seed for every weight or embedding the file does not give\n";

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
  } else if (option == "--seed") {
    seed = args.unsigned_integer(option);
  } else {
    return false;
  }
  return true;
}

void Overrides::apply(Scenario& s, std::ostream& notes) const {
  AttentionConfig& a = s.attention;
  if (mask) a.mask = *mask;
  if (window) a.window = *window;
  if (scale) a.scale = *scale;
  if (kernel) a.kernel = *kernel;
  if (seed) s.seed = *seed;
  if (heads) a.heads = *heads;
  if (head_dim) a.head_dim = *head_dim;

  const int hd = a.heads * a.head_dim;
  const int d_model = s.d_model();
  const struct {
    std::optional<Matrix>& m;
    const char* name;
    int rows, cols;
  } weights[] = {{s.weights.W_Q, "W_Q", d_model, hd},
                 {s.weights.W_K, "W_K", d_model, hd},
                 {s.weights.W_V, "W_V", d_model, hd},
                 {s.weights.W_O, "W_O", hd, d_model}};
  for (auto& w : weights) {
    if (!w.m || (w.m->rows() == w.rows && w.m->cols() == w.cols)) continue;
    notes << "note: weights." << w.name << " from the file is " << w.m->rows() << " x " << w.m->cols()
          << " but heads x head_dim now needs " << w.rows << " x " << w.cols << "; drawn from seed " << s.seed
          << " instead\n";
    w.m.reset();
  }
}

}  // namespace attn::cli
