#include "app/cli/scenario_input.h"

namespace attn::cli {

ScenarioCommandOptions parse_scenario_command(const std::string& command, std::span<const std::string> words,
                                              const CommandOption& own) {
  ScenarioCommandOptions o;
  Args args(words);
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--help" || word == "-h") o.help = true;
    else if (word == "--json") o.json = true;
    else if (word == "--precision") o.precision = static_cast<int>(args.integer(word, 0, 17));
    else if (o.overrides.parse(word, args)) continue;
    else if (own && own(word, args)) continue;
    else if (word.starts_with("--"))
      throw UsageError(command + ": unknown option '" + word + "' (see attention-lab --help)");
    else if (o.scenario.empty()) o.scenario = word;
    else throw UsageError(command + ": only one SCENARIO may be given, found '" + o.scenario + "' and '" + word + "'");
  }
  if (o.scenario.empty() && !o.help) throw UsageError(command + ": missing SCENARIO (a scenario .json file)");
  return o;
}

}  // namespace attn::cli
