#include "ui/logic/hover_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/positions.h"
#include "core/text_format.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/glyphs.h"

namespace attn::ui {
namespace {

using namespace glyph;

bool in_range(int i, Eigen::Index n) { return i >= 0 && i < n; }

// A matrix's numbers as its cells write them (matrix_decimals: 0.120 and -1.0 where the cells say so), so a
// sentence and the cell it quotes agree; a matrix too big for numbers in its cells keeps the short form.
struct Cells {
  int decimals = -1;
  std::string operator()(double x) const {
    return decimals < 0 || !std::isfinite(x) ? short_number(x) : format_fixed(x, decimals);
  }
  // As a factor or summand: negatives in parentheses.
  std::string term(double x) const {
    const std::string s = (*this)(x);
    return s.front() == '-' ? "(" + s + ")" : s;
  }
};
Cells cells_of(const Matrix& m, const Matrix* visible = nullptr) {
  return {shows_numbers(m) ? matrix_decimals(m, visible) : -1};
}

std::string product(const Cells& a_cells, double a, const Cells& b_cells, double b) {
  return a_cells.term(a) + kDot + b_cells.term(b);
}

// "a + b + c + d + e + f + … (6 more)": the concatenation is H·d wide, so its sums get long fast.
std::string join_first_six(const std::vector<std::string>& terms) {
  if (terms.size() <= 8) return join_sum(terms);
  std::string s;
  for (std::size_t k = 0; k < 6; ++k) s += terms[k] + " + ";
  return s + kEllipsis + " (" + std::to_string(terms.size() - 6) + " more)";
}

const std::string& query_name(const Trace& t, int i) { return t.tokens[static_cast<std::size_t>(i)]; }
const std::string& key_name(const Trace& t, int j) { return t.context_tokens[static_cast<std::size_t>(j)]; }
std::string pair_name(const Trace& t, int i, int j) { return query_name(t, i) + " " + kArrow + " " + key_name(t, j); }

bool hidden(const HeadTrace& h, int i, int j) { return (*h.mask)(i, j) == 0.0; }

int visible_count(const HeadTrace& h, int i) { return static_cast<int>((h.mask->row(i).array() != 0.0).count()); }

// Why key j is not in S_i, in the words of the mask the user picked.
std::string hidden_reason(const Trace& t, int i, int j) {
  const std::string& q = query_name(t, i);
  const std::string& k = key_name(t, j);
  switch (t.attention.mask) {
    case MaskKind::Causal: return "causal: " + k + " comes after " + q;
    case MaskKind::SlidingWindow:
      if (j > i) return "sliding window: " + k + " comes after " + q;
      return "sliding window: " + k + " is outside the last " + plural(t.attention.window, "token") + " up to " + q;
    case MaskKind::Custom: return "custom: set to 0 in the custom mask";
    case MaskKind::None: break;
  }
  return "no mask";
}

std::string explain_input(const Trace& t, int i, int c) {
  return "x_" + query_name(t, i) + "[" + std::to_string(c) + "] = " + cells_of(t.x)(t.x(i, c)) +
         " (an embedding entry: an input you can edit)";
}

std::string explain_score(const Trace& t, const HeadTrace& h, int i, int j) {
  const std::string& q = query_name(t, i);
  const std::string& k = key_name(t, j);
  // With rope the scores read the turned vectors.
  const bool rope = h.q_rope.size() > 0;
  const Matrix &qs = rope ? h.q_rope : h.q, &ks = rope ? h.k_rope : h.k;
  std::vector<std::string> terms;
  const Cells q_cells = cells_of(qs), k_cells = cells_of(ks);
  for (Eigen::Index m = 0; m < qs.cols(); ++m) terms.push_back(product(q_cells, qs(i, m), k_cells, ks(j, m)));
  const std::string of = rope ? (decoupled_rope(t.attention) ? "[q | q_r]_" : "RoPE(q)_") : "q_";
  const std::string key_of = rope ? (decoupled_rope(t.attention) ? "[k | k_r]_" : "RoPE(k)_") : "k_";
  return "score(" + q + kArrow + k + ") = " + of + q + " " + kDot + " " + key_of + k + " = " + join_sum(terms) + " = " +
         cells_of(h.scores())(h.scores(i, j));
}

std::string explain_scale(const Trace& t, const HeadTrace& h, int i, int j) {
  const std::string score = cells_of(h.scores())(h.scores(i, j));
  if (!t.attention.scale) return "scale is off: " + score + " stays " + score;
  return score + " / sqrt(" + std::to_string(score_dim(t.attention)) + ") = " + cells_of(h.scaled())(h.scaled(i, j));
}

// I[i, j] as the sum over the indexer's heads, and where j ranks among the keys query i sees.
std::string explain_selection(const Trace& t, const HeadTrace& h, int i, int j) {
  const IndexerTrace& x = *t.indexer;
  if (!std::isfinite(x.scores(i, j)))
    return pair_name(t, i, j) + ": hidden by the mask (" + hidden_reason(t, i, j) + "), so never a candidate";
  const Eigen::Index d = x.k.cols();
  const Cells w_cells = cells_of(x.w), scores = cells_of(x.scores, &*h.mask);
  std::vector<std::string> terms;
  for (Eigen::Index g = 0; g < x.w.cols(); ++g) {
    const double dot = x.q.row(i).segment(g * d, d).dot(x.k.row(j));
    terms.push_back(w_cells.term(x.w(i, g)) + kDot + "ReLU(" + short_number(dot) + ")");
  }
  int rank = 1, visible = 0;
  for (Eigen::Index c = 0; c < x.scores.cols(); ++c) {
    if (!std::isfinite(x.scores(i, c))) continue;
    ++visible;
    if (x.scores(i, c) > x.scores(i, j) || (x.scores(i, c) == x.scores(i, j) && c < j)) ++rank;
  }
  const int k = t.attention.sparse->top_k;
  return "I(" + pair_name(t, i, j) + ") = " + join_sum(terms) + " = " + scores(x.scores(i, j)) + ": rank " +
         std::to_string(rank) + " of " + std::to_string(visible) + " visible keys, so " +
         (x.selected(i, j) != 0.0 ? "selected (top " + std::to_string(k) + ")"
                                  : "left out (kept: the top " + std::to_string(k) + ")");
}

std::string explain_mask(const Trace& t, const HeadTrace& h, int i, int j) {
  if (!hidden(h, i, j))
    return pair_name(t, i, j) + ": visible (mask 1), " + cells_of(h.scaled())(h.scaled(i, j)) + " passes through";
  const char* becomes = t.attention.kernel == Kernel::Softmax ? "-inf" : "0";
  return pair_name(t, i, j) + ": hidden (mask 0, " + hidden_reason(t, i, j) + "), so " + becomes;
}

// The visible entries of row i of `masked`, each written by `write`.
template <typename Write>
std::vector<std::string> visible_terms(const HeadTrace& h, int i, Write write) {
  std::vector<std::string> terms;
  for (Eigen::Index j = 0; j < h.scores().cols(); ++j)
    if (!hidden(h, i, static_cast<int>(j))) terms.push_back(write(h.masked(i, j)));
  return terms;
}

std::string zero_z_text(double z) {
  const std::string shown = short_number(z);
  return shown == "0" ? "0" : shown + " (0 up to rounding)";
}

std::string explain_weight(const Trace& t, const HeadTrace& h, int i, int j) {
  const bool linear = t.attention.kernel == Kernel::Linear;
  const std::string kernel = linear ? "linear: " : "softmax: ";
  const std::string& q = query_name(t, i);
  const RowStatus status = h.row_status[static_cast<std::size_t>(i)];
  if (status == RowStatus::AllMasked)
    return kernel + "every key is hidden from " + q + ", so all its weights are 0 and its output is 0";
  if (hidden(h, i, j)) return kernel + pair_name(t, i, j) + " is hidden, so its weight is exactly 0";
  const Cells masked = cells_of(h.masked(), &*h.mask), weights = cells_of(h.weights(), &*h.mask);
  if (!linear) {
    const auto terms = visible_terms(h, i, [&](double s) { return "e^" + masked(s); });
    return kernel + "e^" + masked(h.masked(i, j)) + " / (" + join_sum(terms) + ") = " + weights(h.weights(i, j));
  }
  const auto terms = visible_terms(h, i, [&](double s) { return masked.term(s); });
  if (status == RowStatus::ZeroSum)
    return kernel + "Z = " + join_sum(terms) + " = " + zero_z_text(h.row_sum(i)) + " for " + q +
           ": nothing to divide by, so the row is zeroed (weights 0, output 0)";
  std::string s = kernel + masked.term(h.masked(i, j)) + " / (" + join_sum(terms) + ") = " + weights(h.weights(i, j));
  if (status == RowStatus::Signed)
    s += h.weights(i, j) < 0.0 ? " (negative: this row mixes signs, so it is not a probability distribution)"
                               : " (other weights in this row are negative: not a probability distribution)";
  return s;
}

std::string explain_head_output(const Trace& t, const HeadTrace& h, int i, int c) {
  const std::string& q = query_name(t, i);
  const std::string lhs = "out_" + q + "[" + std::to_string(c) + "]";
  const RowStatus status = h.row_status[static_cast<std::size_t>(i)];
  if (status == RowStatus::AllMasked)
    return lhs + " = 0: every key is hidden from " + q + ", so its weights and output are 0";
  if (status == RowStatus::ZeroSum) return lhs + " = 0: Z is 0 for " + q + ", so its weights and output are 0";
  std::vector<std::string> terms;
  int skipped = 0;
  const Cells weights = cells_of(h.weights(), &*h.mask), v = cells_of(h.v);
  for (Eigen::Index j = 0; j < h.weights().cols(); ++j) {
    if (hidden(h, i, static_cast<int>(j))) ++skipped;
    else terms.push_back(product(weights, h.weights(i, j), v, h.v(j, c)));
  }
  std::string s = lhs + " = " + kSigma + "_j w(" + q + kArrow + "j)" + kDot + "v_j[" + std::to_string(c) +
                  "] = " + join_sum(terms) + " = " + cells_of(h.output)(h.output(i, c));
  if (skipped > 0) s += " (" + plural(skipped, "hidden key") + " skipped: weight 0)";
  return s;
}

// Concat shows concat · W_O column by column; Output shows the same number as a sum of per-head contributions.
std::string explain_final_output(const Trace& t, int i, int c, bool sum_over_heads) {
  if (!in_range(i, t.output.rows()) || !in_range(c, t.output.cols())) return "";
  const std::string& q = query_name(t, i);
  const std::string lhs = "output_" + q + "[" + std::to_string(c) + "]";
  const std::string result = " = " + cells_of(t.output)(t.output(i, c));
  if (!t.has_output_projection()) {
    const int d = t.attention.head_dim;
    if (d <= 0) return "";
    return "no W_O: " + lhs + " = head " + std::to_string(c / d) + "'s output, column " + std::to_string(c % d) +
           result;
  }
  std::vector<std::string> terms;
  // With output_bias, b_O is added after W_O: the sum's last term.
  const SharedMatrix& b_O = t.weights.b_O;
  const std::string bias_name = b_O ? " + b_O[" + std::to_string(c) + "]" : "";
  const std::string bias_term = b_O ? " + " + cells_of(*b_O).term((*b_O)(0, c)) : "";
  if (sum_over_heads) {
    for (const HeadTrace& h : t.heads) terms.push_back(cells_of(h.contribution()).term(h.contribution(i, c)));
    return lhs + " = " + kSigma + "_h contribution_h" + bias_name + " = " + join_sum(terms) + bias_term + result;
  }
  const Cells concat = cells_of(t.concat), W_O = cells_of(t.W_O());
  for (Eigen::Index m = 0; m < t.concat.cols(); ++m)
    terms.push_back(product(concat, t.concat(i, m), W_O, t.W_O()(m, c)));
  return lhs + " = concat_" + q + " " + kDot + " W_O[:, " + std::to_string(c) + "]" + bias_name + " = " +
         join_first_six(terms) + bias_term + result;
}

// "KV head 1, shared by query heads 2 and 3": the sharing is what GQA and MQA are about.
std::string kv_sharing_note(const Trace& t, int g) {
  const int H = t.attention.heads;
  const int group = H / kv_head_count(t.attention);
  if (group == H) return "the one KV head, shared by all " + plural(H, "query head");
  const int first = g * group, last = first + group - 1;
  const std::string kv = "KV head " + std::to_string(g);
  if (group == 1) return kv + ", used by query head " + std::to_string(first) + " only";
  const std::string joiner = group == 2 ? " and " : " to ";
  return kv + ", shared by query heads " + std::to_string(first) + joiner + std::to_string(last);
}

struct ProjectionSource {
  const Matrix* input = nullptr;         // the rows multiplied: x, x_kv, a latent
  std::string input_name;                // "x", "latent", "query_latent"
  const SharedMatrix* weight = nullptr;  // the matrix whose column is taken
  std::string weight_name;
  int weight_col = 0;
  const Matrix* result = nullptr;  // q, k or v of the head
  const std::vector<std::string>* names = nullptr;
};

std::optional<ProjectionSource> projection_source(const Trace& t, char which, const HeadTrace& h, int col) {
  const Weights& w = t.weights;
  const int d = t.attention.head_dim;
  const bool mla = t.attention.variant == Variant::Mla;
  ProjectionSource p;
  if (which == 'q') {
    const bool compressed = mla && t.query_latent.size() > 0;
    p = {compressed ? &t.query_latent : &t.input(),
         compressed               ? "query_latent"
         : t.positions.size() > 0 ? "(x + p)"
                                  : "x",
         compressed ? &w.W_UQ : &w.W_Q,
         compressed ? "W_UQ" : "W_Q",
         h.head * d + col,
         &h.q,
         &t.tokens};
  } else if (which == 'k' || which == 'v') {
    const bool key = which == 'k';
    // mla expands one key/value head per query head from the latent; the others read their KV head's columns.
    const int owner = mla ? h.head : h.kv_head;
    p = {mla ? &t.latent : &t.input_kv(),
         mla                      ? "latent"
         : t.positions.size() > 0 ? "(x + p)"
                                  : "x",
         mla ? (key ? &w.W_UK : &w.W_UV) : (key ? &w.W_K : &w.W_V),
         mla ? (key ? "W_UK" : "W_UV") : (key ? "W_K" : "W_V"),
         owner * d + col,
         key ? &h.k : &h.v,
         &t.context_tokens};
  } else if (which == 'c' && mla) {  // the cached latent row: c_j = x_j W_DKV
    p = {&t.input_kv(), t.positions.size() > 0 ? "(x + p)" : "x", &w.W_DKV, "W_DKV", col, &t.latent, &t.context_tokens};
  } else {
    return std::nullopt;
  }
  if (!p.weight->has_value()) return std::nullopt;
  return p;
}

}  // namespace

std::string join_sum(const std::vector<std::string>& terms) {
  if (terms.empty()) return "0";
  const std::size_t n = terms.size();
  std::string s;
  for (std::size_t k = 0; k < n; ++k) {
    if (n > 8 && k >= 3 && k < n - 2) {
      if (k == 3) s += " + " + kEllipsis;
      continue;
    }
    if (k > 0) s += " + ";
    s += terms[k];
  }
  return s;
}

std::string explain_projection(const Trace& t, char which, int head, int row, int col) {
  if (!in_range(head, static_cast<Eigen::Index>(t.heads.size())) || col < 0) return "";
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  const auto p = projection_source(t, which, h, col);
  if (!p || !in_range(row, p->result->rows()) || !in_range(row, p->input->rows()) || !in_range(col, p->result->cols()))
    return "";
  const Matrix& W = **p->weight;
  std::vector<std::string> terms;
  // The step shows the head's slice of the weight (its columns of this projection), at the slice's decimals.
  const Cells input = cells_of(*p->input), weight = cells_of(W.middleCols(p->weight_col - col, p->result->cols()));
  for (Eigen::Index m = 0; m < p->input->cols(); ++m)
    terms.push_back(product(input, (*p->input)(row, m), weight, W(m, p->weight_col)));
  // Q, K and V with qkv_bias: the bias's entry is the sum's last term.
  const SharedMatrix* bias = which == 'q'   ? &t.weights.b_Q
                             : which == 'k' ? &t.weights.b_K
                             : which == 'v' ? &t.weights.b_V
                                            : nullptr;
  const bool biased = bias && *bias;
  std::string bias_name;
  if (biased) {
    bias_name =
        " + b_" + std::string(1, static_cast<char>(std::toupper(which))) + "[" + std::to_string(p->weight_col) + "]";
    terms.push_back(cells_of(**bias).term((**bias)(0, p->weight_col)));
  }
  const std::string& name = (*p->names)[static_cast<std::size_t>(row)];
  std::string s = std::string(1, which) + "_" + name + "[" + std::to_string(col) + "] = " + p->input_name + "_" + name +
                  " " + kDot + " " + p->weight_name + "[:, " + std::to_string(p->weight_col) + "]" + bias_name + " = " +
                  join_sum(terms) + " = " + cells_of(*p->result)((*p->result)(row, col));
  const Variant v = t.attention.variant;
  if (which != 'q' && (v == Variant::Gqa || v == Variant::Mqa)) s += " (" + kv_sharing_note(t, h.kv_head) + ")";
  return s;
}

std::string explain_position(const Trace& t, bool keys, int row, int col) {
  const Matrix& x = keys ? t.x_kv : t.x;
  if (t.positions.size() == 0 || !in_range(row, x.rows()) || !in_range(col, x.cols())) return "";
  const Matrix& sum = keys ? t.input_kv() : t.input();
  const std::string& name = keys ? key_name(t, row) : query_name(t, row);
  const Cells p_cells = cells_of(t.positions);
  std::string p = p_cells(t.positions(row, col));
  const std::string at = std::to_string(first_position(t.attention) + row);
  if (t.attention.positions == Positions::Sinusoidal) {
    const int pair = col / 2;
    p = std::string(col % 2 == 0 ? "sin" : "cos") + "(" + at + " / " + short_number(t.attention.rope_base) + "^(" +
        std::to_string(2 * pair) + "/" + std::to_string(x.cols()) + ")) = " + p;
  } else {
    p = "W_P[" + at + "][" + std::to_string(col) + "] = " + p;
  }
  return name + " at position " + at + ": x[" + std::to_string(col) + "] + p[" + std::to_string(col) +
         "] = " + cells_of(x).term(x(row, col)) + " + " + p_cells.term(t.positions(row, col)) + " = " +
         cells_of(sum)(sum(row, col)) + ", with p = " + p;
}

std::string explain_rope_angle(const Trace& t, bool keys, int row, int pair) {
  const int d = rope_width(t.attention);
  if (!in_range(row, keys ? t.n_kv() : t.n_q()) || !in_range(pair, d / 2)) return "";
  const int p = first_position(t.attention) + row;
  const RopeSpec spec = rope_spec(t.attention);
  const double angle = rope_angle(spec, p, pair);
  const auto [a, b] = rope_dims(spec, pair);
  const std::string frequency =
      short_number(t.attention.rope_base) + "^(-" + std::to_string(2 * pair) + "/" + std::to_string(d) + ")";
  return "position " + std::to_string(p) + ", dims (" + std::to_string(a) + ", " + std::to_string(b) +
         "): angle = " + std::to_string(p) + " " + kDot + " " +
         (spec.scaling ? "llama3-scaled " + frequency + " = " + std::to_string(p) + " " + kDot + " " +
                             short_number(rope_frequency(spec, pair))
                       : frequency) +
         " = " + short_number(angle) + " rad (" + short_number(angle * 180 / std::acos(-1.0)) + "\u00B0)";
}

std::string explain_rope(const Trace& t, int head, bool keys, int row, int col) {
  if (t.attention.positions != Positions::Rope || !in_range(head, static_cast<Eigen::Index>(t.heads.size()))) return "";
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  const Matrix& turned = keys ? h.k_rope : h.q_rope;
  if (!in_range(row, turned.rows()) || !in_range(col, turned.cols())) return "";
  const std::string& name = keys ? key_name(t, row) : query_name(t, row);
  const std::string letter = keys ? "k" : "q";
  const Cells out = cells_of(turned);
  const int d = t.attention.head_dim;
  if (decoupled_rope(t.attention)) {
    if (col < d)
      return "[" + letter + " | " + letter + "_r]_" + name + "[" + std::to_string(col) + "] = " + letter + "_" + name +
             "[" + std::to_string(col) + "] = " + out(turned(row, col)) +
             ": the content part, never turned, so W_UK can still be absorbed";
    return "[" + letter + " | " + letter + "_r]_" + name + "[" + std::to_string(col) + "] = " + letter + "_r_" + name +
           "[" + std::to_string(col - d) + "] = " + out(turned(row, col)) + ", turned by " +
           explain_rope_angle(t, keys, row, rope_pair_of(rope_spec(t.attention), col - d));
  }
  const Matrix& plain = keys ? h.k : h.q;
  // The pair this column turns in, and whether it is the pair's first dim (x cos - y sin) or its second.
  const RopeSpec spec = rope_spec(t.attention);
  const int pair = rope_pair_of(spec, col);
  const auto [a, b] = rope_dims(spec, pair);
  const double angle = rope_angle(spec, first_position(t.attention) + row, pair);
  const Cells in = cells_of(plain);
  // The turn's cos and sin as a pair of activations: one count of decimals for both (-0.990 beside 0.141).
  const double cv = std::cos(angle), sv = std::sin(angle);
  const bool whole = cv == std::round(cv) && sv == std::round(sv);
  const int turn_decimals = activation_decimals(std::max(std::abs(cv), std::abs(sv)), whole);
  const std::string c = format_fixed(cv, turn_decimals), s = format_fixed(sv, turn_decimals);
  // As factors, negatives in parentheses like every product here: "(-0.42)·(-0.99)".
  const std::string cf = c.front() == '-' ? "(" + c + ")" : c, sf = s.front() == '-' ? "(" + s + ")" : s;
  const std::string formula = col == a
                                  ? in.term(plain(row, a)) + kDot + cf + " - " + in.term(plain(row, b)) + kDot + sf
                                  : in.term(plain(row, a)) + kDot + sf + " + " + in.term(plain(row, b)) + kDot + cf;
  return "RoPE(" + letter + ")_" + name + "[" + std::to_string(col) + "] = " + formula + " = " + out(turned(row, col)) +
         " (dims " + std::to_string(a) + ", " + std::to_string(b) + " turned by " + short_number(angle) +
         " rad: cos = " + c + ", sin = " + s + ")";
}

std::string explain_cell(const Trace& t, Step step, int head, int row, int col) {
  step = applying_step(step, t.attention);
  switch (step) {
    case Step::Inputs: return in_range(row, t.x.rows()) && in_range(col, t.x.cols()) ? explain_input(t, row, col) : "";
    case Step::Positions: return explain_position(t, false, row, col);
    case Step::Rope: return explain_rope(t, head, false, row, col);
    case Step::Projections: return explain_projection(t, 'q', head, row, col);
    case Step::Concat: return explain_final_output(t, row, col, false);
    case Step::Output: return explain_final_output(t, row, col, true);
    default: break;
  }
  if (!in_range(head, static_cast<Eigen::Index>(t.heads.size()))) return "";
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  if (step == Step::WeightedSum || step == Step::HeadOutputs) {
    if (!in_range(row, h.output.rows()) || !in_range(col, h.output.cols())) return "";
    // Side by side, the head a number belongs to is not obvious; within one head's view it is.
    const std::string prefix =
        step == Step::HeadOutputs && t.heads.size() > 1 ? "head " + std::to_string(head) + ": " : "";
    return prefix + explain_head_output(t, h, row, col);
  }
  if (!in_range(row, h.scores().rows()) || !in_range(col, h.scores().cols())) return "";
  switch (step) {
    case Step::Scores: return explain_score(t, h, row, col);
    case Step::Scale: return explain_scale(t, h, row, col);
    case Step::Mask: return explain_mask(t, h, row, col);
    case Step::Selection: return explain_selection(t, h, row, col);
    case Step::Softmax: return explain_weight(t, h, row, col);
    default: return "";
  }
}

Agreement agreement(double largest_difference, const std::string& claim, const std::string& reason) {
  // A rounding-sized difference is written as such (4.0e-16), not rounded to a 0 it is not.
  const std::string d = largest_difference == 0.0 || largest_difference >= 1e-3
                            ? short_number(largest_difference)
                            : scientific_text(largest_difference, 2);
  if (largest_difference <= kAgreementTolerance)
    return {"\u2714 " + claim + " (largest difference " + d + ")" + reason, true};
  return {"\u2718 Not so: largest difference " + d + ", more than rounding (10^-9). Expected: " + claim, false};
}

std::string explain_row_summary(const Trace& t, int head, int row) {
  if (!in_range(head, static_cast<Eigen::Index>(t.heads.size()))) return "";
  const HeadTrace& h = t.heads[static_cast<std::size_t>(head)];
  if (!in_range(row, h.weights().rows())) return "";
  const std::string& q = query_name(t, row);
  // At three decimals, as the lesson text quotes them: an entropy of 0.380, not 0.38; whole numbers as such.
  const auto summary_number = [](double x) {
    return std::abs(x - std::round(x)) < 1e-9 ? short_number(x) : format_fixed(x, 3);
  };
  const std::string z = summary_number(h.row_sum(row));
  switch (h.row_status[static_cast<std::size_t>(row)]) {
    case RowStatus::AllMasked:
      return "every key is hidden from " + q + ": nothing to normalise, so its weights and output are 0";
    case RowStatus::ZeroSum:
      return "Z = " + zero_z_text(h.row_sum(row)) + ": the visible scores of " + q +
             " cancel out, so there is nothing to divide by; its weights and output are set to 0";
    case RowStatus::Signed:
      return "Z = " + z +
             ", the sum of the visible scores, but some weights are negative: not a probability distribution, so no "
             "entropy";
    case RowStatus::Ok: break;
  }
  const int n = visible_count(h, row);
  const std::string entropy = "entropy " + summary_number(h.entropy(row)) + " nats of a maximum ln(" +
                              std::to_string(n) + ") = " + summary_number(std::log(static_cast<double>(n)));
  if (t.attention.kernel == Kernel::Linear)
    return "Z = " + z + ", the sum of the visible scores (each weight is a score divided by Z), " + entropy;
  // The largest score as its cell shows it (cells_of: the matrix's decimals, or the short form of a matrix too
  // big for numbers in its cells).
  const std::string largest = cells_of(h.masked(), &*h.mask)(h.row_max(row));
  return "Z = " + z + " (after subtracting the largest score " + largest + "), " + entropy;
}

}  // namespace attn::ui
