#pragma once
// What the step texts share (step_text.cpp, step_text_positions.cpp): the step's context and the ways numbers,
// shapes and rows are written inside a sentence.
#include <string>

#include "core/attention.h"
#include "core/text_format.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/glyphs.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/step_text.h"

namespace attn::ui::step_text {

inline std::string num(int n) { return std::to_string(n); }
inline std::string num(Eigen::Index n) { return std::to_string(n); }
// A token in a sentence, shortened as beside its matrix: a 256-byte label never runs the explanation off its panel.
inline std::string quoted(const std::string& s) { return "\"" + shorten_label(s) + "\""; }

// Built by appending: "[" + std::string&& trips a false -Wrestrict of g++ 12 at -O3.
inline std::string dims(Eigen::Index rows, Eigen::Index cols) {
  std::string s = "[";
  s += num(rows);
  s += glyph::kTimes;
  s += num(cols);
  return s + "]";
}
inline std::string dims(const Matrix& m) { return dims(m.rows(), m.cols()); }

// "[1.977, 7.392, 0.772]": row r of m at the matrix's decimals (matrix_decimals), as its cells write it; long rows
// stop after 6 entries so a sentence stays one line on a projector.
inline std::string vec(const Matrix& m, Eigen::Index r) {
  const int decimals = matrix_decimals(m);
  std::string s = "[";
  for (Eigen::Index k = 0; k < m.cols(); ++k) {
    if (k == 6) return s + ", " + glyph::kEllipsis + "]";
    s += (k > 0 ? ", " : "") + format_fixed(m(r, k), decimals);
  }
  return s + "]";
}

// One cell of m as its cells write it (visible: m's hidden cells do not count, as in its heatmap).
inline std::string cell(const Matrix& m, Eigen::Index r, Eigen::Index c, const Matrix* visible = nullptr) {
  return format_fixed(m(r, c), matrix_decimals(m, visible));
}

// "2, 8, 6": one row of numbers inside a sentence.
inline std::string list(const Matrix& m, Eigen::Index r) {
  const std::string v = vec(m, r);
  return v.substr(1, v.size() - 2);
}

struct StepContext {
  const Trace& t;
  const HeadTrace& h;
  int row;  // the example query
  const std::string& q(int i) const { return t.tokens[static_cast<std::size_t>(i)]; }
  const std::string& k(int j) const { return t.context_tokens[static_cast<std::size_t>(j)]; }
  int d() const { return t.attention.head_dim; }
  int H() const { return t.attention.heads; }
  Variant variant() const { return t.attention.variant; }
  bool softmax() const { return t.attention.kernel == Kernel::Softmax; }
  bool shares_kv() const { return variant() == Variant::Gqa || variant() == Variant::Mqa; }
};

// The texts of the steps positions and sparse attention add (step_text_positions.cpp).
StepText positions_text(const StepContext& v);
StepText rope_text(const StepContext& v);
StepText selection_text(const StepContext& v);

}  // namespace attn::ui::step_text
