// eval: how well a model folder predicts a text. convert: the same model with a smaller KV cache (GQA, MQA or MLA
// made from its own weights) and what the smaller cache costs on a text.
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/checkpoint_input.h"
#include "app/cli/commands.h"
#include "app/cli/conversion_options.h"
#include "app/cli/text_table.h"
#include "core/io/checkpoint_text.h"
#include "core/io/converted_folder.h"
#include "core/io/json_fields.h"
#include "core/kv_conversion.h"
#include "core/kv_tradeoff.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/text_quality.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kEvalHelp =
    "attention-lab eval FOLDER --text-file FILE [--json]\n"
    "  How well a Hugging Face model predicts the text in FILE: the mean loss in nats over its predicted tokens\n"
    "  (1..N-1) and the perplexity e^loss. A text longer than the model's positions (at most 1,024 tokens at once)\n"
    "  is read in windows, each from a fresh start at the last token of the one before: every token is predicted\n"
    "  once.\n"
    "  --json            {\"model\", \"tokens\", \"windows\", \"predicted\", \"loss\", \"perplexity\"}\n";

const char* const kConvertHelp =
    "attention-lab convert FOLDER --to gqa --kv-heads G | --to mla --latent-dim C [--layers LIST]\n"
    "                     [--out DIR] [--eval FILE] [--json]\n"
    "attention-lab convert FOLDER --ladder --eval FILE [--layers LIST] [--json]\n"
    "  The same model with a smaller KV cache, made from its own weights. gqa: the key/value heads in G groups,\n"
    "  each new head the mean of its group's W_K and W_V (G = 1 is MQA; G divides the model's key/value heads).\n"
    "  mla: a latent of C numbers per token from the truncated SVD of each layer's [W_K | W_V] (C at most its\n"
    "  rank); with RoPE the keys are turned after the up-projection. Prints the cache per token before and after\n"
    "  and each layer's relative error ||W' - W|| / ||W|| of W_K and W_V.\n"
    "  --layers LIST     the layers converted: 0-5, 0,2,4, 3 (default: every layer)\n"
    "  --out DIR         write the converted model as a new folder DIR (model.json, model.safetensors and the\n"
    "                    tokenizer's files), which run, trace, eval, convert and the window open as a model folder\n"
    "  --eval FILE       both models on the text in FILE: loss and perplexity, the share of positions whose\n"
    "                    likeliest next token is the same, and the mean KL(original || converted) in nats\n"
    "  --ladder          every conversion at once, measured on --eval's text: GQA at each divisor of the\n"
    "                    key/value heads, MLA at up to eight latent widths from the full rank r down to r/32\n"
    "                    (r, 3r/4, r/2, 3r/8, r/4, r/8, r/16, r/32, each once: fewer on a small model)\n"
    "  --json            {\"original\": {\"kv_bytes_per_token\", \"loss\", \"perplexity\"}, \"converted\": {...,\n"
    "                    \"top1_agreement\", \"kl\"}, \"layers\": [{\"k_error\", \"v_error\"}, ...]}; with --ladder\n"
    "                    {\"original\": {...}, \"points\": [{\"to\", \"kv_heads\" or \"latent_dim\", ...converted's "
    "keys,\n"
    "                    \"layers\"}, ...]}\n";

namespace {

struct ConvertRequest {
  std::optional<std::string> folder, text_file, out;
  ConversionOptions conversion;
  bool ladder = false, json = false, help = false;
};

// The words of eval (`convert` false: --text-file) and convert (--to, --kv-heads, --latent-dim, --layers, --eval).
ConvertRequest parse_request(const std::string& command, std::span<const std::string> words, bool convert) {
  ConvertRequest r;
  // Help wins over every other word, even a bad one: `convert --help --to x` is asking how to write it.
  if (std::ranges::any_of(words, [](const std::string& w) { return w == "--help" || w == "-h"; })) {
    r.help = true;
    return r;
  }
  Args args(words);
  while (!args.done()) {
    const std::string& w = args.next();
    if (w == (convert ? "--eval" : "--text-file")) r.text_file = args.value(w);
    else if (w == "--json") args.flag(w), r.json = true;
    else if (convert && parse_conversion_option(w, args, r.conversion)) continue;
    else if (convert && w == "--out") r.out = args.value(w);
    else if (convert && w == "--ladder") args.flag(w), r.ladder = true;
    else if (w.starts_with("-")) throw UsageError(command + ": unknown option '" + escaped_text(w) + "'");
    else if (r.folder) throw UsageError(command + ": one FOLDER, but found a second: '" + escaped_text(w) + "'");
    else r.folder = w;
  }
  if (r.help) return r;
  if (!r.folder) throw UsageError(command + ": missing FOLDER (a Hugging Face model's folder)");
  if (!convert && !r.text_file) throw UsageError("eval: missing --text-file FILE (the text the model reads)");
  if (!convert) return r;
  if (r.ladder) {
    const ConversionOptions& c = r.conversion;
    if (c.to || c.kv_heads || c.latent_dim)
      throw UsageError("convert: --ladder makes every conversion; --to, --kv-heads and --latent-dim are for one");
    if (r.out) throw UsageError("convert: --out writes one conversion (--to); --ladder only measures them");
    if (!r.text_file) throw UsageError("convert: --ladder measures on a text: give --eval FILE");
    return r;
  }
  if (!r.conversion.to) throw UsageError("convert: missing --to gqa | mla (or --ladder)");
  check_conversion_options(r.conversion, "convert");
  return r;
}

struct EvalText {
  Encoding text;
  int window = 0;
};

// Ways to lower a need past the budget, each with the least need it leads to.
struct Lowering {
  std::string words;
  std::int64_t least = 0;
};

// The ways whose least need fits the budget, as a refusal advises them ("fewer layers (--layers) or a shorter
// text"); none when only a larger budget would do.
std::string advice(const std::vector<Lowering>& ways, std::int64_t budget) {
  std::string out;
  for (const Lowering& w : ways)
    if (w.least + limits::kProgramBytes <= budget) out += (out.empty() ? "" : " or ") + w.words;
  return out;
}

// The text tokenized by the model, once what tokenizing holds (bounded from the text before a token is made) is
// known to fit the budget beside the text itself.
EvalText tokenized(const CheckpointModel& m, const std::string& text, const std::string& option, std::int64_t budget) {
  check_text_size(text, option);
  // A shorter text helps only when the program and an empty text's tokenizing fit.
  check_memory_budget(static_cast<std::int64_t>(text.size()) + encode_bytes(m.tokenizer(), text), budget,
                      "tokenizing the text for " + m.name(),
                      advice({{"a shorter text", encode_bytes(m.tokenizer(), "")}}, budget));
  EvalText e{checkpoint_long_text(m, text, option), 0};
  // Held through the evaluation: no words (it reads none), no room to grow (a vector of a million pieces grown by
  // doubling has room for a million more, carved from tokenizing's freed memory, so resident). Tokenizing's freed
  // working memory then goes back to the system rather than staying in the heap beside the passes.
  e.text.words.clear();
  e.text.words.shrink_to_fit();
  e.text.ids.shrink_to_fit();
  e.text.pieces.shrink_to_fit();
  malloc_trim(0);
  // A text shorter than a window is one window of its own length: the memory is its length's.
  e.window = static_cast<int>(std::min<std::int64_t>(checkpoint_window(m), std::ssize(e.text.ids)));
  return e;
}

// What evaluating on the text holds: the passes (two with a conversion), the text's tokens and every window's copy
// of them with its final stream.
std::int64_t evaluation_bytes(const CheckpointModel& m, const EvalText& e, bool converted) {
  return text_eval_bytes(m, e.text, e.window, converted);
}

// What evaluating on the shortest text (two tokens) would hold: what "a shorter text" can lower the need to.
std::int64_t shortest_text_bytes(const CheckpointModel& m, bool converted) {
  return checkpoint_eval_bytes(m, 2, converted);
}

// The model's own name: the folder's last component as it is (JSON escapes it itself), "." and ".." resolved.
std::string folder_name(const std::string& folder) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(folder, ec);
  return ec ? std::filesystem::path(folder).filename().string() : canonical.filename().string();
}

nlohmann::ordered_json loss_json(double loss) { return {{"loss", loss}, {"perplexity", std::exp(loss)}}; }

int run_eval(const ConvertRequest& r, const std::string& text, std::ostream& out, std::int64_t budget) {
  const auto m = CheckpointModel::open(*r.folder, budget);
  const EvalText e = tokenized(*m, text, "--text-file", budget);
  check_memory_budget(evaluation_bytes(*m, e, false), budget, "evaluating " + m->name() + " on the text",
                      advice({{"a shorter text", shortest_text_bytes(*m, false)}}, budget));
  const PredictionSums s = evaluate_text({m->model(), *m}, nullptr, e.text.ids, e.text.pieces, e.window);
  const auto tokens = static_cast<std::int64_t>(e.text.ids.size());
  const int windows = window_count(tokens, e.window);
  if (r.json) {
    nlohmann::ordered_json j{
        {"model", folder_name(*r.folder)}, {"tokens", tokens}, {"windows", windows}, {"predicted", s.predicted}};
    j.update(loss_json(s.mean_loss()));
    out << j.dump() << '\n';
    return kExitOk;
  }
  out << m->name() << " on " << plural(tokens, "token") << " (" << plural(windows, "window") << " of at most "
      << thousands(static_cast<std::uint64_t>(e.window)) << ")\n"
      << "loss: " << format_number(s.mean_loss(), 4) << " nats per predicted token, over "
      << plural(s.predicted, "next token") << "\nperplexity: " << format_number(std::exp(s.mean_loss()), 2) << '\n';
  return kExitOk;
}

std::string conversion_name(const Model& m, const KvConversion& c) {
  if (c.to == KvTarget::Mla) return "mla with a latent of " + std::to_string(c.latent_dim);
  const int g0 = kv_head_count(m.layers[static_cast<std::size_t>(c.layers.front())].attention);
  if (c.kv_heads == g0) return "the model as shipped (its own " + plural(g0, "key/value head") + ": no change)";
  if (c.kv_heads == 1) return "mqa (one key/value head)";
  return "gqa with " + plural(c.kv_heads, "key/value head");
}

void print_conversion(std::ostream& out, const std::string& name, const KvConversion& c, const Model& before,
                      const Model& after, const std::vector<KvError>& errors) {
  out << name << " as " << conversion_name(before, c) << ", "
      << plural(static_cast<std::int64_t>(c.layers.size()), "layer")
      << " converted\nKV cache per token (16-bit numbers): "
      << thousands(static_cast<std::uint64_t>(kv_bytes_per_token(before, kKvCacheBytesPerNumber))) << " -> "
      << thousands(static_cast<std::uint64_t>(kv_bytes_per_token(after, kKvCacheBytesPerNumber))) << " bytes\n";
  if (const std::int64_t again = key_reexpansion_flops(after, 1); again > 0)
    out << "Keys expanded again at each new token (RoPE turns them after the up-projection, so W_UK cannot be "
           "absorbed): "
        << thousands(static_cast<std::uint64_t>(again))
        << " FLOPs a cached token, summed over the model's mla layers\n";
  std::vector<std::vector<std::string>> rows{{"layer", "k_error", "v_error"}};
  for (std::size_t l = 0; l < errors.size(); ++l)
    rows.push_back({std::to_string(l), format_number(errors[l].k_error, 6), format_number(errors[l].v_error, 6)});
  print_table(out, rows, {0, 1, 2});
}

void print_quality(std::ostream& out, const PredictionSums& s) {
  const double a = s.mean_loss(), b = s.mean_converted_loss();
  out << "on the text (" << plural(s.predicted, "next token") << "):\n"
      << "loss: " << format_number(a, 4) << " -> " << format_number(b, 4) << " nats per predicted token\n"
      << "perplexity: " << format_number(std::exp(a), 2) << " -> " << format_number(std::exp(b), 2) << '\n'
      << "top-1 agreement with the original: " << percent_text(s.top1_agreement()) << '\n'
      << "KL(original || converted): " << format_number(s.mean_kl(), 6) << " nats per position\n";
}

nlohmann::ordered_json errors_json(const std::vector<KvError>& errors) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const KvError& e : errors) layers.push_back({{"k_error", e.k_error}, {"v_error", e.v_error}});
  return layers;
}

// A converted model's keys: its cache and, measured, how it predicts beside the original.
nlohmann::ordered_json converted_json(std::int64_t kv_bytes, const std::optional<PredictionSums>& s) {
  nlohmann::ordered_json j{{"kv_bytes_per_token", kv_bytes}};
  if (!s) return j;
  j.update(loss_json(s->mean_converted_loss()));
  j["top1_agreement"] = s->top1_agreement();
  j["kl"] = s->mean_kl();
  return j;
}

void write_conversion_json(std::ostream& out, const Model& before, const Model& after,
                           const std::vector<KvError>& errors, const std::optional<PredictionSums>& s) {
  nlohmann::ordered_json original{{"kv_bytes_per_token", kv_bytes_per_token(before, kKvCacheBytesPerNumber)}};
  if (s) original.update(loss_json(s->mean_loss()));
  const nlohmann::ordered_json converted = converted_json(kv_bytes_per_token(after, kKvCacheBytesPerNumber), s);
  out << nlohmann::ordered_json{{"original", original}, {"converted", converted}, {"layers", errors_json(errors)}}
             .dump()
      << '\n';
}

void print_ladder(std::ostream& out, const std::string& name, const std::vector<TradeoffPoint>& points) {
  const PredictionSums& base = points.front().sums;
  out << name << " on the text (" << plural(base.predicted, "next token") << "), KV cache at 16-bit numbers:\n";
  std::vector<std::vector<std::string>> rows{{"cache", "bytes/token", "loss", "perplexity", "top-1", "KL"}};
  for (const TradeoffPoint& p : points) {
    const double loss = tradeoff_point_loss(p);
    rows.push_back({tradeoff_point_name(p.conversion), thousands(static_cast<std::uint64_t>(p.kv_bytes_per_token)),
                    format_number(loss, 4), format_number(std::exp(loss), 2),
                    p.conversion ? percent_text(p.sums.top1_agreement()) : "-",
                    p.conversion ? format_number(p.sums.mean_kl(), 4) : "-"});
  }
  print_table(out, rows, {1, 2, 3, 4, 5});
}

void write_ladder_json(std::ostream& out, const std::vector<TradeoffPoint>& points) {
  nlohmann::ordered_json original{{"kv_bytes_per_token", points.front().kv_bytes_per_token}};
  original.update(loss_json(points.front().sums.mean_loss()));
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 1; i < points.size(); ++i) {
    const KvConversion& c = *points[i].conversion;
    nlohmann::ordered_json j{{"to", c.to == KvTarget::Mla ? "mla" : "gqa"}};
    if (c.to == KvTarget::Mla) j["latent_dim"] = c.latent_dim;
    else j["kv_heads"] = c.kv_heads;
    j.update(converted_json(points[i].kv_bytes_per_token, points[i].sums));
    j["layers"] = errors_json(points[i].errors);
    list.push_back(j);
  }
  out << nlohmann::ordered_json{{"original", original}, {"points", list}}.dump() << '\n';
}

// What the ladder holds beside the passes: its widest conversion's weights and every converted layer's SVD.
int run_ladder(const ConvertRequest& r, const std::string& eval_text, std::ostream& out, std::int64_t budget) {
  const auto m = CheckpointModel::open(*r.folder, budget);
  const std::vector<int> layers = conversion_layers(r.conversion, m->model());
  const std::vector<KvConversion> conversions = tradeoff_conversions(m->model(), layers);
  const EvalText text = tokenized(*m, eval_text, "--eval", budget);
  const std::int64_t converting = tradeoff_conversion_bytes(m->model(), conversions);
  std::int64_t one_layer = converting;
  for (const int l : layers)
    one_layer = std::min(one_layer, tradeoff_conversion_bytes(m->model(), tradeoff_conversions(m->model(), {l})));
  const std::int64_t pass = evaluation_bytes(*m, text, true);
  check_memory_budget(pass + converting, budget, "measuring every conversion of " + m->name(),
                      advice({{"fewer layers (--layers)", pass + one_layer},
                              {"a shorter text", shortest_text_bytes(*m, true) + converting}},
                             budget));
  const EvalModel original{m->model(), *m};
  const WindowedRun run = run_windows(original, text.text.ids, text.text.pieces, text.window);
  const std::vector<TradeoffPoint> points = measure_tradeoff(original, run, conversions);
  if (r.json) write_ladder_json(out, points);
  else print_ladder(out, m->name(), points);
  return kExitOk;
}

// The weights a conversion makes, as it would be with `c` changed by `change`.
template <class Change>
std::int64_t converted_bytes_if(const Model& m, KvConversion c, Change&& change) {
  change(c);
  return converted_attention_bytes(converted_model(m, c), c);
}

// What lowers a conversion's need: one layer converted rather than several, its narrowest form (one key/value head
// for gqa, a latent of 1 for mla), and with --eval a shorter text. `pass`: the passes' bytes on the text, `shortest`
// on the shortest text.
std::vector<Lowering> conversion_lowerings(const Model& m, const KvConversion& c, std::int64_t pass,
                                           std::int64_t shortest) {
  const std::int64_t made = converted_bytes_if(m, c, [](KvConversion&) {});
  std::vector<Lowering> ways;
  if (c.layers.size() > 1) {
    std::int64_t least = made;
    for (const int l : c.layers)
      least = std::min(least, converted_bytes_if(m, c, [l](KvConversion& x) { x.layers = {l}; }));
    ways.push_back({"fewer layers (--layers)", pass + least});
  }
  if (c.to == KvTarget::Gqa && c.kv_heads > 1)
    ways.push_back({"fewer key/value heads (--kv-heads)",
                    pass + converted_bytes_if(m, c, [](KvConversion& x) { x.kv_heads = 1; })});
  if (c.to == KvTarget::Mla && c.latent_dim > 1)
    ways.push_back({"a narrower latent (--latent-dim)",
                    pass + converted_bytes_if(m, c, [](KvConversion& x) { x.latent_dim = 1; })});
  if (shortest < pass) ways.push_back({"a shorter text", shortest + made});
  return ways;
}

int run_convert(const ConvertRequest& r, const std::optional<std::string>& eval_text, std::ostream& out,
                std::int64_t budget) {
  const auto m = CheckpointModel::open(*r.folder, budget);
  const KvConversion c = conversion_of(r.conversion, m->model());
  if (r.out) check_converted_folder_target(*r.out);
  const Model after = converted_model(m->model(), c);
  std::optional<EvalText> text;
  if (eval_text) text = tokenized(*m, *eval_text, "--eval", budget);
  const std::int64_t pass = text ? evaluation_bytes(*m, *text, true) : checkpoint_eval_bytes(*m, 1, true);
  check_memory_budget(
      pass + converted_attention_bytes(after, c), budget, "converting " + m->name(),
      advice(conversion_lowerings(m->model(), c, pass, text ? shortest_text_bytes(*m, true) : pass), budget));
  const ConvertedAttention attention = convert_attention(*m, m->model(), c);
  const ConvertedWeights w(*m, after, attention);
  const std::vector<KvError>& errors = attention.errors;
  if (r.out) write_converted_folder(*m, *r.folder, c, attention, *r.out);
  std::optional<PredictionSums> s;
  if (text) {
    const EvalModel converted{after, w};
    s = evaluate_text({m->model(), *m}, &converted, text->text.ids, text->text.pieces, text->window);
  }
  if (r.json) {
    write_conversion_json(out, m->model(), after, errors, s);
    return kExitOk;
  }
  print_conversion(out, m->name(), c, m->model(), after, errors);
  if (r.out) out << "written to " << shown_path(*r.out) << '\n';
  if (s) print_quality(out, *s);
  return kExitOk;
}

// What the text file must be whatever the model: text, and some of it. The message names the file.
void check_text_file(const std::string& text) {
  if (text.empty()) throw InputError("", "empty: give the text the model reads");
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos)
    throw InputError("", "byte " + thousands(bad + 1) + " is not UTF-8 (" + escaped_text(text.substr(bad, 1)) + ")");
}

// Both commands: parse, then open the folder; an InputError names the folder (the text file's own, the file).
int checkpoint_command(const std::string& command, std::span<const std::string> words, std::ostream& out,
                       std::ostream& err, std::int64_t budget) {
  const bool convert = command == "convert";
  const ConvertRequest r = parse_request(command, words, convert);
  if (r.help) {
    out << "Usage:\n" << (convert ? kConvertHelp : kEvalHelp);
    return kExitOk;
  }
  if (const std::optional<std::string> problem = model_folder_problem(*r.folder)) {
    err << "attention-lab: " << shown_path(*r.folder) << ": " << *problem << '\n';
    return kExitBadInput;
  }
  std::optional<std::string> text;
  try {
    if (r.text_file) text = read_text_file(*r.text_file, kMaxTextBytes, "a text to evaluate on", budget);
    if (text) check_text_file(*text);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(*r.text_file) << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  reuse_freed_layers();
  try {
    if (r.ladder) return run_ladder(r, *text, out, budget);
    return convert ? run_convert(r, text, out, budget) : run_eval(r, *text, out, budget);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(*r.folder) << ": " << e.what() << '\n';
    return kExitBadInput;
  }
}

}  // namespace

int eval_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  return checkpoint_command("eval", words, out, err, budget);
}

int convert_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  return checkpoint_command("convert", words, out, err, budget);
}

}  // namespace attn::cli
