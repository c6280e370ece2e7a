#include <optional>

#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "app/cli/scenario_input.h"
#include "core/decode.h"
#include "core/io/decode_json.h"
#include "core/memory_budget.h"
#include "core/trace_bytes.h"

namespace attn::cli {

const char* const kDecodeHelp =
    "attention-lab decode SCENARIO [options]\n"
    "  Feeds the tokens one at a time through a KV cache, as a model generating text does: each step\n"
    "  computes only the new token's query, appends its keys and values (MLA: its latent) to the cache and\n"
    "  attends over the cache. Prints per step the token, what it added to the cache, each head's weights,\n"
    "  the output row and the cache size. Decoding is causal whatever the file's mask says. With a context\n"
    "  (cross-attention) the context's keys and values are cached once, before the first token, and every\n"
    "  token attends to all of them through the file's mask.\n"
    "  --json            {\"cross_attention\", \"steps\": [{\"t\", \"token\", \"output\", \"cache_tokens\",\n"
    "                    \"cache_elements\", \"weights\", \"row_status\"}...], \"elements_per_token\", \"cache\",\n"
    "                    \"weights\"}\n"
    "  --precision P     digits after the decimal point in the text form (0-17, default 4)\n"
    "  --memory-budget SIZE  what the decoding and printing it may hold, as for trace\n"
    "  and every option of trace that overrides the file (--variant, --kv-heads, --latent-dim, ...)\n";

namespace {

std::string per_token_explanation(const AttentionConfig& a) {
  if (a.variant == Variant::Mla)
    return "the latent: latent_dim = " + std::to_string(a.latent_dim) +
           " numbers (keys and values are expanded from it)";
  const int g = kv_head_count(a);
  return "2 (a key and a value) x " + std::to_string(g) + (g == 1 ? " KV head" : " KV heads") + " x head_dim " +
         std::to_string(a.head_dim) + " = " + std::to_string(2 * g * a.head_dim) + " numbers";
}

// Row `row` of the cache: the latent, or each KV head's key and value.
void print_cache_row(std::ostream& out, const DecodeTrace& d, Eigen::Index row, int precision,
                     const std::string& verb) {
  if (d.attention.variant == Variant::Mla) {
    out << "  " << verb << " latent:   " << row_text(d.cache.latent.row(row), precision) << '\n';
    return;
  }
  for (std::size_t g = 0; g < d.cache.k.size(); ++g)
    out << "  " << verb << (verb == "appended" ? " to" : " for") << " KV head " << g
        << ":  k = " << row_text(d.cache.k[g].row(row), precision)
        << "   v = " << row_text(d.cache.v[g].row(row), precision) << '\n';
}

void print_decode(std::ostream& out, const DecodeTrace& d, int precision) {
  const AttentionConfig& a = d.attention;
  out << "Decoding \"" << d.name << "\" one token at a time through a KV cache (one layer)\n";
  if (d.cross_attention) {
    out << "Cross-attention: the cache holds the context, " << d.cached_tokens.size()
        << " tokens, computed once before the first token; each context token takes " << per_token_explanation(a)
        << ".\n";
    for (std::size_t j = 0; j < d.cached_tokens.size(); ++j) {
      out << "  context '" << shorten_label(d.cached_tokens[j]) << "'\n";
      print_cache_row(out, d, static_cast<Eigen::Index>(j), precision, "cached");
    }
    out << '\n';
  } else {
    out << "Each token adds to the cache " << per_token_explanation(a) << ".\n\n";
  }
  for (const DecodeStep& s : d.steps) {
    out << "step " << s.t << "  '" << shorten_label(s.token) << "'  cache: " << s.cache_tokens
        << (s.cache_tokens == 1 ? " token, " : " tokens, ") << s.cache_elements << " numbers\n";
    // Cross-attention appends nothing: the context's cache was filled before the first step.
    if (!d.cross_attention) print_cache_row(out, d, s.t, precision, "appended");
    for (std::size_t h = 0; h < s.weights.size(); ++h) {
      out << "  weights of head " << h << ":";
      for (Eigen::Index j = 0; j < s.weights[h].cols(); ++j)
        out << "  " << shorten_label(d.cached_tokens[static_cast<std::size_t>(j)]) << " "
            << format_number(s.weights[h](0, j), precision);
      if (s.status[h] == RowStatus::AllMasked) out << "  (every cached token is hidden by the mask)";
      out << '\n';
    }
    out << "  output:            " << row_text(s.output, precision) << "\n\n";
  }
}

}  // namespace

int decode_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  const ScenarioCommandOptions o = parse_scenario_command("decode", words);
  if (o.help) {
    out << "Usage:\n" << kDecodeHelp << "\n  Options that override the scenario file:\n" << kOverridesHelp;
    return kExitOk;
  }
  const std::optional<DecodeTrace> d = compute_from_file(o, budget, err, [budget](const Scenario& s) {
    check_memory_budget(predicted_decode_bytes(s), budget, "this decoding");
    return decode(s);
  });
  if (!d) return kExitBadInput;
  if (o.json) {
    write_decode_json(out, *d);
    out << '\n';
  } else print_decode(out, *d, o.precision);
  return kExitOk;
}

}  // namespace attn::cli
