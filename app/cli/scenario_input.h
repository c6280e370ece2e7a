#pragma once
// What the commands that read a scenario file share: their options (SCENARIO, --json, --precision,
// --help and the overrides) and loading the file with its errors reported the same way.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "app/cli/overrides.h"
#include "core/io/scenario_json.h"
#include "core/text_format.h"

namespace attn::cli {

struct ScenarioCommandOptions {
  std::string scenario;
  bool json = false;
  bool help = false;
  int precision = 4;
  Overrides overrides;
  // A model file instead of a scenario: the attention of this layer, reading these tokens.
  std::optional<int> layer;
  std::optional<std::string> tokens;
  // A model folder instead: its tokenizer reads this text.
  std::optional<std::string> text;
};

// The scenario SCENARIO names: the file itself, or for a model file, layer --layer of it reading --tokens (the
// residual stream entering that layer, normalised as the model does). The file's size and what reading it holds
// are checked against its kind's limit and `budget` before it is read. Throws InputError.
Scenario load_command_scenario(const ScenarioCommandOptions& o, std::int64_t budget);

// An option of one command alone (online's --row): true when it took the word (and its value from args).
using CommandOption = std::function<bool(const std::string& word, Args& args)>;

// What the file operand is called in messages ("trace: missing SCENARIO (a scenario .json file)").
struct Operand {
  std::string_view name = "SCENARIO", what = "a scenario .json file";
};
inline constexpr Operand kModelOperand{"MODEL", "a model .json file or a Hugging Face model folder"};

// `command` names the command in messages ("trace: missing SCENARIO ...").
ScenarioCommandOptions parse_scenario_command(const std::string& command, std::span<const std::string> words,
                                              const CommandOption& own = nullptr, Operand operand = {});

// Loads o.scenario, applies the overrides and returns compute(scenario). Bad input is reported on err,
// naming the file (and "with the given options" when options changed it), and gives nullopt.
template <typename F>
auto compute_from_file(const ScenarioCommandOptions& o, std::int64_t budget, std::ostream& err, F compute)
    -> std::optional<decltype(compute(std::declval<const Scenario&>()))> {
  Scenario s;
  try {
    s = load_command_scenario(o, budget);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(o.scenario) << ": " << e.what() << '\n';
    return std::nullopt;
  }
  try {
    o.overrides.apply(s, err);
    return compute(s);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(o.scenario) << (o.overrides.any() ? " with the given options: " : ": ")
        << e.what() << '\n';
    return std::nullopt;
  }
}

}  // namespace attn::cli
