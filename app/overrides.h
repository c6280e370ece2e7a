#pragma once
// Command-line options that override a scenario file for quick experiments (--mask causal, --heads 2, ...).
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "app/args.h"
#include "core/scenario.h"

namespace attn::cli {

struct Overrides {
  std::optional<MaskKind> mask;
  std::optional<int> window;
  std::optional<bool> scale;
  std::optional<int> heads;
  std::optional<int> head_dim;
  std::optional<Variant> variant;
  std::optional<int> kv_heads;
  std::optional<int> latent_dim;
  std::optional<int> query_latent_dim;
  std::optional<Kernel> kernel;
  std::optional<std::uint64_t> seed;

  bool any() const {
    return mask || window || scale || heads || head_dim || kernel || seed || variant || kv_heads || latent_dim ||
           query_latent_dim;
  }
  // Consumes `option` (and its value) if it is one of ours; false if it is not.
  bool parse(const std::string& option, Args& args);
  // Applies them; a weight from the file whose shape no longer fits is redrawn from the seed, with a note.
  // Throws UsageError when a variant is asked for without the size it needs (gqa: --kv-heads, mla: --latent-dim).
  void apply(Scenario& s, std::ostream& notes) const;

 private:
  void apply_variant(AttentionConfig& a) const;
};

// The help lines for these options, shared by every command that takes them.
extern const char* const kOverridesHelp;

}  // namespace attn::cli
