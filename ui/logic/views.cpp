#include "ui/logic/views.h"

#include "core/text_format.h"

namespace attn::ui {
namespace {

constexpr std::string_view kViewNames[] = {"pipeline", "decode", "compare", "memory", "cost", "model", "train", "real"};
constexpr std::string_view kViewTitles[] = {"Pipeline", "Decode", "Compare", "Memory",
                                            "Cost",     "Model",  "Train",   "Real model"};
static_assert(std::size(kViewNames) == kViewCount && std::size(kViewTitles) == kViewCount);

}  // namespace

std::string_view view_name(View v) { return kViewNames[static_cast<int>(v)]; }
std::string_view view_title(View v) { return kViewTitles[static_cast<int>(v)]; }

std::optional<View> parse_view(std::string_view name) {
  for (int i = 0; i < kViewCount; ++i)
    if (kViewNames[i] == name) return static_cast<View>(i);
  return std::nullopt;
}

std::string view_names(std::string_view separator) { return join(kViewNames, separator); }

}  // namespace attn::ui
