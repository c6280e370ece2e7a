#include "ui/logic/compare_text.h"

#include "core/text_format.h"

namespace attn::ui {

std::array<std::string, 4> cache_formulas(int heads, int kv_heads, int head_dim, int latent_dim) {
  const std::string times = " \u00D7 ", d = std::to_string(head_dim);
  return {"2" + times + plural(heads, "head") + times + d,
          kv_heads > 0 ? "2" + times + plural(kv_heads, "KV head") + times + d : no_grouping_text(heads),
          "2" + times + plural(1, "KV head") + times + d, "latent_dim " + std::to_string(latent_dim)};
}

std::string no_grouping_text(int heads) { return plural(heads, "head") + ": no grouping"; }

}  // namespace attn::ui
