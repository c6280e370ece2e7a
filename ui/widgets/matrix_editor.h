#pragma once
// ui::MatrixEditor: every cell of a matrix as a number to drag or type (double-click or Ctrl+click),
// with token labels on the rows.
#include <string>
#include <vector>

#include <imgui.h>

#include "core/matrix.h"

namespace attn::ui {

struct MatrixEditorOptions {
  const std::vector<std::string>* row_labels = nullptr;  // nullptr numbers the rows
  float speed = 0.01f;                                   // change per pixel dragged
  const char* format = "%.3g";
  float cell_width = 58.0f;
};

// The cell a person changed: its row, column and new value, kept within the engine's limits.
struct CellEdit {
  int row = -1, col = -1;
  double value = 0.0;
  explicit operator bool() const { return row >= 0; }
};

// A copy of m with the edited cell changed: for a matrix held shared, never changed in place (a weight).
inline Matrix with_cell(const Matrix& m, const CellEdit& e) {
  Matrix changed = m;
  changed(e.row, e.col) = e.value;
  return changed;
}

// Every cell of m, to drag or type; returns the cell changed in this frame, if any. m is only read: the caller
// changes its own copy, so that showing a 2,048-token matrix (8 MiB) does not copy it every frame.
CellEdit MatrixEditor(const char* id, const Matrix& m, const MatrixEditorOptions& opts = {});

}  // namespace attn::ui
