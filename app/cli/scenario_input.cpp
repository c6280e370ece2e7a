#include "app/cli/scenario_input.h"

#include <filesystem>
#include <sstream>

#include "app/cli/checkpoint_input.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/text_format.h"

namespace attn::cli {
namespace {

// --layer's range as typed: a model folder may have more layers than a model file's 64; each command checks it against
// the model it reads.
constexpr std::int64_t kMaxLayerIndex = std::int64_t(1) << 20;

}  // namespace

ScenarioCommandOptions parse_scenario_command(const std::string& command, std::span<const std::string> words,
                                              const CommandOption& own, Operand operand) {
  ScenarioCommandOptions o;
  bool precision_given = false;
  Args args(words);
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--help" || word == "-h") o.help = true;
    else if (word == "--json") o.json = true;
    else if (word == "--precision") {
      o.precision = static_cast<int>(args.integer(word, 0, 17));
      precision_given = true;
    } else if (word == "--layer") o.layer = static_cast<int>(args.integer(word, 0, kMaxLayerIndex));
    else if (word == "--tokens") o.tokens = args.value(word);
    else if (word == "--text") o.text = args.value(word);
    else if (o.overrides.parse(word, args)) continue;
    else if (own && own(word, args)) continue;
    else if (word.starts_with("--"))
      throw UsageError(command + ": unknown option '" + word + "' (see attention-lab --help)");
    else if (o.scenario.empty()) o.scenario = word;
    else
      throw UsageError(command + ": only one " + std::string(operand.name) + " may be given, found '" + o.scenario +
                       "' and '" + word + "'");
  }
  // JSON writes every number in full: a --precision there would be silently ignored.
  if (o.json && precision_given)
    throw UsageError(command +
                     ": --json and --precision cannot be combined: --precision sets the digits of the text "
                     "output, and JSON writes every number in full");
  if (o.scenario.empty() && !o.help)
    throw UsageError(command + ": missing " + std::string(operand.name) + " (" + std::string(operand.what) + ")");
  return o;
}

Scenario load_command_scenario(const ScenarioCommandOptions& o, std::int64_t budget) {
  if (is_model_folder(o.scenario)) {
    if (o.tokens) throw InputError("--tokens", "for a model file; a model folder reads --text \"...\"");
    if (!o.layer || !o.text)
      throw InputError(o.layer ? "--text" : "--layer",
                       "a model folder needs --layer L and --text \"...\" to be traced as a scenario");
    return checkpoint_layer_scenario(open_checkpoint_text(o.scenario, *o.text, budget), *o.layer, budget);
  }
  if (o.text && !std::filesystem::exists(o.scenario))
    throw InputError("", "no such folder (a Hugging Face model's folder)");
  if (o.text) throw InputError("--text", "for a model folder; a model file reads --tokens \"...\"");
  const DocumentKind kind = document_file_kind(o.scenario, budget);
  if (kind == DocumentKind::RealModel)
    throw InputError("",
                     "a Real model view the window saved: open it with attention-lab FILE, or give the model "
                     "folder it names");
  if (kind == DocumentKind::Scenario) {
    if (o.layer || o.tokens)
      throw InputError(o.layer ? "--layer" : "--tokens", "only for a model file (one with \"layers\")");
    return load_scenario_file(o.scenario, budget);
  }
  if (!o.layer || !o.tokens)
    throw InputError(o.layer ? "--tokens" : "--layer",
                     "a model file needs --layer L and --tokens \"...\" to be traced as a scenario");
  const Model m = resolve_model(load_model_file(o.scenario, budget));
  if (*o.layer >= static_cast<int>(m.layers.size()))
    throw InputError("--layer", "the model has layers 0.." + std::to_string(m.layers.size() - 1) + " but found " +
                                    std::to_string(*o.layer));
  const std::vector<std::string> tokens = split_words(*o.tokens);
  option_token_ids(m, tokens, "--tokens");
  // The layers after it are not needed, nor any layer's heads: the scenario reads what layer L's attention read.
  return layer_scenario(m, *o.layer,
                        run_model(m, tokens, ModelRunOptions{.layers = *o.layer + 1, .kept = std::vector<int>{}}));
}

}  // namespace attn::cli
