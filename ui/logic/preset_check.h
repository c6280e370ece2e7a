#pragma once
// Whether the model views can draw a preset. kv refuses a size past 64 bits for the context it is asked; the views
// draw every context up to 2^20 tokens at any batch they offer, so a preset is checked at their extremes once, when
// it is read, rather than at every frame.
#include <optional>
#include <string>

#include "core/memory.h"

namespace attn::ui {

inline constexpr int kMaxViewBatch = 1024;  // the batch field of the model views

// Why the views cannot draw `m`: its KV cache in one of its variant forms (MHA, GQA, MQA, MLA) at 2^20 tokens,
// batch kMaxViewBatch and fp32 would pass what 64 bits count; nullopt when every size fits.
std::optional<std::string> preset_beyond_views(const ModelShape& m);

}  // namespace attn::ui
