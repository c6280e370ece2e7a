#include <cmath>
#include <optional>

#include "app/cli/args.h"
#include "app/cli/checkpoint_input.h"
#include "app/cli/commands.h"
#include "app/cli/handout.h"
#include "app/cli/matrix_text.h"
#include "app/cli/output_files.h"
#include "app/cli/overrides.h"
#include "app/cli/scenario_input.h"
#include "core/attention.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/io/trace_json.h"
#include "core/memory_budget.h"
#include "core/trace_bytes.h"

namespace attn::cli {

const char* const kTraceHelp =
    "attention-lab trace SCENARIO [options]\n"
    "  Prints every intermediate of attention for SCENARIO, in pipeline order: X, W_Q, W_K, W_V,\n"
    "  Q, K, V, then for each head scores, scaled, mask, masked, weights (with each row's shift,\n"
    "  normaliser Z and entropy) and output, then concat, each head's W_O contribution and the output.\n"
    "  --json            one JSON object instead: tokens, context_tokens, heads [{q, k, v, scores,\n"
    "                    scaled, mask, masked, weights, output, ...}], concat, output; -inf is null\n"
    "  --markdown        a handout instead, in Markdown: each step's formula with the current shapes, what\n"
    "                    it does and why (as the app explains it) and its matrices as tables with token labels\n"
    "  --latex           the same handout as a LaTeX document (pdflatex; amsmath and booktabs only)\n"
    "                    --json, --markdown and --latex exclude each other\n"
    "  --precision P     digits after the decimal point in the text and handout forms (0-17, default 4)\n"
    "  --layer L --tokens \"a b\"  SCENARIO may be a model file: layer L's attention reading the tokens (the\n"
    "                    residual stream entering it, normalised as the model does) is traced as a scenario\n"
    "  --scenario OUT    also write the scenario traced (a model layer, or the file with its overrides) to OUT\n"
    "                    (atomically; OUT may not be SCENARIO itself)\n"
    "  --memory-budget SIZE  what the trace and printing it may hold (default: 3 GiB or half the physical\n"
    "                    memory, whichever is smaller); past it, exit 2 before anything is computed. Every form\n"
    "                    is written as it is made; token labels past 24 columns are shortened with \"\u2026\"\n";

namespace {

class TracePrinter {
 public:
  TracePrinter(std::ostream& out, const Trace& t, int precision) : out_(out), t_(t), precision_(precision) {}

  void print() {
    const AttentionConfig& a = t_.attention;
    const int d = a.head_dim;
    const auto hd_cols = head_column_labels("h", a.heads, d);
    header();
    matrix("X: input embeddings, one row per token", t_.x, t_.tokens, {});
    if (t_.cross_attention) matrix("X_kv: context embeddings, the key/value side", t_.x_kv, t_.context_tokens, {});
    const std::string x_kv = t_.cross_attention ? "X_kv" : "X";
    if (a.variant == Variant::Mla) {
      matrix("W_DKV: down-projection to the latent", *t_.weights.W_DKV, {}, {});
      matrix("latent = " + x_kv + " W_DKV  (the KV cache holds only this: " + std::to_string(a.latent_dim) +
                 " numbers per token)",
             t_.latent, t_.context_tokens, {});
      if (t_.weights.W_DQ) {
        matrix("W_DQ: down-projection of the queries", *t_.weights.W_DQ, {}, {});
        matrix("query_latent = X W_DQ", t_.query_latent, t_.tokens, {});
        matrix("W_UQ: query latent up to the heads", *t_.weights.W_UQ, {}, hd_cols);
      } else {
        matrix("W_Q: query projection", *t_.weights.W_Q, {}, hd_cols);
      }
      matrix("W_UK: latent up to the keys", *t_.weights.W_UK, {}, hd_cols);
      matrix("W_UV: latent up to the values", *t_.weights.W_UV, {}, hd_cols);
      // Biases are added after the up-projections: the latent itself carries none.
      const bool bias = a.qkv_bias;
      if (bias) {
        matrix("b_Q: query bias", *t_.weights.b_Q, {}, hd_cols);
        matrix("b_K: key bias", *t_.weights.b_K, {}, hd_cols);
        matrix("b_V: value bias", *t_.weights.b_V, {}, hd_cols);
      }
      const std::string q = t_.weights.W_DQ ? "Q = query_latent W_UQ" : "Q = X W_Q";
      matrix(q + (bias ? " + b_Q" : ""), t_.Q, t_.tokens, hd_cols);
      matrix(bias ? "K = latent W_UK + b_K" : "K = latent W_UK", t_.K, t_.context_tokens, hd_cols);
      matrix(bias ? "V = latent W_UV + b_V" : "V = latent W_UV", t_.V, t_.context_tokens, hd_cols);
    } else {
      const auto kv_cols = head_column_labels("g", kv_head_count(a), d);
      matrix("W_Q: query projection", *t_.weights.W_Q, {}, hd_cols);
      matrix("W_K: key projection", *t_.weights.W_K, {}, kv_cols);
      matrix("W_V: value projection", *t_.weights.W_V, {}, kv_cols);
      const bool bias = a.qkv_bias;  // b_Q, b_K and b_V: one row each, added to every row of the projection
      if (bias) {
        matrix("b_Q: query bias", *t_.weights.b_Q, {}, hd_cols);
        matrix("b_K: key bias", *t_.weights.b_K, {}, kv_cols);
        matrix("b_V: value bias", *t_.weights.b_V, {}, kv_cols);
      }
      matrix(bias ? "Q = X W_Q + b_Q" : "Q = X W_Q", t_.Q, t_.tokens, hd_cols);
      matrix("K = " + x_kv + (bias ? " W_K + b_K" : " W_K"), t_.K, t_.context_tokens, kv_cols);
      matrix("V = " + x_kv + (bias ? " W_V + b_V" : " W_V"), t_.V, t_.context_tokens, kv_cols);
    }
    for (const HeadTrace& h : t_.heads) head(h);
    matrix(a.heads == 1 ? std::string("concat = [output_0]")
                        : "concat = [output_0 ... output_" + std::to_string(a.heads - 1) + "]",
           t_.concat, t_.tokens, hd_cols);
    if (t_.weights.W_O) {
      matrix("W_O: output projection", t_.W_O(), hd_cols, {});
      for (const HeadTrace& trace_head : t_.heads) {
        const HeadTrace h = fresh_head(trace_head);  // its contribution freed after it is printed
        matrix("contribution of head " + std::to_string(h.head) + " = output_" + std::to_string(h.head) + " W_O^(" +
                   std::to_string(h.head) + ")  (rows " + std::to_string(h.head * d) + ".." +
                   std::to_string((h.head + 1) * d - 1) + " of W_O)",
               h.contribution(), t_.tokens, {});
      }
      if (t_.weights.b_O) {
        matrix("b_O: output bias", *t_.weights.b_O, {}, {});
        matrix("output = concat W_O + b_O  (= the sum of the contributions + b_O)", t_.output, t_.tokens, {});
      } else {
        matrix("output = concat W_O  (= the sum of the contributions)", t_.output, t_.tokens, {});
      }
    } else {
      matrix("output = concat  (no W_O)", t_.output, t_.tokens, hd_cols);
    }
    if (t_.absorbed) absorbed(*t_.absorbed);
  }

 private:
  void header() {
    const AttentionConfig& a = t_.attention;
    out_ << "Scenario: " << t_.name << '\n';
    out_ << (t_.cross_attention ? "Cross-attention: " : "Self-attention: ") << t_.n_q()
         << (t_.n_q() == 1 ? " query token (" : " query tokens (") << join(t_.tokens) << ")";
    if (t_.cross_attention) out_ << " over " << t_.n_kv() << " context tokens (" << join(t_.context_tokens) << ")";
    out_ << '\n';
    out_ << to_upper(to_string(a.variant)) << ", " << a.heads << (a.heads == 1 ? " head" : " heads") << " of dimension "
         << a.head_dim;
    const int g = kv_head_count(a);
    if (a.variant == Variant::Gqa || a.variant == Variant::Mqa)
      out_ << " sharing " << g << " KV head" << (g == 1 ? "" : "s") << " (" << a.heads / g << " query heads each)";
    if (a.variant == Variant::Mla) {
      out_ << ", latent_dim " << a.latent_dim;
      if (a.query_latent_dim > 0) out_ << ", query_latent_dim " << a.query_latent_dim;
    }
    out_ << ", mask " << to_string(a.mask);
    if (a.mask == MaskKind::SlidingWindow) out_ << " (window " << a.window << ")";
    out_ << ", kernel " << to_string(a.kernel) << ", ";
    if (a.scale) out_ << "scores scaled by 1/sqrt(" << a.head_dim << ") = " << format_number(t_.scale_factor, 6);
    else out_ << "scores not scaled";
    out_ << (t_.has_output_projection() ? ", with W_O" : ", no W_O") << "\n\n";
  }

  // One head at a time: the matrices it makes on demand are freed when it is printed.
  void head(const HeadTrace& trace_head) {
    const HeadTrace h = fresh_head(trace_head);
    const int d = t_.attention.head_dim;
    const std::string n = std::to_string(h.head);
    const bool many = t_.attention.heads > 1;
    const bool shared = kv_head_count(t_.attention) < t_.attention.heads;
    out_ << "=== Head " << n;
    if (shared) out_ << " (reads KV head " << h.kv_head << ")";
    out_ << " ===\n\n";
    auto cols = [d](int block) {
      return "[:, " + std::to_string(block * d) + ":" + std::to_string((block + 1) * d) + "]";
    };
    if (many) {
      matrix("q = Q" + cols(h.head), h.q, t_.tokens, {});
      matrix("k = K" + cols(h.kv_head), h.k, t_.context_tokens, {});
      matrix("v = V" + cols(h.kv_head), h.v, t_.context_tokens, {});
    }
    matrix("scores = q k^T  (rows: queries, columns: keys)", h.scores(), t_.tokens, t_.context_tokens);
    if (t_.attention.scale)
      matrix("scaled = scores / sqrt(" + std::to_string(d) + ")", h.scaled(), t_.tokens, t_.context_tokens);
    else matrix("scaled = scores  (scale off)", h.scaled(), t_.tokens, t_.context_tokens);
    matrix("mask  (1 = may attend, 0 = hidden)", *h.mask, t_.tokens, t_.context_tokens, 0);
    const bool softmax = t_.attention.kernel == Kernel::Softmax;
    matrix(softmax ? "masked = scaled, hidden entries set to -inf"
                   : "masked = kappa(scaled) = scaled, hidden entries set to 0",
           h.masked(), t_.tokens, t_.context_tokens);
    matrix(softmax ? "weights = softmax(masked), row by row" : "weights = masked / Z, row by row", h.weights(),
           t_.tokens, t_.context_tokens);
    row_statistics(h, softmax);
    matrix("output = weights v", h.output, t_.tokens, {});
  }

  void absorbed(const AbsorbedMla& m) {
    const AttentionConfig& a = t_.attention;
    const bool q_latent = t_.weights.W_DQ.has_value();
    out_ << "=== MLA as served: W_UK absorbed into the queries, W_UV into the output; K and V are never formed ===\n\n";
    for (int h = 0; h < a.heads; ++h) {
      const std::string n = std::to_string(h);
      matrix(std::string(q_latent ? "W_UQK^(" : "W_QK^(") + n + ") = " + (q_latent ? "W_UQ^(" : "W_Q^(") + n +
                 ") W_UK^(" + n + ")^T",
             m.W_UQK[h], {}, {});
      matrix("scores of head " + n + " = " + (q_latent ? "query_latent" : "X") + " W_UQK^(" + n +
                 ") latent^T  (max difference from the explicit scores: " +
                 format_number((m.scores[h] - fresh_head(t_.heads[h]).scores()).cwiseAbs().maxCoeff(), 17) + ")",
             m.scores[h], t_.tokens, t_.context_tokens);
    }
    matrix("latent_output = [weights_h latent]_h", m.latent_output, t_.tokens,
           head_column_labels("h", a.heads, a.latent_dim));
    matrix(t_.weights.W_O ? "W_LO = blockdiag(W_UV^(h)) W_O" : "W_LO = blockdiag(W_UV^(h))  (no W_O)", m.W_LO, {}, {});
    matrix(std::string(t_.weights.b_O ? "output = latent_output W_LO + b_O" : "output = latent_output W_LO") +
               "  (max difference from the explicit output: " +
               format_number((m.output - t_.output).cwiseAbs().maxCoeff(), 17) + ")",
           m.output, t_.tokens, {});
  }

  void row_statistics(const HeadTrace& h, bool softmax) {
    const RowStatistics stats = cli::row_statistics(h, softmax);
    matrix(softmax ? "per row: shift m = max visible score, Z = sum exp(masked - m), entropy of the weights (nats)"
                   : "per row: Z = sum of masked (the normaliser), entropy of the positive weights (nats)",
           stats.values, t_.tokens, stats.columns);
    for (int i = 0; i < t_.n_q(); ++i) {
      if (h.row_status[i] == RowStatus::AllMasked)
        out_ << "  note: every key is hidden from '" << shorten_label(t_.tokens[i])
             << "': its weights and output are 0\n";
      if (h.row_status[i] == RowStatus::ZeroSum)
        out_ << "  note: Z is 0 for '" << shorten_label(t_.tokens[i])
             << "' (or lost in rounding next to its entries), so its row cannot be normalised: weights and output are "
                "0\n";
      if (h.row_status[i] == RowStatus::Signed)
        out_ << "  note: some weights of '" << shorten_label(t_.tokens[i])
             << "' are negative: the linear kernel gives no probability distribution here, so no entropy\n";
    }
  }

  void matrix(const std::string& title, const Matrix& m, const std::vector<std::string>& rows,
              const std::vector<std::string>& cols, std::optional<int> precision = std::nullopt) {
    out_ << title << "  (" << m.rows() << " x " << m.cols() << ")\n";
    print_matrix(out_, m, {precision.value_or(precision_), rows, cols});
    out_ << '\n';
  }

  static std::string join(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& item : items) s += (s.empty() ? "" : " ") + shorten_label(item);
    return s;
  }
  static std::string to_upper(std::string_view s) {
    std::string u(s);
    for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  }

  std::ostream& out_;
  const Trace& t_;
  int precision_;
};

enum class TraceFormat { Text, Json, Markdown, Latex };

std::optional<TraceFormat> format_option(const std::string& word) {
  if (word == "--json") return TraceFormat::Json;
  if (word == "--markdown") return TraceFormat::Markdown;
  if (word == "--latex") return TraceFormat::Latex;
  return std::nullopt;
}

// --markdown and --latex are trace's own, so they are taken out before the options trace shares with decode are
// parsed; --json stays in for that parser but counts here, so any two output formats are refused alike.
TraceFormat take_format(std::span<const std::string> words, std::vector<std::string>& rest) {
  TraceFormat format = TraceFormat::Text;
  std::string chosen;
  for (const std::string& word : words) {
    const std::optional<TraceFormat> f = format_option(word);
    if (!f || *f == TraceFormat::Json) rest.push_back(word);
    if (!f || word == chosen) continue;
    if (!chosen.empty())
      throw UsageError("trace: " + chosen + " and " + word +
                       " cannot be combined: choose one of --json, --markdown or --latex");
    format = *f;
    chosen = word;
  }
  return format;
}

}  // namespace

int trace_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  std::vector<std::string> rest;
  const TraceFormat format = take_format(words, rest);
  std::optional<std::string> write_to;  // --scenario OUT.json
  const ScenarioCommandOptions o = parse_scenario_command("trace", rest, [&](const std::string& word, Args& args) {
    if (word != "--scenario") return false;
    write_to = args.value(word);
    return true;
  });
  if (o.help) {
    out << "Usage:\n" << kTraceHelp << "\n  Options that override the scenario file:\n" << kOverridesHelp;
    return kExitOk;
  }
  if (write_to) {
    ModelFolderInputs m = model_folder_inputs(o.scenario);
    m.files.push_back({"SCENARIO", o.scenario});
    check_output_option("trace", "--scenario", *write_to, m.files, m.folders);
  }
  std::optional<Trace> t = compute_from_file(o, budget, err, [&](const Scenario& s) {
    check_trace_budget(s, budget, predicted_print_bytes(s));
    if (write_to) try {
        save_scenario_file(s, *write_to);
      } catch (const InputError& e) {
        throw InputError("--scenario", e.what());
      }
    return compute_trace(s);
  });
  if (!t) return kExitBadInput;
  const HeadDone head_done = [&t](int h) { forget_derived(t->heads[static_cast<std::size_t>(h)]); };
  switch (format) {
    case TraceFormat::Json:
      write_trace_json(out, *t);
      out << '\n';
      break;
    case TraceFormat::Markdown: write_markdown(out, *t, o.precision, head_done); break;
    case TraceFormat::Latex: write_latex(out, *t, o.precision, head_done); break;
    case TraceFormat::Text: TracePrinter(out, *t, o.precision).print(); break;
  }
  return kExitOk;
}

}  // namespace attn::cli
