#include "ui/widgets/matrix_editor.h"

#include <algorithm>

#include "core/scenario.h"

namespace attn::ui {

namespace {

// Dear ImGui 1.86 tables hold at most 64 columns; wider matrices are edited in blocks of columns.
constexpr int kColumnsPerTable = 32;

CellEdit edit_columns(const Matrix& m, int first, int count, const MatrixEditorOptions& opts) {
  CellEdit changed;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX | ImGuiTableFlags_NoHostExtendX;
  const float height = ImGui::GetFrameHeightWithSpacing() * static_cast<float>(m.rows() + 1) + 6;
  if (!ImGui::BeginTable("cells", count + 1, flags, {0, std::min(height, 12 * ImGui::GetFrameHeightWithSpacing())}))
    return changed;
  ImGui::TableSetupScrollFreeze(1, 0);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
  for (int c = first; c < first + count; ++c)
    ImGui::TableSetupColumn(std::to_string(c).c_str(), ImGuiTableColumnFlags_WidthFixed, opts.cell_width);
  ImGui::TableHeadersRow();
  const double lo = -limits::kMaxAbsValue, hi = limits::kMaxAbsValue;
  // Only the rows in view are built: a 2048-token embedding matrix stays cheap to show.
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(m.rows()));
  while (clipper.Step()) {
    for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      const std::string label = opts.row_labels && r < static_cast<Eigen::Index>(opts.row_labels->size())
                                    ? (*opts.row_labels)[static_cast<std::size_t>(r)]
                                    : std::to_string(r);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(label.c_str());
      for (int c = first; c < first + count; ++c) {
        ImGui::TableSetColumnIndex(c - first + 1);
        ImGui::PushID(static_cast<int>(r * m.cols() + c));
        ImGui::SetNextItemWidth(opts.cell_width);
        double value = m(r, c);
        if (ImGui::DragScalar("##v", ImGuiDataType_Double, &value, opts.speed, &lo, &hi, opts.format))
          changed = {r, c, value};
        ImGui::PopID();
      }
    }
  }
  ImGui::EndTable();
  return changed;
}

}  // namespace

CellEdit MatrixEditor(const char* id, const Matrix& m, const MatrixEditorOptions& opts) {
  CellEdit changed;
  ImGui::PushID(id);
  const int cols = static_cast<int>(m.cols());
  for (int first = 0; first < cols; first += kColumnsPerTable) {
    const int count = std::min(kColumnsPerTable, cols - first);
    ImGui::PushID(first);
    if (cols > kColumnsPerTable) ImGui::TextDisabled("columns %d-%d", first, first + count - 1);
    if (const CellEdit e = edit_columns(m, first, count, opts)) changed = e;
    ImGui::PopID();
  }
  ImGui::PopID();
  return changed;
}

}  // namespace attn::ui
