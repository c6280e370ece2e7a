#pragma once
// ui::Style: the look the widgets and the window share, in one place, as ImPlot's ImPlotStyle is: the
// theme's accent, the palettes (registered once), outline widths and the main window's proportions.
// apply_style (theme.h) sets what depends on the theme.
#include <array>

#include <imgui.h>

namespace attn::ui {

struct WindowLayout {
  // Side columns: a share of the window's width, within these bounds, enlarged with the zoom up to side_zoom_cap.
  float inputs_share = 0.21f, inputs_min = 280.0f, inputs_max = 380.0f;
  float heads_share = 0.2f, heads_min = 250.0f, heads_max = 360.0f;
  float side_zoom_cap = 1.3f;
  // Under the pipeline: the explanation's share of the height, or a lesson page's (the height its text needs).
  float explain_share = 0.34f, explain_min = 170.0f, explain_max = 330.0f;
  float lesson_min_share = 0.25f, lesson_max_share = 0.55f;
  // Beside the other views: a lesson's column, wider in presentation mode, where the text is larger.
  float lesson_column_share = 0.3f, lesson_column_share_presenting = 0.36f;
  float lesson_column_min = 320.0f, lesson_column_max = 640.0f;
};

struct Style {
  // What is current (the step, the head, highlighted rows): amber on dark, a deeper orange on light
  // backgrounds, where amber would be too faint to read.
  ImU32 accent = IM_COL32(255, 190, 40, 255);
  // A check that holds and one that fails (the ✔ and ✘ lines), each at least 4.5:1 on its theme's page.
  ImU32 agree = IM_COL32(115, 217, 115, 255), disagree = IM_COL32(255, 102, 89, 255);
  // A matrix's outer edge, at least 3:1 on the page: a white cell (a zero) on a light page keeps its matrix's outline.
  ImU32 matrix_frame = IM_COL32(120, 122, 130, 255);
  // Okabe-Ito, distinguishable with every common colour-blindness: one per key/value head.
  std::array<ImU32, 8> okabe_ito = {IM_COL32(230, 159, 0, 255),   IM_COL32(86, 180, 233, 255),
                                    IM_COL32(0, 158, 115, 255),   IM_COL32(240, 228, 66, 255),
                                    IM_COL32(0, 114, 178, 255),   IM_COL32(213, 94, 0, 255),
                                    IM_COL32(204, 121, 167, 255), IM_COL32(200, 200, 200, 255)};
  // Tableau 10's nine hues, no two of which are shades of one: one per model preset.
  std::array<ImU32, 9> tableau = {
      IM_COL32(78, 121, 167, 255),  IM_COL32(242, 142, 43, 255),  IM_COL32(225, 87, 89, 255),
      IM_COL32(118, 183, 178, 255), IM_COL32(89, 161, 79, 255),   IM_COL32(237, 201, 72, 255),
      IM_COL32(176, 122, 161, 255), IM_COL32(255, 157, 167, 255), IM_COL32(156, 117, 95, 255)};
  // The four variants (MHA, GQA, MQA, MLA) take four of them far apart: red, blue, green, purple.
  std::array<int, 4> variant_hues = {2, 0, 4, 6};
  // A highlighted row or column; a cell pointed at, white with a dark halo, seen on every colour of both maps.
  float highlight_width = 2.5f;
  float outline_width = 3.0f, outline_halo_width = 2.5f;
  float legend_bar_height = 8.0f;
  WindowLayout layout;
};

// The one style of the process, like ImGui::GetStyle().
Style& GetStyle();

}  // namespace attn::ui
