#include "ui/logic/focus.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>

namespace attn::ui {
namespace {

// Places the kept indices take, with one kElided for each gap between them and at the ends.
int drawn_places(const std::set<int>& kept, int n) {
  int places = static_cast<int>(kept.size()), next = 0;
  for (const int i : kept) {
    if (i > next) ++places;
    next = i + 1;
  }
  return places + (next < n ? 1 : 0);
}

// The distance from i to the nearest named index.
int distance_to(const std::set<int>& named, int i) {
  int d = std::numeric_limits<int>::max();
  for (const int j : named) d = std::min(d, std::abs(i - j));
  return d;
}

}  // namespace

std::vector<int> focus_axis(int n, std::span<const int> named, int slots) {
  std::set<int> kept;
  for (const int i : named)
    if (i >= 0 && i < n) kept.insert(i);
  std::vector<int> all(static_cast<std::size_t>(std::max(0, n)));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  if (kept.empty() || n <= slots) return all;
  const std::set<int> named_set = kept;
  std::vector<int> others;
  for (int i = 0; i < n; ++i)
    if (!named_set.contains(i)) others.push_back(i);
  std::stable_sort(others.begin(), others.end(),
                   [&](int a, int b) { return distance_to(named_set, a) < distance_to(named_set, b); });
  for (const int i : others) {
    std::set<int> more = kept;
    more.insert(i);
    if (drawn_places(more, n) <= slots) kept = std::move(more);
  }
  std::vector<int> drawn;
  int next = 0;
  for (const int i : kept) {
    if (i > next) drawn.push_back(kElided);
    drawn.push_back(i);
    next = i + 1;
  }
  if (next < n) drawn.push_back(kElided);
  return drawn;
}

Matrix focused_matrix(const Matrix& m, std::span<const int> rows, std::span<const int> cols) {
  Matrix f = Matrix::Zero(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (rows[r] != kElided && cols[c] != kElided)
        f(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = m(rows[r], cols[c]);
  return f;
}

std::vector<std::string> focused_labels(const std::vector<std::string>* labels, std::span<const int> slots,
                                        std::string_view elided) {
  std::vector<std::string> out;
  for (const int i : slots)
    out.push_back(i == kElided                                     ? std::string(elided)
                  : labels && i < static_cast<int>(labels->size()) ? (*labels)[static_cast<std::size_t>(i)]
                                                                   : std::to_string(i));
  return out;
}

int focused_index(std::span<const int> slots, int i) {
  if (i < 0) return -1;
  const auto it = std::find(slots.begin(), slots.end(), i);
  return it == slots.end() ? -1 : static_cast<int>(it - slots.begin());
}

std::vector<FocusOperand> focus_operands(const Trace& t, Step step) {
  if (!t.has_output_projection()) return {};
  if (step == Step::Concat)
    return {{"concat", t.concat.rows(), t.concat.cols()},
            {"W_O", t.W_O().rows(), t.W_O().cols()},
            {"output", t.output.rows(), t.output.cols()}};
  if (step != Step::Output) return {};
  // The sum over heads: each head's contribution is as large as the output.
  std::vector<FocusOperand> o;
  for (const HeadTrace& h : t.heads) o.push_back({"head " + std::to_string(h.head), t.output.rows(), t.output.cols()});
  o.push_back({"output", t.output.rows(), t.output.cols()});
  return o;
}

}  // namespace attn::ui
