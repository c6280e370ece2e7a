#include "ui/matrix_editor.h"

#include "core/scenario.h"

namespace attn::ui {

bool MatrixEditor(const char* id, Matrix& m, const MatrixEditorOptions& opts) {
  bool changed = false;
  ImGui::PushID(id);
  const int cols = static_cast<int>(m.cols());
  const ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoHostExtendX;
  const float height = (ImGui::GetFrameHeightWithSpacing()) * static_cast<float>(m.rows() + 1) + 6;
  if (ImGui::BeginTable("cells", cols + 1, flags, {0, std::min(height, 12 * ImGui::GetFrameHeightWithSpacing())})) {
    ImGui::TableSetupScrollFreeze(1, 0);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
    for (int c = 0; c < cols; ++c) ImGui::TableSetupColumn(std::to_string(c).c_str(), ImGuiTableColumnFlags_WidthFixed, opts.cell_width);
    ImGui::TableHeadersRow();
    const double lo = -limits::kMaxAbsValue, hi = limits::kMaxAbsValue;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      const std::string label = opts.row_labels && r < static_cast<Eigen::Index>(opts.row_labels->size())
                                    ? (*opts.row_labels)[static_cast<std::size_t>(r)]
                                    : std::to_string(r);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(label.c_str());
      for (int c = 0; c < cols; ++c) {
        ImGui::TableSetColumnIndex(c + 1);
        ImGui::PushID(static_cast<int>(r * cols + c));
        ImGui::SetNextItemWidth(opts.cell_width);
        double value = m(r, c);
        if (ImGui::DragScalar("##v", ImGuiDataType_Double, &value, opts.speed, &lo, &hi, opts.format)) {
          m(r, c) = value;
          changed = true;
        }
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
  return changed;
}

}  // namespace attn::ui
