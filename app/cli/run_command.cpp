// attention-lab run MODEL --tokens "...": a model's next-token predictions, as text or as JSON with every layer.
#include <algorithm>

#include <filesystem>
#include <functional>

#include "app/cli/args.h"
#include "app/cli/checkpoint_input.h"
#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "app/cli/scenario_input.h"
#include "app/cli/units.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/io/trace_json.h"
#include "core/memory_budget.h"
#include "core/model_bytes.h"
#include "core/model_gradient.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kRunHelp =
    "attention-lab run MODEL --tokens \"a b a b\" [--json [--layer L]] [--ablate LIST [--ablate-mode M]]\n"
    "attention-lab run FOLDER --text \"The cat sat\" [--json [--layer L]] [--ablate LIST [--ablate-mode M]]\n"
    "  Runs a model file (embeddings, positions, its layers of attention and feed-forward, the unembedding)\n"
    "  on the tokens, which must be in its vocabulary, and prints the five likeliest next tokens at each position.\n"
    "  FOLDER: a Hugging Face model folder (GPT-2, Llama, Qwen2, Mistral: config.json, safetensors weights and\n"
    "  a tokenizer) run on the text as its own tokenizer splits it, every layer in float64.\n"
    "  --json            one JSON object instead: tokens, layers [{residual_in, attention {heads [{weights}],\n"
    "                    output}, ffn_out (without an FFN: null), residual_out}], logits, probabilities,\n"
    "                    token_losses (-ln p of each next token, nats), loss (their mean; 2 or more tokens),\n"
    "                    head_scores [{layer, head, previous_token, induction, duplicate_token, first_token}]\n"
    "                    (mean weights on the previous token, the token after an earlier copy of the query's,\n"
    "                    that copy, the first token; null where the text has none); with 2 or more tokens and\n"
    "                    no --ablate, each head's d_weights and d_scores: what the loss sends back into its\n"
    "                    kernel (d_scores: d loss / d scaled scores), for the models training reads (layer_norm\n"
    "                    at 1e-5, relu, gelu or swiglu, untied).\n"
    "                    A model folder's JSON adds ids and tokens (its pieces) and has no gradients.\n"
    "  --layer L         with --json: the heads of layer L alone (the other layers without \"heads\")\n"
    "  --ablate LIST     knock heads out: LIST is layer.head items, 0-based, or a layer alone for all its heads\n"
    "                    (\"5.1,5.5,6\"); each head's output (before the output projection) is replaced\n"
    "                    as --ablate-mode says; the loss is then the ablated model's\n"
    "  --ablate-mode M   zero (the default: the output is 0) or mean (its mean over all the positions, every\n"
    "                    row: so an earlier position's output carries the later tokens')\n"
    "  --precision P     digits after the decimal point of the probabilities (0-17, default 4)\n"
    "  A run that would hold more than the memory budget is refused (exit 2) with what it needs.\n";

namespace {

// What the loss of predicting each next token sends back into the heads' kernels (nullopt for one token).
struct NextTokenGradients {
  std::vector<HeadGradients> layers;  // every layer's, or the shown layer's alone
};
std::optional<NextTokenGradients> next_token_gradients(const Model& m, const ModelTrace& t, int shown) {
  if (t.tokens.size() < 2) return std::nullopt;
  try {  // a model training does not compute the gradient of (rms_norm, gelu_tanh, tied) is run without them
    check_trainable(m);
  } catch (const InputError&) {
    return std::nullopt;
  }
  const std::vector<int> ids = token_ids(m, t.tokens), targets = next_token_targets(ids);
  return NextTokenGradients{attention_gradients(m, ids, targets, shown)};
}

// A matrix as JSON rows, written a row at a time: a layer of 8 heads at 4,096 tokens never becomes a document tree.
void write_json_rows(std::ostream& out, const Matrix& m) {
  out << '[';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(number_to_json(m(r, c)));
    out << (r > 0 ? "," : "") << row.dump();
  }
  out << ']';
}

// One layer's heads from its trace; with g, what the loss sends back into each.
void write_heads(std::ostream& out, const Trace& a, int l, const std::optional<NextTokenGradients>& g) {
  out << "\"heads\":[";
  for (std::size_t h = 0; h < a.heads.size(); ++h) {
    out << (h > 0 ? "," : "") << "{\"weights\":";
    write_json_rows(out, a.heads[h].weights());
    if (g) {
      out << ",\"d_weights\":";
      write_json_rows(out, g->layers[static_cast<std::size_t>(l)].d_weights[h]);
      out << ",\"d_scores\":";
      write_json_rows(out, g->layers[static_cast<std::size_t>(l)].d_scores[h]);
    }
    out << '}';
  }
  out << "],";
}

// One layer's heads, their trace made again from what the layer read and let go after.
void write_layer_heads(std::ostream& out, const Model& m, const ModelTrace& t, int l,
                       const std::optional<NextTokenGradients>& g) {
  write_heads(out, compute_trace(layer_scenario(m, l, t), {.keep_weights = true}), l, g);
}

using LayerHeads = std::function<void(int layer)>;

nlohmann::ordered_json optional_number(const std::optional<double>& x) {
  return x ? number_to_json(*x) : nlohmann::ordered_json(nullptr);
}

// Each next token's loss, their mean, every head's scores on the text and what was ablated.
void write_text_measures(std::ostream& out, const ModelTrace& t, const Ablation& ablation) {
  const std::vector<double> losses = next_token_losses(t.logits, t.ids);
  nlohmann::ordered_json j;
  j["token_losses"] = nlohmann::ordered_json::array();
  for (const double x : losses) j["token_losses"].push_back(number_to_json(x));
  if (!losses.empty()) j["loss"] = number_to_json(mean_loss(losses));
  j["head_scores"] = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < t.layers.size(); ++l)
    for (std::size_t h = 0; h < t.layers[l].head_scores.size(); ++h) {
      const TextHeadScores& s = t.layers[l].head_scores[h];
      j["head_scores"].push_back({{"layer", l},
                                  {"head", h},
                                  {"previous_token", optional_number(s.previous_token)},
                                  {"induction", optional_number(s.induction)},
                                  {"duplicate_token", optional_number(s.duplicate_token)},
                                  {"first_token", optional_number(s.first_token)}});
    }
  if (!ablation.empty()) {
    j["ablated"] = nlohmann::ordered_json::array();
    for (const HeadRef& h : ablation.heads) j["ablated"].push_back({h.layer, h.head});
    j["ablate_mode"] = to_string(ablation.mode);
  }
  for (const auto& [key, value] : j.items()) out << ',' << nlohmann::ordered_json(key).dump() << ':' << value.dump();
}

// The JSON of `run --json`, written as it is made: one layer's heads at a time (`shown` < 0: every layer's), by
// `heads`. A model folder's adds the token ids.
void write_run_json(std::ostream& out, const ModelTrace& t, int shown, const LayerHeads& heads, bool ids,
                    const Ablation& ablation) {
  out << '{';
  if (ids) out << "\"ids\":" << nlohmann::ordered_json(t.ids).dump() << ',';
  out << "\"tokens\":" << nlohmann::ordered_json(t.tokens).dump() << ",\"layers\":[";
  for (int l = 0; l < static_cast<int>(t.layers.size()); ++l) {
    const LayerTrace& layer = t.layers[static_cast<std::size_t>(l)];
    out << (l > 0 ? "," : "") << "{\"residual_in\":";
    write_json_rows(out, layer.residual_in);
    out << ",\"attention\":{";
    if (shown < 0 || shown == l) heads(l);
    out << "\"output\":";
    write_json_rows(out, layer.attention.output);
    out << "},\"ffn_out\":";
    if (layer.ffn_out.size() > 0) write_json_rows(out, layer.ffn_out);
    else out << "null";
    out << ",\"residual_out\":";
    write_json_rows(out, layer.residual_out);
    out << '}';
  }
  out << "],\"logits\":";
  write_json_rows(out, t.logits);
  out << ",\"probabilities\":";
  write_json_rows(out, t.probabilities);
  write_text_measures(out, t, ablation);
  out << "}\n";
}

// What run holds at its peak: the forward pass keeping no layer's heads; with --json also one layer's heads made
// again at a time, and with 2 or more tokens the gradients' pass and the heads' gradients it keeps.
std::int64_t run_bytes(const Model& m, std::int64_t n, bool json, int shown, bool ablated) {
  const ModelRunOptions none{.kept = std::vector<int>{}};
  if (!json) return predicted_model_run_bytes(m, n, none);
  bool gradients = n >= 2 && !ablated;  // training's backward pass knows no ablation: an ablated run has none
  try {
    check_trainable(m);
  } catch (const InputError&) {
    gradients = false;
  }
  std::int64_t most = 0;  // the forward pass with the layer printed now kept
  for (int l = 0; l < static_cast<int>(m.layers.size()); ++l)
    if (shown < 0 || shown == l) most = std::max(most, predicted_model_run_bytes(m, n, {.kept = std::vector<int>{l}}));
  return most + (gradients ? predicted_attention_gradient_bytes(m, n, shown) : 0);
}

// "after 'b' (position 1): a 0.9120  b 0.0410  ..." for each position; `piece` names a token id.
void print_predictions(std::ostream& out, const std::string& name, const ModelTrace& t,
                       const std::function<std::string(int)>& piece, int precision) {
  const auto vocab = static_cast<int>(t.probabilities.cols());
  const int shown = std::min(5, vocab);
  out << name << ": the " << shown << " likeliest next tokens at each position\n";
  for (int i = 0; i < static_cast<int>(t.tokens.size()); ++i) {
    const std::vector<int> order = top_tokens(t.probabilities, i, shown);
    out << "after '" << t.tokens[static_cast<std::size_t>(i)] << "' (position " << i << "):";
    for (int k = 0; k < shown; ++k)
      out << "  " << piece(order[static_cast<std::size_t>(k)]) << ' '
          << format_number(t.probabilities(i, order[static_cast<std::size_t>(k)]), precision);
    out << '\n';
  }
}

// What was knocked out, before the predictions; the loss of the next tokens after them.
void print_ablation(std::ostream& out, const Ablation& a) {
  if (a.empty()) return;
  out << "ablated (" << to_string(a.mode) << "): " << plural(std::int64_t(a.heads.size()), "head") << ", "
      << ablation_list(a) << '\n';
}
void print_loss(std::ostream& out, const ModelTrace& t) {
  const std::vector<double> losses = next_token_losses(t.logits, t.ids);
  if (losses.empty()) return;
  out << "loss: " << short_number(mean_loss(losses)) << " nats per predicted token, over "
      << plural(std::int64_t(losses.size()), "next token") << '\n';
}

// --ablate and --ablate-mode as typed; read against the model once it is open.
struct AblateOptions {
  std::optional<std::string> list;
  std::optional<AblationMode> mode;
  bool take(const std::string& word, Args& args) {
    if (word == "--ablate") list = args.value(word);
    else if (word == "--ablate-mode") {
      try {
        mode = parse_ablation_mode(args.value(word), word);
      } catch (const InputError& e) {
        throw UsageError(e.what());
      }
    } else return false;
    return true;
  }
  Ablation read(const Model& m) const {
    if (!list) return {};
    Ablation a = parse_ablation(*list, m, "--ablate");
    a.mode = mode.value_or(AblationMode::Zero);
    return a;
  }
};

// The model, its tokens and the layer asked for checked, and its memory held to the budget, before anything runs.
void check_run(const Model& m, const std::vector<std::string>& tokens, const ScenarioCommandOptions& o, bool ablated,
               std::int64_t budget) {
  const auto n = static_cast<std::int64_t>(tokens.size());
  option_token_ids(m, tokens, "--tokens");
  if (o.layer) check_range(*o.layer, 0, static_cast<int>(m.layers.size()) - 1, "--layer");
  const std::int64_t needs = run_bytes(m, n, o.json, o.layer.value_or(-1), ablated);
  check_memory_budget(needs, budget, model_run_what(m, n),
                      o.json && !o.layer ? "--layer L (one layer's heads) or fewer tokens" : "fewer tokens or layers");
}

// run FOLDER --text: the checkpoint's forward pass, a layer's weights converted when it runs. --json keeps every
// layer's heads (or the shown one's) to write them.
int run_checkpoint(const ScenarioCommandOptions& o, const AblateOptions& ablate, std::ostream& out,
                   std::int64_t budget) {
  reuse_freed_layers();
  const CheckpointText c = open_checkpoint_text(o.scenario, *o.text, budget);
  const CheckpointModel& m = *c.model;
  const int layers = static_cast<int>(m.model().layers.size());
  if (o.layer) check_range(*o.layer, 0, layers - 1, "--layer");
  const Ablation ablation = ablate.read(m.model());
  const auto n = static_cast<std::int64_t>(c.text.ids.size());
  check_memory_budget(checkpoint_run_bytes(m, n, o.json && !o.layer), budget, "running " + m.name() + " on the text",
                      o.json && !o.layer ? "--layer L (one layer's heads) or a shorter text" : "a shorter text");
  ModelRunOptions keep{.kept = std::vector<int>{}, .head_scores = o.json, .ablation = ablation};
  if (o.json) keep.kept = o.layer ? std::vector<int>{*o.layer} : std::optional<std::vector<int>>{};
  const ModelTrace t = run_model(m.model(), c.text.pieces, c.text.ids, m, keep);
  if (!o.json) {
    print_ablation(out, ablation);
    print_predictions(
        out, m.name(), t, [&m](int id) { return m.piece(id); }, o.precision);
    print_loss(out, t);
    return kExitOk;
  }
  const auto heads = [&](int l) { write_heads(out, t.layers[static_cast<std::size_t>(l)].attention, l, std::nullopt); };
  write_run_json(out, t, o.layer.value_or(-1), heads, true, ablation);
  return kExitOk;
}

// run MODEL.json --tokens: the model file's forward pass and, with --json and no ablation, its gradients.
void run_model_file(const ScenarioCommandOptions& o, const AblateOptions& ablate, std::ostream& out,
                    std::int64_t budget) {
  const std::vector<std::string> tokens = split_words(*o.tokens);
  Model file = load_model_file(o.scenario, budget);
  const Ablation ablation = ablate.read(file);
  check_run(file, tokens, o, !ablation.empty(), budget);
  const Model m = resolve_model(std::move(file));
  // No layer's heads kept: --json makes each again as it is written.
  const ModelTrace t =
      run_model(m, tokens, ModelRunOptions{.kept = std::vector<int>{}, .head_scores = o.json, .ablation = ablation});
  // Training's backward pass knows no ablation: an ablated run has no gradients.
  const std::optional<NextTokenGradients> g =
      o.json && ablation.empty() ? next_token_gradients(m, t, o.layer.value_or(-1)) : std::nullopt;
  const auto heads = [&](int l) { write_layer_heads(out, m, t, l, g); };
  if (o.json) {
    write_run_json(out, t, o.layer.value_or(-1), heads, false, ablation);
    return;
  }
  print_ablation(out, ablation);
  print_predictions(
      out, m.name, t, [&m](int id) { return m.vocab[static_cast<std::size_t>(id)]; }, o.precision);
  print_loss(out, t);
}

}  // namespace

int run_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  AblateOptions ablate;
  const ScenarioCommandOptions o = parse_scenario_command(
      "run", words, [&](const std::string& word, Args& args) { return ablate.take(word, args); }, kModelOperand);
  if (o.help) {
    out << "Usage:\n" << kRunHelp;
    return kExitOk;
  }
  if (ablate.mode && !ablate.list) throw UsageError("run: --ablate-mode is for --ablate LIST (the heads knocked out)");
  if (is_model_folder(o.scenario)) {
    if (o.tokens) throw UsageError("run: a model folder reads --text \"...\" (its tokenizer splits it), not --tokens");
    if (!o.text) throw UsageError("run: missing --text \"...\" (the text the model reads)");
    if (o.layer && !o.json) throw UsageError("run: --layer is for --json (the text shows every layer's predictions)");
    if (o.overrides.any()) throw UsageError("run: the scenario overrides do not apply to a model");
    try {
      return run_checkpoint(o, ablate, out, budget);
    } catch (const InputError& e) {
      err << "attention-lab: " << shown_path(o.scenario) << ": " << e.what() << '\n';
      return kExitBadInput;
    }
  }
  if (o.text && !std::filesystem::exists(o.scenario)) {
    err << "attention-lab: " << shown_path(o.scenario) << ": no such folder (a Hugging Face model's folder)\n";
    return kExitBadInput;
  }
  if (o.text) throw UsageError("run: --text is for a model folder; a model file reads --tokens \"...\"");
  if (!o.tokens) {
    // A scenario is not a model wanting its tokens: say what it is (or why it cannot be read) first.
    try {
      if (document_file_kind(o.scenario, budget) == DocumentKind::Scenario) load_model_file(o.scenario, budget);
    } catch (const InputError& e) {
      err << "attention-lab: " << shown_path(o.scenario) << ": " << e.what() << '\n';
      return kExitBadInput;
    }
    throw UsageError("run: missing --tokens \"...\" (tokens from the model's vocabulary)");
  }
  if (o.layer && !o.json) throw UsageError("run: --layer is for --json (the text shows every layer's predictions)");
  if (o.overrides.any()) throw UsageError("run: the scenario overrides do not apply to a model");
  try {
    run_model_file(o, ablate, out, budget);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(o.scenario) << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
