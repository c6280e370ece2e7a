#include "core/mask.h"

namespace attn {

Matrix build_mask(const AttentionConfig& config, int n_q, int n_kv) {
  auto allowed = [&](int i, int j) -> bool {
    switch (config.mask) {
      case MaskKind::None: return true;
      case MaskKind::Causal: return j <= i;
      case MaskKind::SlidingWindow: return j <= i && j > i - config.window;
      case MaskKind::Custom: return config.custom_mask(i, j) != 0.0;
    }
    return true;
  };
  return Matrix::NullaryExpr(n_q, n_kv, [&](Eigen::Index i, Eigen::Index j) {
    return allowed(static_cast<int>(i), static_cast<int>(j)) ? 1.0 : 0.0;
  });
}

}  // namespace attn
