#pragma once
// What the Compare view writes in its blocks, without a window: how each variant's cached numbers are made.
#include <array>
#include <string>

namespace attn::ui {

// The numbers per token in one layer, as each variant makes them, in the order MHA, GQA, MQA, MLA: "2 × 4 heads × 8",
// "2 × 2 KV heads × 8" (or, with no grouping, kv_heads 0: "7 heads: no grouping"), "2 × 1 KV head × 8",
// "latent_dim 6".
std::array<std::string, 4> cache_formulas(int heads, int kv_heads, int head_dim, int latent_dim);

// "7 heads: no grouping", "1 head: no grouping": GQA needs a G with 1 < G < heads dividing heads.
std::string no_grouping_text(int heads);

}  // namespace attn::ui
