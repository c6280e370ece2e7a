#include <cmath>
#include <optional>

#include "app/args.h"
#include "app/commands.h"
#include "app/matrix_text.h"
#include "app/overrides.h"
#include "core/attention.h"
#include "core/io/scenario_json.h"
#include "core/io/trace_json.h"

namespace attn::cli {

const char* const kTraceHelp =
    "attention-lab trace SCENARIO [options]\n"
    "  Prints every intermediate of attention for SCENARIO, in pipeline order: X, W_Q, W_K, W_V,\n"
    "  Q, K, V, then for each head scores, scaled, mask, masked, weights (with each row's shift,\n"
    "  normaliser Z and entropy) and output, then concat, each head's W_O contribution and the output.\n"
    "  --json            one JSON object instead: tokens, context_tokens, heads [{q, k, v, scores,\n"
    "                    scaled, mask, masked, weights, output, ...}], concat, output; -inf is null\n"
    "  --precision P     digits after the decimal point in the text form (0-17, default 4)\n";

namespace {

struct TraceOptions {
  std::string scenario;
  bool json = false;
  int precision = 4;
  Overrides overrides;
};

TraceOptions parse_trace_args(std::span<const std::string> words) {
  TraceOptions o;
  Args args(words);
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--json") o.json = true;
    else if (word == "--precision") o.precision = static_cast<int>(args.integer(word, 0, 17));
    else if (o.overrides.parse(word, args)) continue;
    else if (word.starts_with("--")) throw UsageError("trace: unknown option '" + word + "' (see attention-lab --help)");
    else if (o.scenario.empty()) o.scenario = word;
    else throw UsageError("trace: only one SCENARIO may be given, found '" + o.scenario + "' and '" + word + "'");
  }
  if (o.scenario.empty()) throw UsageError("trace: missing SCENARIO (a scenario .json file)");
  return o;
}

std::vector<std::string> head_column_labels(int heads, int head_dim) {
  std::vector<std::string> labels;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < head_dim; ++i) {
      std::string label = heads == 1 ? "" : std::string("h").append(std::to_string(h)).append(".");
      labels.push_back(label.append(std::to_string(i)));
    }
  return labels;
}

class TracePrinter {
 public:
  TracePrinter(std::ostream& out, const Trace& t, int precision) : out_(out), t_(t), precision_(precision) {}

  void print() {
    const AttentionConfig& a = t_.attention;
    const int d = a.head_dim;
    const auto hd_cols = head_column_labels(a.heads, d);
    header();
    matrix("X: input embeddings, one row per token", t_.x, t_.tokens, {});
    if (t_.cross_attention) matrix("X_kv: context embeddings, the key/value side", t_.x_kv, t_.context_tokens, {});
    matrix("W_Q: query projection", t_.weights.W_Q, {}, hd_cols);
    matrix("W_K: key projection", t_.weights.W_K, {}, hd_cols);
    matrix("W_V: value projection", t_.weights.W_V, {}, hd_cols);
    matrix("Q = X W_Q", t_.Q, t_.tokens, hd_cols);
    matrix(t_.cross_attention ? "K = X_kv W_K" : "K = X W_K", t_.K, t_.context_tokens, hd_cols);
    matrix(t_.cross_attention ? "V = X_kv W_V" : "V = X W_V", t_.V, t_.context_tokens, hd_cols);
    for (const HeadTrace& h : t_.heads) head(h);
    matrix(a.heads == 1 ? std::string("concat = [output_0]")
                        : "concat = [output_0 ... output_" + std::to_string(a.heads - 1) + "]",
           t_.concat, t_.tokens, hd_cols);
    if (t_.weights.W_O) {
      matrix("W_O: output projection", *t_.weights.W_O, hd_cols, {});
      for (const HeadTrace& h : t_.heads)
        matrix("contribution of head " + std::to_string(h.head) + " = output_" + std::to_string(h.head) + " W_O^(" +
                   std::to_string(h.head) + ")  (rows " + std::to_string(h.head * d) + ".." +
                   std::to_string((h.head + 1) * d - 1) + " of W_O)",
               h.contribution, t_.tokens, {});
      matrix("output = concat W_O  (= the sum of the contributions)", t_.output, t_.tokens, {});
    } else {
      matrix("output = concat  (no W_O)", t_.output, t_.tokens, hd_cols);
    }
  }

 private:
  void header() {
    const AttentionConfig& a = t_.attention;
    out_ << "Scenario: " << t_.name << '\n';
    out_ << (t_.cross_attention ? "Cross-attention: " : "Self-attention: ") << t_.n_q() << " query tokens ("
         << join(t_.tokens) << ")";
    if (t_.cross_attention) out_ << " over " << t_.n_kv() << " context tokens (" << join(t_.context_tokens) << ")";
    out_ << '\n';
    out_ << to_upper(to_string(a.variant)) << ", " << a.heads << (a.heads == 1 ? " head" : " heads") << " of dimension "
         << a.head_dim << ", mask " << to_string(a.mask);
    if (a.mask == MaskKind::SlidingWindow) out_ << " (window " << a.window << ")";
    out_ << ", kernel " << to_string(a.kernel) << ", ";
    if (a.scale) out_ << "scores scaled by 1/sqrt(" << a.head_dim << ") = " << format_number(t_.scale_factor, 6);
    else out_ << "scores not scaled";
    out_ << (t_.has_output_projection() ? ", with W_O" : ", no W_O") << "\n\n";
  }

  void head(const HeadTrace& h) {
    const int d = t_.attention.head_dim;
    const std::string n = std::to_string(h.head);
    const bool many = t_.attention.heads > 1;
    out_ << "=== Head " << n << " ===\n\n";
    const std::string cols = many ? "[:, " + std::to_string(h.head * d) + ":" + std::to_string((h.head + 1) * d) + "]" : "";
    if (many) {
      matrix("q = Q" + cols, h.q, t_.tokens, {});
      matrix("k = K" + cols, h.k, t_.context_tokens, {});
      matrix("v = V" + cols, h.v, t_.context_tokens, {});
    }
    matrix("scores = q k^T  (rows: queries, columns: keys)", h.scores, t_.tokens, t_.context_tokens);
    if (t_.attention.scale)
      matrix("scaled = scores / sqrt(" + std::to_string(d) + ")", h.scaled, t_.tokens, t_.context_tokens);
    else
      matrix("scaled = scores  (scale off)", h.scaled, t_.tokens, t_.context_tokens);
    matrix("mask  (1 = may attend, 0 = hidden)", h.mask, t_.tokens, t_.context_tokens, 0);
    const bool softmax = t_.attention.kernel == Kernel::Softmax;
    matrix(softmax ? "masked = scaled, hidden entries set to -inf" : "masked = kappa(scaled) = scaled, hidden entries set to 0",
           h.masked, t_.tokens, t_.context_tokens);
    matrix(softmax ? "weights = softmax(masked), row by row" : "weights = masked / Z, row by row", h.weights, t_.tokens,
           t_.context_tokens);
    row_statistics(h, softmax);
    matrix("output = weights v", h.output, t_.tokens, {});
  }

  void row_statistics(const HeadTrace& h, bool softmax) {
    Matrix stats(t_.n_q(), softmax ? 3 : 2);
    for (int i = 0; i < t_.n_q(); ++i) {
      if (softmax) stats.row(i) << h.row_max(i), h.row_sum(i), h.entropy(i);
      else stats.row(i) << h.row_sum(i), h.entropy(i);
    }
    matrix(softmax ? "per row: shift m = max visible score, Z = sum exp(masked - m), entropy of the weights (nats)"
                   : "per row: Z = sum of masked (the normaliser), entropy of the positive weights (nats)",
           stats, t_.tokens, softmax ? std::vector<std::string>{"m", "Z", "entropy"} : std::vector<std::string>{"Z", "entropy"});
    for (int i = 0; i < t_.n_q(); ++i) {
      if (h.row_status[i] == RowStatus::AllMasked)
        out_ << "  note: every key is hidden from '" << t_.tokens[i] << "': its weights and output are 0\n";
      if (h.row_status[i] == RowStatus::ZeroSum)
        out_ << "  note: Z is 0 for '" << t_.tokens[i] << "', so its row cannot be normalised: weights and output are 0\n";
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
    for (const auto& item : items) s += (s.empty() ? "" : " ") + item;
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

}  // namespace

int trace_command(std::span<const std::string> words, std::ostream& out, std::ostream& err) {
  const TraceOptions o = parse_trace_args(words);
  Scenario s;
  try {
    s = load_scenario_file(o.scenario);
  } catch (const ScenarioError& e) {
    err << "attention-lab: " << o.scenario << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  o.overrides.apply(s, err);
  Trace t;
  try {
    t = compute_trace(s);
  } catch (const ScenarioError& e) {
    err << "attention-lab: " << o.scenario << " with the given options: " << e.what() << '\n';
    return kExitBadInput;
  }
  if (o.json) out << trace_to_json(t).dump() << '\n';
  else TracePrinter(out, t, o.precision).print();
  return kExitOk;
}

}  // namespace attn::cli
