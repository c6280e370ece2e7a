#include "app/cli/matrix_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn::cli {
namespace {

std::vector<std::string> labels_or_indices(const std::vector<std::string>& labels, Eigen::Index n) {
  std::vector<std::string> out;
  const bool given = static_cast<Eigen::Index>(labels.size()) == n;
  for (Eigen::Index i = 0; i < n; ++i)
    out.push_back(given ? shorten_label(labels[static_cast<std::size_t>(i)]) : std::to_string(i));
  return out;
}

std::size_t widest(const std::vector<std::string>& items) {
  std::size_t w = 0;
  for (const auto& s : items) w = std::max(w, display_width(s));
  return w;
}

// The widest number of m at this precision: measured in a pass of its own, so no cell's text is kept.
std::size_t widest_number(const Matrix& m, int precision) {
  std::size_t w = 0;
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) w = std::max(w, format_number(m(r, c), precision).size());
  return w;
}

}  // namespace

std::string row_text(const Matrix& row, int precision) {
  std::string s;
  for (Eigen::Index c = 0; c < row.cols(); ++c) s += (c ? "  " : "") + format_number(row(0, c), precision);
  return s;
}

std::vector<std::string> head_column_labels(const char* prefix, int heads, int head_dim) {
  std::vector<std::string> labels;
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < head_dim; ++i) {
      std::string label = heads == 1 ? "" : std::string(prefix).append(std::to_string(h)).append(".");
      labels.push_back(label.append(std::to_string(i)));
    }
  return labels;
}

// Rows are written as they are formatted: what is held is the labels and one cell's text.
void print_matrix(std::ostream& out, const Matrix& m, const MatrixTextOptions& opts) {
  const auto rows = labels_or_indices(opts.row_labels, m.rows());
  const auto cols = labels_or_indices(opts.col_labels, m.cols());
  const std::size_t label_w = widest(rows);
  const std::size_t cell_w = std::max(widest_number(m, opts.precision), widest(cols));
  auto pad = [](const std::string& s, std::size_t w) { return std::string(w - std::min(w, display_width(s)), ' '); };

  out << "  " << std::string(label_w, ' ');
  for (const auto& c : cols) out << "  " << pad(c, cell_w) << c;
  out << '\n';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out << "  " << rows[static_cast<std::size_t>(r)] << pad(rows[static_cast<std::size_t>(r)], label_w);
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const std::string cell = format_number(m(r, c), opts.precision);
      out << "  " << pad(cell, cell_w) << cell;
    }
    out << '\n';
  }
}

RowStatistics row_statistics(const HeadTrace& h, bool softmax) {
  const Eigen::Index n = h.weights().rows();
  RowStatistics r{Matrix(n, softmax ? 3 : 2),
                  softmax ? std::vector<std::string>{"m", "Z", "entropy"} : std::vector<std::string>{"Z", "entropy"}};
  for (Eigen::Index i = 0; i < n; ++i) {
    if (softmax) r.values.row(i) << h.row_max(i), h.row_sum(i), h.entropy(i);
    else r.values.row(i) << h.row_sum(i), h.entropy(i);
  }
  return r;
}

}  // namespace attn::cli
