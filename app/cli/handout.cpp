#include "app/cli/handout.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <functional>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "app/cli/matrix_text.h"
#include "core/text_format.h"
#include "ui/logic/glyphs.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/step_text.h"
#include "ui/logic/steps.h"

namespace attn::cli {
namespace {

using ui::Step;
namespace glyph = ui::glyph;

// The handout is built once as format-neutral blocks and rendered twice, so Markdown and LaTeX cannot drift apart.
struct Title {
  std::string name;  // the user's text: escaped like a token label
};
struct Heading {
  int level;  // 2 = a step or a head, 3 = a step inside a head or a part of a step
  std::string text;
};
struct Paragraph {
  std::string text;
};
struct Formula {
  std::string text;
};
// Only the top-left corner that is shown is kept: a 4096-token trace must not copy its N x N matrices.
struct Table {
  std::string caption;
  Matrix shown;
  Eigen::Index rows_total = 0, cols_total = 0;
  std::vector<std::string> rows, cols;  // labels of the shown rows and columns
};
using Block = std::variant<Title, Heading, Paragraph, Formula, Table>;

std::vector<std::string> first_labels(const std::vector<std::string>& labels, Eigen::Index total, Eigen::Index shown) {
  std::vector<std::string> out;
  for (Eigen::Index i = 0; i < shown; ++i)
    out.push_back(static_cast<Eigen::Index>(labels.size()) == total ? shorten_label(labels[static_cast<std::size_t>(i)])
                                                                    : std::to_string(i));
  return out;
}

Table make_table(std::string caption, const Matrix& m, const std::vector<std::string>& rows,
                 const std::vector<std::string>& cols) {
  const Eigen::Index r = std::min<Eigen::Index>(m.rows(), kHandoutMaxCells);
  const Eigen::Index c = std::min<Eigen::Index>(m.cols(), kHandoutMaxCells);
  return {std::move(caption), m.topLeftCorner(r, c),           m.rows(),
          m.cols(),           first_labels(rows, m.rows(), r), first_labels(cols, m.cols(), c)};
}

// Integers print bare ("8", not "8.0000") so the worked example reads as it does on paper.
std::string number_text(double x, int precision) {
  if (std::isnan(x)) return "n/a";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::abs(x) < 1e15 && x == std::round(x)) return std::to_string(static_cast<long long>(x));
  return format_number(x, precision);
}

// The explanations run to several sentences; a handout keeps the first of each part.
std::string first_sentence(const std::string& text) {
  const std::size_t end = text.find(". ");
  return end == std::string::npos ? text : text.substr(0, end + 1);
}

// A reason that opens with "If" is only the premise; its conclusion is the next sentence (scale's why).
std::string first_reason(const std::string& why) {
  const std::string first = first_sentence(why);
  if (!first.starts_with("If ") || first.size() == why.size()) return first;
  return first + " " + first_sentence(why.substr(first.size() + 1));
}

std::string names(const std::vector<std::string>& tokens) {
  std::string s;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i == static_cast<std::size_t>(kHandoutMaxCells)) return s + ", " + glyph::kEllipsis;
    s += (i > 0 ? ", " : "") + shorten_label(tokens[i]);
  }
  return s;
}

class HandoutBuilder {
 public:
  using Sink = std::function<void(const Block&)>;
  // Each block goes to `sink` as it is made: a handout holds one block at a time.
  HandoutBuilder(const Trace& t, int precision, Sink sink, const HeadDone& head_done)
      : t_(t), precision_(precision), sink_(std::move(sink)), head_done_(head_done) {}

  void build() {
    intro();
    section(Step::Inputs, 0, 2, true);
    inputs();
    if (ui::step_applies(Step::Positions, t_.attention)) {
      section(Step::Positions, 0, 2, true);
      table("P: the position rows added (row p for position p)", t_.positions, {}, {});
      table("X + P", t_.input(), t_.tokens, {});
      if (t_.cross_attention) table("X_kv + P", t_.input_kv(), t_.context_tokens, {});
    }
    section(Step::Projections, 0, 2, true);
    projections();
    heads();
    section(Step::HeadOutputs, 0, 2, true);
    section(Step::Concat, 0, 2, true);
    concat();
    section(Step::Output, 0, 2, true);
    output();
  }

 private:
  void add(const Block& b) { sink_(b); }
  void table(std::string caption, const Matrix& m, const std::vector<std::string>& rows,
             const std::vector<std::string>& cols) {
    add(make_table(std::move(caption), m, rows, cols));
  }
  int heads_count() const { return t_.attention.heads; }
  std::vector<std::string> head_cols() const { return head_column_labels("h", heads_count(), t_.attention.head_dim); }

  void intro() {
    add(Title{t_.name});
    add(Paragraph{sides() + " " + configuration()});
    std::string reading =
        "Rows and columns carry token labels where they stand for tokens; from scores to weights, rows are queries and "
        "columns are keys.";
    const int n = std::max(t_.n_q(), t_.n_kv());
    if (n > kHandoutMaxCells)
      reading += " With " + std::to_string(n) + " tokens, tables show only their first " +
                 std::to_string(kHandoutMaxCells) + " rows and columns.";
    add(Paragraph{reading});
  }

  std::string sides() const {
    if (!t_.cross_attention) return "Self-attention over " + plural(t_.n_q(), "token") + ": " + names(t_.tokens) + ".";
    return "Cross-attention: " + plural(t_.n_q(), "query token") + " (" + names(t_.tokens) + ") read " +
           plural(t_.n_kv(), "context token") + " (" + names(t_.context_tokens) + ").";
  }

  std::string configuration() const {
    const AttentionConfig& a = t_.attention;
    std::string s = "Configuration: variant " + upper(to_string(a.variant)) + ", " + plural(a.heads, "head");
    const int g = kv_head_count(a);
    if (a.variant == Variant::Gqa || a.variant == Variant::Mqa) s += " sharing " + plural(g, "KV head");
    s += ", head_dim " + std::to_string(a.head_dim);
    if (a.variant == Variant::Mla) s += ", latent_dim " + std::to_string(a.latent_dim);
    if (a.query_latent_dim > 0) s += ", query_latent_dim " + std::to_string(a.query_latent_dim);
    s += ", mask " + std::string(to_string(a.mask));
    if (a.mask == MaskKind::SlidingWindow) s += " (window " + std::to_string(a.window) + ")";
    if (a.positions != Positions::None) s += ", " + std::string(to_string(a.positions)) + " positions";
    if (decoupled_rope(a)) s += " (decoupled, rope_dim " + std::to_string(a.rope_dim) + ")";
    if (a.sparse)
      s += ", sparse: each query keeps the top " + std::to_string(a.sparse->top_k) + " keys of an indexer with " +
           plural(a.sparse->indexer_heads, "head") + " of width " + std::to_string(a.sparse->indexer_dim);
    s += a.scale ? ", scale 1/" + glyph::kRoot + std::to_string(score_dim(a)) + " = " +
                       number_text(t_.scale_factor, precision_)
                 : std::string(", scale off");
    s += ", kernel " + std::string(to_string(a.kernel));
    return s + (t_.has_output_projection() ? ", with W_O." : ", no W_O.");
  }

  // The step's heading, its formula with the live shapes, and (once per step) what it does and why, as the app says it.
  void section(Step step, int head, int level, bool explain) {
    const ui::StepText text = ui::explain_step(t_, step, head);
    add(Heading{level, std::to_string(ui::step_index(step, t_.attention) + 1) + ". " + text.title});
    add(Formula{text.formula});
    if (explain) add(Paragraph{first_sentence(text.what) + " " + first_reason(text.why)});
  }

  void inputs() {
    table("X: input embeddings", t_.x, t_.tokens, {});
    if (t_.cross_attention) table("X_kv: context embeddings", t_.x_kv, t_.context_tokens, {});
  }

  void projections() {
    const auto hd = head_cols();
    const std::string x_kv = t_.cross_attention ? "X_kv" : "X";
    const Weights& w = t_.weights;
    if (t_.attention.variant != Variant::Mla) {
      const auto kv = head_column_labels("g", kv_head_count(t_.attention), t_.attention.head_dim);
      query_projection(hd);
      table("W_K", *w.W_K, {}, kv);
      if (w.b_K) table("b_K", *w.b_K, {}, kv);
      table("K = " + x_kv + (w.b_K ? " W_K + b_K" : " W_K"), t_.K, t_.context_tokens, kv);
      table("W_V", *w.W_V, {}, kv);
      if (w.b_V) table("b_V", *w.b_V, {}, kv);
      table("V = " + x_kv + (w.b_V ? " W_V + b_V" : " W_V"), t_.V, t_.context_tokens, kv);
      return;
    }
    table("W_DKV", *w.W_DKV, {}, {});
    table("latent = " + x_kv + " W_DKV (all the KV cache keeps per token)", t_.latent, t_.context_tokens, {});
    query_projection(hd);
    table("W_UK", *w.W_UK, {}, hd);
    table("K = latent W_UK", t_.K, t_.context_tokens, hd);
    table("W_UV", *w.W_UV, {}, hd);
    table("V = latent W_UV", t_.V, t_.context_tokens, hd);
  }

  void query_projection(const std::vector<std::string>& hd) {
    const Weights& w = t_.weights;
    if (w.W_DQ) {
      table("W_DQ", *w.W_DQ, {}, {});
      table("query_latent = X W_DQ", t_.query_latent, t_.tokens, {});
      table("W_UQ", *w.W_UQ, {}, hd);
      table("Q = query_latent W_UQ", t_.Q, t_.tokens, hd);
    } else {
      table("W_Q", *w.W_Q, {}, hd);
      if (w.b_Q) table("b_Q", *w.b_Q, {}, hd);
      table(w.b_Q ? "Q = X W_Q + b_Q" : "Q = X W_Q", t_.Q, t_.tokens, hd);
    }
  }

  // Steps 3-7 per head; with several heads, each under its own heading and explained only the first time.
  void heads() {
    const bool many = heads_count() > 1;
    for (const HeadTrace& h : t_.heads) {
      if (many)
        add(Heading{2, "Head " + std::to_string(h.head) + " (reads KV head " + std::to_string(h.kv_head) + ")"});
      for (Step s :
           {Step::Rope, Step::Scores, Step::Scale, Step::Mask, Step::Selection, Step::Softmax, Step::WeightedSum}) {
        if (!ui::step_applies(s, t_.attention)) continue;
        section(s, h.head, many ? 3 : 2, h.head == 0);
        head_tables(s, h);
      }
      if (head_done_) head_done_(h.head);
    }
  }

  void head_tables(Step step, const HeadTrace& h) {
    const auto& q = t_.tokens;
    const auto& k = t_.context_tokens;
    switch (step) {
      case Step::Rope:
        table(decoupled_rope(t_.attention) ? "[q | q_r]: content part beside the turned decoupled part" : "RoPE(q)",
              h.q_rope, q, {});
        table(decoupled_rope(t_.attention) ? "[k | k_r]" : "RoPE(k)", h.k_rope, k, {});
        break;
      case Step::Scores: table("scores", h.scores(), q, k); break;
      case Step::Selection:
        if (h.head > 0) break;  // one selection, shared by every head
        table("I: the indexer's scores (-inf where the mask hides)", t_.indexer->scores, q, k);
        table("selected: the top " + std::to_string(t_.attention.sparse->top_k) + " of each row", t_.indexer->selected,
              q, k);
        break;
      case Step::Scale: table("scaled", h.scaled(), q, k); break;
      case Step::Mask:
        if ((h.mask->array() == 0.0).any()) table("masked", h.masked(), q, k);
        else add(Paragraph{"Nothing is hidden: masked = scaled."});
        break;
      case Step::Softmax:
        table("weights", h.weights(), q, k);
        row_statistics(h);
        break;
      case Step::WeightedSum: table("output_" + std::to_string(h.head), h.output, q, {}); break;
      default: break;
    }
  }

  void row_statistics(const HeadTrace& h) {
    const bool softmax = t_.attention.kernel == Kernel::Softmax;
    const RowStatistics stats = cli::row_statistics(h, softmax);
    table(softmax ? "per row: shift m (largest visible score), Z = sum of exp(masked - m), entropy in nats"
                  : "per row: Z = sum of masked, entropy in nats",
          stats.values, t_.tokens, stats.columns);
    for (int i = 0; i < t_.n_q(); ++i)
      row_note(h.row_status[static_cast<std::size_t>(i)], t_.tokens[static_cast<std::size_t>(i)]);
  }

  void row_note(RowStatus status, const std::string& token) {
    const std::string q = "\"" + shorten_label(token) + "\"";
    switch (status) {
      case RowStatus::AllMasked:
        add(Paragraph{"Note: every key is hidden from " + q + ": its weights and output are 0."});
        break;
      case RowStatus::ZeroSum:
        add(Paragraph{"Note: Z is 0 for " + q + ", so its row cannot be normalised: weights and output are 0."});
        break;
      case RowStatus::Signed:
        add(Paragraph{"Note: some weights of " + q +
                      " are negative, so they are no distribution and have no entropy."});
        break;
      case RowStatus::Ok: break;
    }
  }

  // Without W_O, concat is the output: its table is shown once, under Output.
  void concat() {
    if (!t_.has_output_projection()) return;
    table("concat", t_.concat, t_.tokens, head_cols());
    table("W_O", t_.W_O(), head_cols(), {});
    if (t_.weights.b_O) table("b_O", *t_.weights.b_O, {}, {});
  }

  void output() {
    if (!t_.has_output_projection()) {
      table("output", t_.output, t_.tokens, head_cols());
      return;
    }
    table("output", t_.output, t_.tokens, {});
    contributions();
  }

  void contributions() {
    const int d = t_.attention.head_dim;
    add(Heading{3, "Contributions of the heads"});
    add(Paragraph{"W_O^(h) is the block of " + plural(d, "row") +
                  " of W_O that meets head h's columns, and output = " + glyph::kSigma + "_h output_h " + glyph::kDot +
                  " W_O^(h)" + (t_.weights.b_O ? " + b_O" : "") + ": these tables add up to the output above" +
                  (t_.weights.b_O ? ", with the bias b_O added to every row." : ".")});
    std::vector<std::string> terms;
    for (const HeadTrace& trace_head : t_.heads) {
      const HeadTrace h = fresh_head(trace_head);
      const std::string n = std::to_string(h.head);
      table("head " + n + ": output_" + n + " " + glyph::kDot + " W_O^(" + n + ")", h.contribution(), t_.tokens, {});
      terms.push_back(term(h.contribution(0, 0)));
    }
    add(Paragraph{"Check, column 0 of \"" + shorten_label(t_.tokens[0]) + "\": " + ui::join_sum(terms) + " = " +
                  number_text(t_.output(0, 0), precision_) + "."});
  }

  std::string term(double x) const {
    const std::string s = number_text(x, precision_);
    return x < 0 ? "(" + s + ")" : s;
  }

  const Trace& t_;
  int precision_;
  Sink sink_;
  const HeadDone& head_done_;
};

std::string shape_text(const Table& t, const std::string& times) {
  return std::to_string(t.rows_total) + times + std::to_string(t.cols_total);
}

// "first 16 rows and columns shown" when the table was cut, else "".
std::string cut_note(const Table& t) {
  const bool rows = t.shown.rows() < t.rows_total, cols = t.shown.cols() < t.cols_total;
  if (!rows && !cols) return "";
  const std::string what = rows && cols ? "rows and columns" : rows ? "rows" : "columns";
  return ", first " + std::to_string(kHandoutMaxCells) + " " + what + " shown";
}

// ---- Markdown ----

std::string backslash_escape(const std::string& s, std::string_view specials) {
  std::string out;
  for (char c : s) {
    if (specials.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Sentences quote token labels, the user's text: "<s>" must not vanish as an HTML tag. The explanations
// themselves use none of these characters, and W_O stays readable because an intraword _ is no markup.
std::string md_text(const std::string& s) { return backslash_escape(s, "\\`*<"); }
// In a table cell a label must not end the cell (|) or turn into emphasis or a link.
std::string md_label(const std::string& s) { return backslash_escape(s, "\\`*<|_[]"); }

std::string md_row(const std::string& label, const std::vector<std::string>& cells) {
  std::string s = "| " + label + " |";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

struct MarkdownWriter {
  std::string& out;
  int precision;

  void operator()(const Title& b) const { out += "# " + md_label(b.name) + "\n\n"; }
  void operator()(const Heading& b) const {
    out += std::string(static_cast<std::size_t>(b.level), '#') + " " + b.text + "\n\n";
  }
  void operator()(const Paragraph& b) const { out += md_text(b.text) + "\n\n"; }
  void operator()(const Formula& b) const { out += "`" + b.text + "`\n\n"; }
  void operator()(const Table& t) const {
    out += "**" + t.caption + "** (" + shape_text(t, glyph::kTimes) + cut_note(t) + ")\n\n";
    const bool more_cols = t.shown.cols() < t.cols_total;
    std::vector<std::string> header;
    for (const auto& c : t.cols) header.push_back(md_label(c));
    if (more_cols) header.push_back(glyph::kEllipsis);
    const std::vector<std::string> rule(header.size(), "---:");
    out += md_row("", header) + md_row("---", rule);
    for (Eigen::Index r = 0; r < t.shown.rows(); ++r) {
      std::vector<std::string> cells;
      for (Eigen::Index c = 0; c < t.shown.cols(); ++c) cells.push_back(number_text(t.shown(r, c), precision));
      if (more_cols) cells.push_back(glyph::kEllipsis);
      out += md_row(md_label(t.rows[static_cast<std::size_t>(r)]), cells);
    }
    if (t.shown.rows() < t.rows_total) out += md_row("\u22EE", std::vector<std::string>(header.size(), "\u22EE"));
    out += "\n";
  }
};

// ---- LaTeX ----

std::string latex_number(double x, int precision) {
  if (std::isnan(x)) return "n/a";
  if (std::isinf(x)) return x < 0 ? "$-\\infty$" : "$\\infty$";
  return "$" + number_text(x, precision) + "$";
}

std::string tex_row(const std::string& label, const std::vector<std::string>& cells) {
  // After the previous row's \\, a row starting with "[" ("[CLS]") or "*" would be read as \\[..] or \\*.
  std::string s = label.starts_with("[") || label.starts_with("*") ? "{}" + label : label;
  for (const auto& c : cells) s += " & " + c;
  return s + " \\\\\n";
}

// Only amsmath and booktabs, and margins set by hand rather than with geometry: a plain pdflatex is enough.
// 2 cm margins on A4 give a 17 cm line, room for a 16-column table in \\tiny.
const char* const kLatexPreamble =
    "\\documentclass[10pt,a4paper]{article}\n"
    "\\usepackage{amsmath}\n"
    "\\usepackage{booktabs}\n"
    "\\setlength{\\textwidth}{17cm}\n"
    "\\setlength{\\oddsidemargin}{-0.54cm}\n"
    "\\setlength{\\evensidemargin}{-0.54cm}\n"
    "\\setlength{\\textheight}{24cm}\n"
    "\\setlength{\\topmargin}{-1.5cm}\n"
    "\\setlength{\\parindent}{0pt}\n"
    "\\setlength{\\parskip}{4pt}\n"
    "\\setlength{\\tabcolsep}{4pt}\n"
    "\\begin{document}\n\n";

// Smaller type as tables widen, so that up to 16 columns of 4-decimal numbers stay on the page.
std::string table_size(Eigen::Index columns) {
  if (columns <= 8) return "";
  if (columns <= 12) return "\\footnotesize\n";
  return "\\tiny\\setlength{\\tabcolsep}{2pt}\n";
}

struct LatexWriter {
  std::string& out;
  int precision;

  void operator()(const Title& b) const {
    out += "\\begin{center}\n{\\LARGE " + latex_escape(b.name) + "}\n\\end{center}\n\n";
  }
  void operator()(const Heading& b) const {
    out += std::string(b.level == 2 ? "\\section*{" : "\\subsection*{") + latex_escape(b.text) + "}\n\n";
  }
  void operator()(const Paragraph& b) const { out += latex_escape(b.text) + "\n\n"; }
  void operator()(const Formula& b) const {
    out += "\\begin{flushleft}\\ttfamily\n" + latex_escape(b.text) + "\n\\end{flushleft}\n\n";
  }
  void operator()(const Table& t) const {
    const bool more_cols = t.shown.cols() < t.cols_total;
    const Eigen::Index columns = t.shown.cols() + (more_cols ? 1 : 0);
    out += "\\begin{center}\n\\textbf{" + latex_escape(t.caption) + "} ($" + shape_text(t, "\\times") + "$" +
           cut_note(t) + ")\\\\[2pt]\n";
    out += table_size(columns);
    out += "\\begin{tabular}{l" + std::string(static_cast<std::size_t>(columns), 'r') + "}\n\\toprule\n";
    std::vector<std::string> header;
    for (const auto& c : t.cols) header.push_back(latex_escape(c));
    if (more_cols) header.push_back("$\\cdots$");
    out += tex_row("", header) + "\\midrule\n";
    for (Eigen::Index r = 0; r < t.shown.rows(); ++r) {
      std::vector<std::string> cells;
      for (Eigen::Index c = 0; c < t.shown.cols(); ++c) cells.push_back(latex_number(t.shown(r, c), precision));
      if (more_cols) cells.push_back("$\\cdots$");
      out += tex_row(latex_escape(t.rows[static_cast<std::size_t>(r)]), cells);
    }
    if (t.shown.rows() < t.rows_total)
      out += tex_row("$\\vdots$", std::vector<std::string>(static_cast<std::size_t>(columns), "$\\vdots$"));
    out += "\\bottomrule\n\\end{tabular}\n\\end{center}\n\n";
  }
};

}  // namespace

void write_markdown(std::ostream& out, const Trace& t, int precision, const HeadDone& head_done) {
  // Blocks are separated by a blank line; the handout ends in one newline, not a blank line.
  bool first = true;
  std::string text;
  const MarkdownWriter write{text, precision};
  HandoutBuilder(
      t, precision,
      [&](const Block& b) {
        text.clear();
        std::visit(write, b);
        text.pop_back();
        out << (first ? "" : "\n") << text;
        first = false;
      },
      head_done)
      .build();
}

void write_latex(std::ostream& out, const Trace& t, int precision, const HeadDone& head_done) {
  out << kLatexPreamble;
  std::string text;
  const LatexWriter write{text, precision};
  HandoutBuilder(
      t, precision,
      [&](const Block& b) {
        text.clear();
        std::visit(write, b);
        out << text;
      },
      head_done)
      .build();
  out << "\\end{document}\n";
}

std::string trace_to_markdown(const Trace& t, int precision) {
  std::ostringstream out;
  write_markdown(out, t, precision);
  return out.str();
}

std::string trace_to_latex(const Trace& t, int precision) {
  std::ostringstream out;
  write_latex(out, t, precision);
  return out.str();
}

std::string latex_escape(std::string_view text) {
  static const std::array<std::pair<std::string_view, std::string_view>, 7> kGlyphs{{
      {glyph::kArrow, "$\\rightarrow$"},
      {glyph::kDot, "$\\cdot$"},
      {glyph::kEllipsis, "\\dots{}"},
      {glyph::kSigma, "$\\Sigma$"},
      {glyph::kTimes, "$\\times$"},
      {glyph::kRoot, "$\\surd$"},
      {glyph::kTransposed, "\\textsuperscript{T}"},
  }};
  std::string out;
  bool opening_quote = true;
  for (std::size_t i = 0; i < text.size();) {
    const auto match = std::find_if(kGlyphs.begin(), kGlyphs.end(),
                                    [&](const auto& g) { return text.substr(i).starts_with(g.first); });
    if (match != kGlyphs.end()) {
      out += match->second;
      i += match->first.size();
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      case '<': out += "\\textless{}"; break;
      case '>': out += "\\textgreater{}"; break;
      case '|': out += "\\textbar{}"; break;
      case '"':
        out += opening_quote ? "``" : "''";
        opening_quote = !opening_quote;
        break;
      case ' ':
        // The explanations separate the parts of a formula with runs of spaces, which LaTeX would collapse.
        if (i < text.size() && text[i] == ' ') {
          while (i < text.size() && text[i] == ' ') ++i;
          out += "\\quad ";
        } else {
          out += ' ';
        }
        break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace attn::cli
