// attention-lab run MODEL --tokens "...": a model's next-token predictions, as text or as JSON with every layer.
#include <algorithm>
#include <numeric>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "app/cli/scenario_input.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/trace_json.h"
#include "core/model_gradient.h"
#include "core/text_format.h"

namespace attn::cli {

const char* const kRunHelp =
    "attention-lab run MODEL --tokens \"a b a b\" [--json] [--precision P]\n"
    "  Runs a model file (embeddings, positions, its layers of attention and feed-forward, the unembedding)\n"
    "  on the tokens, which must be in its vocabulary, and prints the five likeliest next tokens at each position.\n"
    "  --json            one JSON object instead: tokens, layers [{residual_in, attention {heads [{weights}],\n"
    "                    output}, ffn_out (without an FFN: null), residual_out}], logits, probabilities; with 2 or\n"
    "                    more tokens also loss (the mean next-token cross-entropy) and each head's d_weights and\n"
    "                    d_scores: what that loss sends back into its kernel (d_scores: d loss / d scaled scores)\n"
    "  --precision P     digits after the decimal point of the probabilities (0-17, default 4)\n";

namespace {

// The loss of predicting each next token and what it sends back into every head's kernel (nullopt for one token).
struct NextTokenGradients {
  double loss;
  std::vector<HeadGradients> layers;
};
std::optional<NextTokenGradients> next_token_gradients(const Model& m, const ModelTrace& t) {
  if (t.tokens.size() < 2) return std::nullopt;
  const std::vector<int> ids = token_ids(m, t.tokens), targets = next_token_targets(ids);
  return NextTokenGradients{model_loss(m, ids, targets), attention_gradients(m, ids, targets)};
}

nlohmann::ordered_json model_trace_to_json(const ModelTrace& t, const std::optional<NextTokenGradients>& g) {
  using nlohmann::ordered_json;
  ordered_json layers = ordered_json::array();
  for (std::size_t li = 0; li < t.layers.size(); ++li) {
    const LayerTrace& l = t.layers[li];
    ordered_json heads = ordered_json::array();
    for (std::size_t h = 0; h < l.attention.heads.size(); ++h) {
      ordered_json head{{"weights", matrix_to_json(l.attention.heads[h].weights())}};
      if (g) {
        head["d_weights"] = matrix_to_json(g->layers[li].d_weights[h]);
        head["d_scores"] = matrix_to_json(g->layers[li].d_scores[h]);
      }
      heads.push_back(std::move(head));
    }
    layers.push_back({{"residual_in", matrix_to_json(l.residual_in)},
                      {"attention", {{"heads", heads}, {"output", matrix_to_json(l.attention.output)}}},
                      {"ffn_out", l.ffn_out.size() > 0 ? matrix_to_json(l.ffn_out) : ordered_json(nullptr)},
                      {"residual_out", matrix_to_json(l.residual_out)}});
  }
  ordered_json j{{"tokens", t.tokens},
                 {"layers", layers},
                 {"logits", matrix_to_json(t.logits)},
                 {"probabilities", matrix_to_json(t.probabilities)}};
  if (g) j["loss"] = g->loss;
  return j;
}

// "after 'b' (position 1): a 0.9120  b 0.0410  ..." for each position.
void print_predictions(std::ostream& out, const Model& m, const ModelTrace& t, int precision) {
  const auto vocab = static_cast<int>(m.vocab.size());
  const int shown = std::min(5, vocab);
  out << m.name << ": the " << shown << " likeliest next tokens at each position\n";
  for (int i = 0; i < static_cast<int>(t.tokens.size()); ++i) {
    std::vector<int> order(static_cast<std::size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    // The larger probability first; on a tie the earlier token, so the list never depends on the sort.
    std::partial_sort(order.begin(), order.begin() + shown, order.end(), [&](int a, int b) {
      const double pa = t.probabilities(i, a), pb = t.probabilities(i, b);
      return pa != pb ? pa > pb : a < b;
    });
    out << "after '" << t.tokens[static_cast<std::size_t>(i)] << "' (position " << i << "):";
    for (int k = 0; k < shown; ++k)
      out << "  " << m.vocab[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] << ' '
          << format_number(t.probabilities(i, order[static_cast<std::size_t>(k)]), precision);
    out << '\n';
  }
}

}  // namespace

int run_command(std::span<const std::string> words, std::ostream& out, std::ostream& err) {
  const ScenarioCommandOptions o = parse_scenario_command("run", words);
  if (o.help) {
    out << "Usage:\n" << kRunHelp;
    return kExitOk;
  }
  if (!o.tokens) throw UsageError("run: missing --tokens \"...\" (tokens from the model's vocabulary)");
  if (o.layer) throw UsageError("run: --layer is for trace (run shows every layer)");
  if (o.overrides.any()) throw UsageError("run: the scenario overrides do not apply to a model");
  try {
    const Model m = resolve_model(load_model_file(o.scenario));
    const ModelTrace t = run_model(m, split_words(*o.tokens));
    if (o.json) out << model_trace_to_json(t, next_token_gradients(m, t)).dump() << '\n';
    else print_predictions(out, m, t, o.precision);
  } catch (const InputError& e) {
    err << "attention-lab: " << o.scenario << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
