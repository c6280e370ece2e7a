#include "core/config.h"

#include "core/name_table.h"

namespace attn {
namespace {

constexpr NameTable<Variant, 4> kVariants{
    {{Variant::Mha, "mha"}, {Variant::Gqa, "gqa"}, {Variant::Mqa, "mqa"}, {Variant::Mla, "mla"}}};
constexpr NameTable<MaskKind, 4> kMasks{{{MaskKind::None, "none"},
                                         {MaskKind::Causal, "causal"},
                                         {MaskKind::SlidingWindow, "sliding_window"},
                                         {MaskKind::Custom, "custom"}}};
constexpr NameTable<Kernel, 2> kKernels{{{Kernel::Softmax, "softmax"}, {Kernel::Linear, "linear"}}};
constexpr NameTable<Positions, 4> kPositions{{{Positions::None, "none"},
                                              {Positions::Sinusoidal, "sinusoidal"},
                                              {Positions::Learned, "learned"},
                                              {Positions::Rope, "rope"}}};

constexpr NameTable<RopePairing, 2> kRopePairings{
    {{RopePairing::Interleaved, "interleaved"}, {RopePairing::RotateHalf, "rotate_half"}}};

}  // namespace

int kv_head_count(const AttentionConfig& a) {
  switch (a.variant) {
    case Variant::Gqa: return a.kv_heads;
    case Variant::Mqa: return 1;
    case Variant::Mha:
    case Variant::Mla: return a.heads;
  }
  return a.heads;
}

int kv_head_for(const AttentionConfig& a, int h) { return h / (a.heads / kv_head_count(a)); }

std::string_view to_string(Variant v) { return name_of(kVariants, v); }
std::string_view to_string(MaskKind m) { return name_of(kMasks, m); }
std::string_view to_string(Kernel k) { return name_of(kKernels, k); }
std::string_view to_string(Positions p) { return name_of(kPositions, p); }
std::optional<Positions> parse_positions(std::string_view s) { return parse_name(kPositions, s); }
std::string_view to_string(RopePairing p) { return name_of(kRopePairings, p); }
std::optional<RopePairing> parse_rope_pairing(std::string_view s) { return parse_name(kRopePairings, s); }
std::string_view rope_pairing_names() { return "interleaved | rotate_half"; }
std::string_view positions_names() { return "none | sinusoidal | learned | rope"; }
std::optional<Variant> parse_variant(std::string_view s) { return parse_name(kVariants, s); }
std::optional<MaskKind> parse_mask(std::string_view s) { return parse_name(kMasks, s); }
std::optional<Kernel> parse_kernel(std::string_view s) { return parse_name(kKernels, s); }
std::string_view variant_names() { return "mha | gqa | mqa | mla"; }
std::string_view mask_names() { return "none | causal | sliding_window | custom"; }
std::string_view kernel_names() { return "softmax | linear"; }

}  // namespace attn
