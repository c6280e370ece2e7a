// The geometry mode of the scores and rope steps: one query and one key of a head as arrows on a pair of
// dimensions, the angle between them, and with RoPE each arrow before and after its turn (ui/logic/geometry.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ui/logic/geometry.h"
#include "ui/panels/panels.h"
#include "ui/widgets/style.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"
#include "ui/widgets/vector_plot.h"

namespace attn::ui {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;
constexpr std::size_t kMostArrows = 64;  // past this the other rows are left out: they would be one blot
constexpr std::size_t kMostLabels = 12;  // and past this they go unlabelled

ImU32 query_colour() { return GetStyle().okabe_ito[1]; }  // sky blue
ImU32 key_colour() { return GetStyle().okabe_ito[0]; }    // orange
ImU32 faded(ImU32 c, int alpha) { return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT); }

// A combo over names; true when one was picked.
bool pick(const char* label, int& index, const std::vector<std::string>& names, float width) {
  ImGui::SetNextItemWidth(width);
  bool changed = false;
  if (ImGui::BeginCombo(label, names[static_cast<std::size_t>(index)].c_str())) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == index)) {
        index = static_cast<int>(i);
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

void geometry_controls(AppState& state, const Trace& t, const std::vector<PlanePair>& pairs) {
  auto& g = state.pipeline.geometry_view;
  std::vector<std::string> labels;
  for (const PlanePair& p : pairs) labels.push_back(p.label);
  g.pair = std::clamp(g.pair, 0, static_cast<int>(pairs.size()) - 1);
  if (g.row < 0 || g.row >= t.n_q()) g.row = t.n_q() - 1;  // the last query: the farthest from key 0
  g.col = std::clamp(g.col, 0, t.n_kv() - 1);
  const float w = ImGui::GetFontSize() * 7;
  pick("query", g.row, distinct_names(t.tokens), w);
  SameLineIfFits(LabelledWidth(w, "key"), ImGui::GetStyle().ItemSpacing.x * 3);
  pick("key", g.col, distinct_names(t.context_tokens), w);
  pick("on", g.pair, labels, w);
}

// Every arrow, faint rows first; with RoPE the chosen two also before their turn, and the arc of each turn.
void arrows_and_arcs(const Trace& t, const PlaneGeometry& g, bool labels, std::vector<PlotArrow>& arrows,
                     std::vector<PlotArc>& arcs) {
  const auto add_faint = [&](const std::vector<PlaneVector>& v, const std::vector<std::string>& names, int chosen,
                             ImU32 colour, const char* letter) {
    if (v.size() > kMostArrows) return;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (static_cast<int>(i) != chosen)
        arrows.push_back({v[i].x, v[i].y, faded(colour, 110), 1.5f, false,
                          labels && v.size() <= kMostLabels ? letter + names[i] : std::string()});
  };
  const std::vector<std::string> queries = distinct_names(t.tokens), keys = distinct_names(t.context_tokens);
  add_faint(g.keys, keys, g.col, key_colour(), "k ");
  add_faint(g.queries, queries, g.row, query_colour(), "q ");
  const PlaneVector& q = g.queries[static_cast<std::size_t>(g.row)];
  const PlaneVector& k = g.keys[static_cast<std::size_t>(g.col)];
  const auto turned = [&](const PlaneVector& v, const std::string& name, ImU32 colour, float radius) {
    if (g.pair.rope_pair < 0 || v.turn == 0.0) return;
    std::string label = name + " before turn";
    // The same token at position 0 is not turned: its arrow is this one, drawn once with both names.
    const auto same = std::find_if(arrows.begin(), arrows.end(), [&](const PlotArrow& a) {
      return std::abs(a.x - v.x_before) + std::abs(a.y - v.y_before) <= 1e-12 * (1 + std::hypot(a.x, a.y));
    });
    if (same != arrows.end()) {
      if (!same->label.empty()) label += " = " + same->label;
      arrows.erase(same);
    }
    // Thick and unfaded, with long dashes: the page points at it, and it may lie along an axis.
    arrows.push_back({v.x_before, v.y_before, colour, 3.0f, true, label});
    const double from = std::atan2(v.y_before, v.x_before);
    arcs.push_back(
        {from, from + std::fmod(v.turn, kTwoPi), radius, faded(colour, 200), "+" + short_number(v.turn) + " rad"});
  };
  turned(q, "q " + queries[static_cast<std::size_t>(g.row)], query_colour(), 0.62f);
  turned(k, "k " + keys[static_cast<std::size_t>(g.col)], key_colour(), 0.78f);
  const double a = std::atan2(q.y, q.x), b = std::atan2(k.y, k.x);
  double between = std::remainder(b - a, kTwoPi);  // the shorter way round, as the angle φ is measured
  if (g.q_length > 0 && g.k_length > 0)
    arcs.push_back({a, a + between, 0.3f, ImGui::GetColorU32(ImGuiCol_Text), "\u03C6 " + angle_degrees(g.angle)});
  arrows.push_back({k.x, k.y, key_colour(), 3.5f, false, "k " + keys[static_cast<std::size_t>(g.col)]});
  arrows.push_back({q.x, q.y, query_colour(), 3.5f, false, "q " + queries[static_cast<std::size_t>(g.row)]});
}

double extent_of(const PlaneGeometry& g) {
  double most = 1e-12;
  for (const auto* side : {&g.queries, &g.keys})
    for (const PlaneVector& v : *side)
      most = std::max({most, std::hypot(v.x, v.y), std::hypot(v.x_before, v.y_before)});
  return most * 1.05;
}

}  // namespace

void GeometryView(AppState& state, const Trace& t, int head, float height) {
  const std::vector<PlanePair> pairs = plane_pairs(t);
  if (pairs.empty()) {
    TextWrappedAtSpaces("A head of width 1 has no plane to draw: each query and key is a single number.");
    return;
  }
  // The plot as tall as the step allows, the choices and the arithmetic beside it.
  // A plot a page is about takes at least a third of the window each way: wider than tall, where the step is low.
  // The plot gets the larger share: its labels need room around the arrows, the text beside it only wraps.
  const float avail = ImGui::GetContentRegionAvail().x;
  const float side = std::max(150.0f, std::min(height - ImGui::GetStyle().ItemSpacing.y, avail * 0.6f));
  const float width = std::max(side, std::max(avail * 0.6f, ImGui::GetMainViewport()->Size.x / 3 + 4));
  const ImVec2 at = ImGui::GetCursorPos();
  ImGui::SetCursorPos({at.x + width + ImGui::GetStyle().ItemSpacing.x * 2, at.y});
  ImGui::BeginGroup();
  geometry_controls(state, t, pairs);
  const auto& c = state.pipeline.geometry_view;
  const PlaneGeometry g = plane_geometry(t, head, c.pair, c.row, c.col);
  TextWrappedAtSpaces(explain_geometry(t, g));
  ImGui::EndGroup();
  const float below = ImGui::GetCursorPosY();
  std::vector<PlotArrow> arrows;
  std::vector<PlotArc> arcs;
  arrows_and_arcs(t, g, side >= 280.0f, arrows, arcs);  // a small plot names only the two that matter
  const std::string x_label = "dim " + std::to_string(g.pair.a), y_label = "dim " + std::to_string(g.pair.b);
  ImGui::SetCursorPos(at);
  VectorPlot("plane", arrows, arcs,
             {.size = side,
              .width = width,
              .extent = extent_of(g),
              .x_label = x_label.c_str(),
              .y_label = y_label.c_str(),
              .page_plot = true});
  ImGui::SetCursorPosY(std::max(below, ImGui::GetCursorPosY()));
}

}  // namespace attn::ui
