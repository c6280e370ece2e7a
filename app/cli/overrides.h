#pragma once
// Command-line options that override a scenario file for quick experiments (--mask causal, --heads 2, ...).
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "app/cli/args.h"
#include "core/overrides.h"
#include "core/scenario.h"

namespace attn::cli {

// The options of the core overrides (core/overrides.h) plus --seed, parsed from the command line.
struct Overrides {
  ConfigOverrides config;
  std::optional<std::uint64_t> seed;

  bool any() const { return config.any() || seed; }
  // Consumes `option` (and its value) if it is one of ours; false if it is not.
  bool parse(const std::string& option, Args& args);
  // Applies them (throws InputError naming the option); a weight from the file whose shape no longer
  // fits is redrawn from the seed, with a note.
  void apply(Scenario& s, std::ostream& notes) const;
};

// The help lines for these options, shared by every command that takes them.
extern const char* const kOverridesHelp;

}  // namespace attn::cli
