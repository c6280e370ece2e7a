#pragma once
// Focus: when a step's matrices cannot all be drawn readable in the room a lesson page has, the page names the rows
// and columns its text talks about ("focus" in the lesson file) and the others are elided, each run of them drawn
// as one "⋯" row or column, never silently dropped. What is kept keeps its real labels ("sleeps", "0").
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention.h"
#include "ui/logic/steps.h"

namespace attn::ui {

// What a page names of one matrix: its rows and its columns (either empty: that axis is drawn whole).
struct FocusAxes {
  std::vector<int> rows, cols;
  bool operator==(const FocusAxes&) const = default;
};
struct FocusTerm {
  std::string name;  // the matrix as the step's equation names it: "concat", "W_O", "output"
  FocusAxes axes;
  bool operator==(const FocusTerm&) const = default;
};

// In an axis as drawn, a slot that stands for a run of elided rows or columns.
inline constexpr int kElided = -1;

// The slots of an axis of n drawn in at most `slots` places: 0 .. n-1 when they fit (or nothing is named); else
// the named indices, then their nearest neighbours (the nearer first, the lower on a tie) while they and one
// kElided per remaining gap still fit. The named are kept even past `slots`. Named indices outside 0 .. n-1 and
// repeats are ignored.
std::vector<int> focus_axis(int n, std::span<const int> named, int slots);

// The matrix drawn with those slots: kept rows and columns copied, elided ones 0 (drawn as "⋯", never as values).
Matrix focused_matrix(const Matrix& m, std::span<const int> rows, std::span<const int> cols);

// Labels of the drawn slots: the real ones (or the index without labels), `elided` for a kElided slot.
std::vector<std::string> focused_labels(const std::vector<std::string>* labels, std::span<const int> slots,
                                        std::string_view elided);

// Where original index i is drawn among the slots, or -1 when elided (or outside).
int focused_index(std::span<const int> slots, int i);

// A matrix of a step that a page may focus on, with its shape in `t`.
struct FocusOperand {
  std::string name;
  Eigen::Index rows = 0, cols = 0;
};
// The matrices of `step` that can be focused (empty: the step offers no focus): with an output projection, the concat
// step has concat, W_O and output; the output step each head's contribution ("head 0", ...) and output.
std::vector<FocusOperand> focus_operands(const Trace& t, Step step);

}  // namespace attn::ui
