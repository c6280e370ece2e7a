#include "ui/logic/preset_check.h"

#include "core/checked_math.h"
#include "core/kv_compare.h"
#include "core/text_format.h"
#include "ui/logic/chart_axes.h"

namespace attn::ui {

std::optional<std::string> preset_beyond_views(const ModelShape& m) {
  const std::uint64_t tokens = std::uint64_t{1} << kMaxContextExponent;
  for (const VariantForm& f : variant_forms(m)) {
    if (!f.shape) continue;
    try {
      kv_cache_size(*f.shape, tokens, kMaxViewBatch, Dtype::FP32);
    } catch (const OverflowError&) {
      return "its KV cache as " + std::string(to_string(f.variant)) + " at " + thousands(tokens) + " tokens, batch " +
             thousands(kMaxViewBatch) +
             " and fp32 passes what 64-bit numbers count, so the model views could not draw it";
    }
  }
  return std::nullopt;
}

}  // namespace attn::ui
