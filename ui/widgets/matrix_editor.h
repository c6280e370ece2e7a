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

// Edits m in place; true in the frame a value changed. Values are kept within the engine's limits.
bool MatrixEditor(const char* id, Matrix& m, const MatrixEditorOptions& opts = {});

}  // namespace attn::ui
