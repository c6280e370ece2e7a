#include "app/cli/matrix_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn::cli {
namespace {

std::vector<std::string> labels_or_indices(const std::vector<std::string>& labels, Eigen::Index n) {
  if (static_cast<Eigen::Index>(labels.size()) == n) return labels;
  std::vector<std::string> out;
  for (Eigen::Index i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// Columns on a terminal: UTF-8 continuation bytes take no room of their own ("é" is one column, two bytes).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::size_t widest(const std::vector<std::string>& items) {
  std::size_t w = 0;
  for (const auto& s : items) w = std::max(w, display_width(s));
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

void print_matrix(std::ostream& out, const Matrix& m, const MatrixTextOptions& opts) {
  const auto rows = labels_or_indices(opts.row_labels, m.rows());
  const auto cols = labels_or_indices(opts.col_labels, m.cols());
  std::vector<std::string> cells;
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) cells.push_back(format_number(m(r, c), opts.precision));
  const std::size_t label_w = widest(rows);
  const std::size_t cell_w = std::max(widest(cells), widest(cols));
  auto pad = [](const std::string& s, std::size_t w) { return std::string(w - std::min(w, display_width(s)), ' '); };
  auto pad_left = [&](const std::string& s, std::size_t w) { return pad(s, w) + s; };
  auto pad_right = [&](const std::string& s, std::size_t w) { return s + pad(s, w); };

  out << "  " << std::string(label_w, ' ');
  for (const auto& c : cols) out << "  " << pad_left(c, cell_w);
  out << '\n';
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out << "  " << pad_right(rows[r], label_w);
    for (Eigen::Index c = 0; c < m.cols(); ++c) out << "  " << pad_left(cells[r * m.cols() + c], cell_w);
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
