#pragma once
// "Save as PNG (2x)" for any heatmap or chart: the widget asks, the window renders one extra frame at
// twice the size (fonts rasterised at twice the size, so text stays crisp), and cuts the widget out.
#include <functional>
#include <string>

#include <imgui.h>

#include "core/matrix.h"

namespace attn::ui {

struct PictureRequest {
  ImGuiID widget = 0;      // the widget to cut out; 0: nothing asked
  std::string name;        // for the file name: "scores"
  bool capturing = false;  // the 2x frame is being drawn
  bool found = false;      // the widget was drawn in it
  ImVec2 min, max;         // its rectangle in the 2x frame
};

PictureRequest& picture_request();

// Call right after the widget's ImGui item: its right-click menu offers the PNG (and, with a matrix, the
// CSV), and during a capture it records where it was drawn.
void PictureMenu(const char* name, ImVec2 min, ImVec2 max, const Matrix* m = nullptr,
                 const std::vector<std::string>* rows = nullptr, const std::vector<std::string>* cols = nullptr);

}  // namespace attn::ui
