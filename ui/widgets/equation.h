#pragma once
// ui::Equation: matrices laid out as the formula they form, e.g.  q [3×3]  ·  kᵀ [3×3]  =  scores [3×3],
// each term a heatmap titled with its name and shape, sized so the whole line fits the width.
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ui/widgets/heatmap.h"

namespace attn::ui {

struct Term {
  std::string name;  // "scores", "kᵀ"
  const Matrix* m = nullptr;
  const std::vector<std::string>* rows = nullptr;  // row labels (tokens, or nullptr for indices)
  const std::vector<std::string>* cols = nullptr;
  ColourMap map = ColourMap::Diverging;
  const Matrix* visible = nullptr;
  std::optional<ValueRange> range = std::nullopt;
  int highlight_row = -1, highlight_col = -1;
  int selected_row = -1, selected_col = -1;
  std::span<const std::pair<int, int>> outlined = {};
  int outlined_col0 = 0;
  HeatmapFlags flags = HeatmapFlags_NoTooltip;
  std::span<const int> row_slots = {}, col_slots = {};  // a focused matrix (HeatmapOptions::row_slots)
  const Matrix* whole = nullptr;                        // ... and the matrix it was focused from: the title's shape
  bool joined = false;  // EquationFlow keeps it on the line of the term before it (V beside the K of its head)
};

struct EquationHover {
  int term = -1, row = -1, col = -1;
  bool clicked = false;
  float outlined_y = -1;  // screen y of an outlined cell (a lesson's) of the result, or else of the last term (the
                          // first where the result leads) that has one; -1 if none
  float result_y = -1;    // screen y of the result's title (the last term given), -1 if none was drawn
  ImVec2 result_min{-1, -1}, result_max{-1, -1};   // the result's title and grid on screen, -1 if not drawn
  std::vector<std::pair<ImVec2, ImVec2>> boxes{};  // every term's title and grid on screen, in the caller's order
  explicit operator bool() const { return term >= 0; }
};

// ops[i] is written between terms i and i+1 ("·", "=", "÷ √3 ="). max_height bounds the tallest term.
EquationHover Equation(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float max_height,
                       float max_cell = 96.0f);

// Whether Equation draws the terms in `max_height` and the available width with every number at its matrix's
// decimals in cells at least a text line tall, on fitted lines or flowing at a cell it may shrink to (1.2 font
// heights) before it scrolls: when not, a lesson page may focus.
bool EquationFits(std::span<const Term> terms, std::span<const std::string> ops, float max_height,
                  float max_cell = 96.0f);

// The terms at one cell size, in lines filled left to right and wrapped where the next term does not fit, as
// text wraps: for many small matrices (a KV cache per head) whose cells should stay big enough for their
// numbers; the panel scrolls if they need more height than it has.
EquationHover EquationFlow(const char* id, std::span<const Term> terms, std::span<const std::string> ops, float cell);
// The height EquationFlow takes at cell size `cell` in `width` (its lines and the spacing under each).
float EquationFlowHeight(std::span<const Term> terms, std::span<const std::string> ops, float cell, float width);

// "[3×4]"
std::string shape_text(const Matrix& m);

}  // namespace attn::ui
