#pragma once
// ui::VectorPlot: arrows from the origin in a square plane, with arcs between directions: the geometry of a dot
// product (ui/logic/geometry.h). Axes through the origin, a light grid, each arrow labelled beyond its tip: every label
// takes the nearest spot clear of the other labels, arrows, arcs and axes (a leader line when away from its anchor),
// in its arrow's full colour at 4.5:1. An arrow lying under a wider one is drawn over it as a stripe; the layout check
// reports arrows that still hide, strokes under 3:1 and labels that found no room.
#include <span>
#include <string>

#include <imgui.h>

namespace attn::ui {

struct PlotArrow {
  double x = 0, y = 0;  // the tip, in data units
  ImU32 colour = 0;
  float thickness = 2.0f;
  bool dashed = false;  // e.g. a vector before RoPE's turn
  std::string label;    // drawn beyond the tip; empty: none
};

// An arc at `radius` (a share of the plot's half width) from direction `from` to direction `to` (radians,
// counter-clockwise from the x axis), with a label at its middle.
struct PlotArc {
  double from = 0, to = 0;
  float radius = 0.3f;
  ImU32 colour = 0;
  std::string label;
};

struct VectorPlotOptions {
  float size = 0;            // the square's side in pixels (0: the available width, at most the available height)
  float width = 0;           // wider than `size`: the plane goes on left and right at the same scale
  double extent = 1.0;       // data units from the origin to the edge
  const char* x_label = "";  // names of the axes, at their positive ends
  const char* y_label = "";
  bool page_plot = false;  // what a lesson page is about: the layout check wants it a third of the window each way
};

// Arrows are drawn in order, so the ones that matter go last (on top).
void VectorPlot(const char* id, std::span<const PlotArrow> arrows, std::span<const PlotArc> arcs,
                const VectorPlotOptions& opts);

}  // namespace attn::ui
