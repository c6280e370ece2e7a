#include "ui/widgets/picture_export.h"

#include <imgui_internal.h>

#include "ui/logic/matrix_export.h"

namespace attn::ui {

PictureRequest& picture_request() {
  static PictureRequest request;  // one export at a time, like one modal at a time
  return request;
}

void PictureMenu(const char* name, ImVec2 min, ImVec2 max, const Matrix* m, const std::vector<std::string>* rows,
                 const std::vector<std::string>* cols) {
  PictureRequest& r = picture_request();
  const ImGuiID id = GImGui->LastItemData.ID;  // 1.86 has no public GetItemID()
  if (r.capturing && r.widget == id) {
    r.found = true;
    r.min = min;
    r.max = max;
  }
  if (!ImGui::BeginPopupContextItem("export")) return;
  if (ImGui::MenuItem("Save as PNG (2\u00D7 for slides)")) {
    r.widget = id;
    r.name = name;
  }
  if (m && ImGui::MenuItem("Copy as CSV")) ImGui::SetClipboardText(matrix_csv(*m, rows, cols).c_str());
  ImGui::EndPopup();
}

}  // namespace attn::ui
