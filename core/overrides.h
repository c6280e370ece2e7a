#pragma once
// Changes to a scenario's attention configuration for a quick experiment: what `trace --mask causal
// --heads 2 ...` gives on the command line and what a lesson page's "overrides" give. One set of rules:
// --window alone means a sliding window, --kv-heads alone means GQA, --latent-dim alone means MLA, --rope-dim
// alone means RoPE, --top-k turns sparse attention on (0: off); a variant, a mask or positions without the size
// they need is an error; weights that no longer fit are redrawn.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"

namespace attn {

struct ConfigOverrides {
  std::optional<MaskKind> mask;
  std::optional<int> window;
  std::optional<Matrix> custom_mask;
  std::optional<bool> scale;
  std::optional<Kernel> kernel;
  std::optional<int> heads;
  std::optional<int> head_dim;
  std::optional<Variant> variant;
  std::optional<int> kv_heads;
  std::optional<int> latent_dim;
  std::optional<int> query_latent_dim;
  std::optional<Positions> positions;
  std::optional<double> rope_base;
  std::optional<int> rope_dim;         // alone: positions rope
  std::optional<int> position_offset;  // needs positions (the file's or positions')
  std::optional<int> top_k;            // 0 turns sparse attention off, >= 1 on
  std::optional<int> indexer_heads;    // need sparse attention (the file's or top_k's)
  std::optional<int> indexer_dim;

  bool any() const {
    return mask || window || custom_mask || scale || kernel || heads || head_dim || variant || kv_heads || latent_dim ||
           query_latent_dim || positions || rope_base || rope_dim || position_offset || top_k || indexer_heads ||
           indexer_dim;
  }
};

// How a problem names the override it is about: "--kv-heads" on the command line (the default),
// "pages[2].overrides.kv_heads" in a lesson.
using OverrideField = std::function<std::string(std::string_view key)>;
std::string option_field(std::string_view key);  // "kv_heads" -> "--kv-heads"

// Applies `o`; throws InputError naming the override (or, for a size out of range, the attention field).
// Returns one sentence per weight redrawn from the seed because its shape no longer fits.
std::vector<std::string> apply_overrides(Scenario& s, const ConfigOverrides& o,
                                         const OverrideField& field = option_field);

}  // namespace attn
