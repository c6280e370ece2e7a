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
  std::optional<Kernel> kernel;
  std::optional<std::uint64_t> seed;

  // Consumes `option` (and its value) if it is one of ours; false if it is not.
  bool parse(const std::string& option, Args& args);
  // Applies them; a weight from the file whose shape no longer fits is redrawn from the seed, with a note.
  void apply(Scenario& s, std::ostream& notes) const;
};

// The help lines for these options, shared by every command that takes them.
extern const char* const kOverridesHelp;

}  // namespace attn::cli
