#include "ui/widgets/arc_view.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/text_format.h"
#include "ui/logic/colour_map.h"
#include "ui/widgets/heatmap.h"
#include "ui/widgets/layout_check_frame.h"
#include "ui/widgets/text.h"
#include "ui/widgets/theme.h"

namespace attn::ui {
namespace {

using Arcs = std::vector<std::pair<double, int>>;

// The arcs of every k-th row (row i at i / budget.every), remembered while the heatmap version says the weights have
// not changed: at 2,048 tokens choosing them reads 250,000 weights, which every frame would cost the window 1 ms.
const std::vector<Arcs>& drawn_arcs(ImGuiID id, const Matrix& weights, ArcBudget budget) {
  struct Entry {
    std::uint64_t version = 0;
    const double* data = nullptr;
    Eigen::Index rows = 0, cols = 0;
    ArcBudget budget;
    std::vector<Arcs> rows_arcs;
  };
  static std::unordered_map<ImGuiID, Entry> cache;
  Entry& e = cache[id];
  const std::uint64_t v = HeatmapVersion();
  if (v != 0 && e.version == v && e.data == weights.data() && e.rows == weights.rows() && e.cols == weights.cols() &&
      e.budget.every == budget.every && e.budget.per_query == budget.per_query)
    return e.rows_arcs;
  e = {v, weights.data(), weights.rows(), weights.cols(), budget, {}};
  for (int i = 0; i < static_cast<int>(weights.rows()); i += budget.every)
    e.rows_arcs.push_back(strongest_arcs(weights, i, budget.per_query));
  return e.rows_arcs;
}

// `colour` at `alpha` as it shows on `page`, then moved just far enough from the page to be seen from the back of a
// room at `ratio`: a quarter of a query's weight drawn dark teal on black vanished.
Rgb shown_legible(Rgb colour, float alpha, Rgb page, double ratio) {
  const Rgb shown{colour.r * alpha + page.r * (1 - alpha), colour.g * alpha + page.g * (1 - alpha),
                  colour.b * alpha + page.b * (1 - alpha)};
  return legible_on(shown, page, ratio);
}

}  // namespace

int ArcView(const char* id, const Matrix& weights, const ArcViewOptions& opts) {
  ImGui::PushID(id);
  const int n_q = static_cast<int>(weights.rows()), n_k = static_cast<int>(weights.cols());
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const float width = opts.size.x > 0 ? opts.size.x : ImGui::GetContentRegionAvail().x;
  const float height = opts.size.y > 0 ? opts.size.y : line * static_cast<float>(std::max(n_q, n_k) + 1);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("arcs", {width, height});
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();

  // Each side's labels shortened to a quarter of the view, so long ones leave the arcs their room and never meet.
  const auto fitted = [&](const std::vector<std::string>* labels, int n) {
    std::vector<std::string> out(static_cast<std::size_t>(n));
    if (labels)
      for (int i = 0; i < n; ++i)
        out[static_cast<std::size_t>(i)] =
            FitText(shorten_label((*labels)[static_cast<std::size_t>(i)]), 0.25f * width, false);
    return out;
  };
  const std::vector<std::string> queries = fitted(opts.queries, n_q), keys = fitted(opts.keys, n_k);
  auto label_w = [](const std::vector<std::string>& labels, bool given) {
    float w = given ? 0.0f : ImGui::CalcTextSize("00").x;
    for (const std::string& l : labels) w = std::max(w, ImGui::CalcTextSize(l.c_str()).x);
    return w;
  };
  const float left_w = label_w(queries, opts.queries), right_w = label_w(keys, opts.keys);
  const float x0 = origin.x + left_w + 10, x1 = origin.x + width - right_w - 10;
  // Rows closer than a line of text are spread over the height less half a line at each end, so that the first
  // and last labels, centred on their rows, stay inside the view (4,096 queries put t0's on the caption above).
  auto pad = [&](int n) { return std::max(0.0f, (ImGui::GetTextLineHeight() - height / static_cast<float>(n)) / 2); };
  auto y_of = [&](int i, int n) {
    return origin.y + pad(n) + (height - 2 * pad(n)) * (static_cast<float>(i) + 0.5f) / static_cast<float>(n);
  };

  int focus = -1;
  if (hovered) {
    const float my = ImGui::GetIO().MousePos.y, p = pad(n_q);
    focus = std::clamp(static_cast<int>((my - origin.y - p) / (height - 2 * p) * static_cast<float>(n_q)), 0, n_q - 1);
  }
  // Each arc no thicker than the gap between queries (a thousand full-width strokes would be one blot).
  const ArcBudget budget = arc_budget(n_q, height);
  const float thickest = std::min(opts.max_thickness, std::max(1.0f, height / static_cast<float>(std::max(n_q, n_k))));
  // On a light background viridis' bright end (yellow: the strongest arcs) fades into the page: a dark edge
  // under each arc keeps it seen without changing what its colour means.
  const bool light = light_page();
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  const Rgb page{bg.x, bg.y, bg.z};
  const std::vector<Arcs>& arcs = drawn_arcs(ImGui::GetID("arcs"), weights, budget);
  auto draw_row = [&](int i, bool strong) {
    const Arcs every_arc = strong ? strongest_arcs(weights, i, -1) : Arcs{};  // the pointed-at query's
    for (const auto& [w, j] : strong ? every_arc : arcs[static_cast<std::size_t>(i / budget.every)]) {
      const float alpha = strong ? 1.0f : (focus >= 0 ? 0.15f : 0.35f + 0.6f * static_cast<float>(w));
      // A weight a student should see (5% and more) keeps 3:1 against the page while no query is pointed at;
      // heavier lines stay thicker and brighter.
      const bool seen = w >= kSeenWeight && (strong || focus < 0);
      const Rgb hue = sample(ColourMap::Sequential, 0.35 + 0.65 * w);
      const Rgb edge = shown_legible({0.15f, 0.15f, 0.2f}, 0.55f * alpha, page, seen ? 3.0 : 1.0);
      const ImU32 colour = seen && !light ? pack(shown_legible(hue, alpha, page, 3.0)) : pack(hue, alpha);
      const ImVec2 a{x0, y_of(i, n_q)}, b{x1, y_of(j, n_k)};
      const float dx = (b.x - a.x) * 0.45f;
      const float least = seen ? 1.5f : 1.0f;
      const float thickness = std::max(least, (strong ? opts.max_thickness : thickest) * static_cast<float>(w));
      // Many thin arcs: 12 segments each look as smooth and cost a third of what the adaptive default does.
      const int segments = strong || n_q / budget.every < 32 ? 0 : 12;
      if (light) dl->AddBezierCubic(a, {a.x + dx, a.y}, {b.x - dx, b.y}, b, pack(edge), thickness + 2.0f, segments);
      dl->AddBezierCubic(a, {a.x + dx, a.y}, {b.x - dx, b.y}, b, colour, thickness, segments);
      if (seen && LayoutCheckOn())
        ReportLineContrastHere("arc " + std::to_string(i) + "\u2192" + std::to_string(j) + " of " + id,
                               light ? pack(edge) : colour, pack(page));
    }
  };
  for (int i = 0; i < n_q; i += budget.every)
    if (i != focus) draw_row(i, false);
  if (focus >= 0) draw_row(focus, true);

  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  // With more tokens than lines of text fit, every k-th label (and the focused one).
  auto every = [&](int n) { return std::max(1, static_cast<int>(std::ceil(line * static_cast<float>(n) / height))); };
  const int q_every = every(n_q), k_every = every(n_k);
  for (int i = 0; i < n_q; ++i) {
    if (i % q_every != 0 && i != focus) continue;
    const char* s = queries[static_cast<std::size_t>(i)].c_str();
    const ImVec2 ts = ImGui::CalcTextSize(s);
    dl->AddText({origin.x + left_w - ts.x, y_of(i, n_q) - ts.y / 2}, i == focus ? accent_colour() : text, s);
  }
  for (int j = 0; j < n_k; ++j) {
    if (j % k_every != 0) continue;
    const char* s = keys[static_cast<std::size_t>(j)].c_str();
    dl->AddText({x1 + 10, y_of(j, n_k) - ImGui::CalcTextSize(s).y / 2}, text, s);
  }
  ImGui::PopID();
  return focus;
}

}  // namespace attn::ui
