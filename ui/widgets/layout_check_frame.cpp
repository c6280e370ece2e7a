#include "ui/widgets/layout_check_frame.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <imgui_internal.h>

namespace attn::ui {
namespace {

std::uint64_t uv_key(ImVec2 uv) {
  std::uint32_t u = 0, v = 0;
  std::memcpy(&u, &uv.x, sizeof u);
  std::memcpy(&v, &uv.y, sizeof v);
  return (std::uint64_t{u} << 32) | v;
}

// A glyph of the atlas and its font's enlargement (the fonts are drawn enlarged past the atlas's allowance).
struct AtlasGlyph {
  const ImFontGlyph* glyph;
  float scale, font_px;
};

// Every visible glyph of every loaded font by the atlas corner its quads start at.
std::unordered_map<std::uint64_t, AtlasGlyph> glyphs_by_corner() {
  std::unordered_map<std::uint64_t, AtlasGlyph> map;
  for (const ImFont* font : ImGui::GetIO().Fonts->Fonts)
    for (const ImFontGlyph& g : font->Glyphs)
      if (g.Visible) map.emplace(uv_key({g.U0, g.V0}), AtlasGlyph{&g, font->Scale, font->FontSize * font->Scale});
  return map;
}

// "Lesson/text_1A2B3C4D" -> "Lesson", "Lesson 2: Why###Lesson" -> "Lesson", "##status" -> "status".
std::string window_name(const char* owner) {
  std::string s = owner ? owner : "";
  s = s.substr(0, s.find('/'));
  if (const std::size_t id = s.find("###"); id != std::string::npos) s = s.substr(id + 3);  // "Lesson 1: ...###Lesson"
  while (!s.empty() && s[0] == '#') s.erase(0, 1);
  return s.substr(0, s.find("##"));
}

// A filled triangle of one colour (a window's background, a cell, a button), or of a picture (a large heatmap's
// texture: what lies under text there is not known), in drawing order: what text is drawn on.
struct Fill {
  ImVec2 a, b, c;
  TextRect clip;
  std::uint32_t colour = 0;  // 0: a picture
};

bool inside(const Fill& f, ImVec2 p) {
  if (p.x < f.clip.x0 || p.x > f.clip.x1 || p.y < f.clip.y0 || p.y > f.clip.y1) return false;
  const auto side = [&](ImVec2 u, ImVec2 v) { return (v.x - u.x) * (p.y - u.y) - (v.y - u.y) * (p.x - u.x); };
  const float d1 = side(f.a, f.b), d2 = side(f.b, f.c), d3 = side(f.c, f.a);
  return !((d1 < 0 || d2 < 0 || d3 < 0) && (d1 > 0 || d2 > 0 || d3 > 0));
}

// What a point shows after the first `count` fills: the last opaque one under it with the translucent ones after
// it blended over; 0 when a picture or nothing lies under it.
std::uint32_t background_at(const std::vector<Fill>& fills, std::size_t count, ImVec2 p) {
  std::vector<std::uint32_t> over;  // translucent colours, topmost first
  for (std::size_t i = count; i-- > 0;) {
    if (!inside(fills[i], p)) continue;
    if (fills[i].colour == 0) return 0;
    if ((fills[i].colour >> 24) == 0xFF) {
      std::uint32_t c = fills[i].colour;
      for (auto it = over.rbegin(); it != over.rend(); ++it) c = blend_over(*it, c);
      return c;
    }
    if ((fills[i].colour >> 24) != 0) over.push_back(fills[i].colour);
  }
  return 0;
}

// What most of a glyph's box lies on, sampled at its middle and four points around it: a thin line or a frame's edge
// crossing the glyph is not what it is read against.
std::uint32_t background_of(const std::vector<Fill>& fills, std::size_t count, TextRect box, const TextRect& clip) {
  // Only its part in sight is read: the panel's background goes on under its edge, the cell under it does not.
  box = {std::max(box.x0, clip.x0), std::max(box.y0, clip.y0), std::min(box.x1, clip.x1), std::min(box.y1, clip.y1)};
  if (box.x1 <= box.x0 || box.y1 <= box.y0) return 0;
  const float cx = (box.x0 + box.x1) / 2, cy = (box.y0 + box.y1) / 2, dx = (box.x1 - box.x0) / 4,
              dy = (box.y1 - box.y0) / 4;
  const ImVec2 points[] = {{cx, cy}, {cx - dx, cy - dy}, {cx + dx, cy - dy}, {cx - dx, cy + dy}, {cx + dx, cy + dy}};
  std::uint32_t seen[5];
  for (int i = 0; i < 5; ++i) seen[i] = background_at(fills, count, points[i]);
  std::uint32_t best = seen[0];
  long best_count = 0;
  for (const std::uint32_t c : seen)
    if (const long n = std::count(seen, seen + 5, c); n > best_count) best = c, best_count = n;
  return best;
}

struct Walk {
  const std::unordered_map<std::uint64_t, AtlasGlyph>& corners;
  ImVec2 white;                    // the atlas's white pixel: solid fills are textured with it
  std::vector<Fill> fills;         // every draw list so far
  std::vector<std::size_t> under;  // per glyph of the current window: the fills drawn before it
};

// A glyph is a quad drawn as the triangles (v, v+1, v+2) and (v, v+2, v+3) whose first corner is a glyph's atlas
// corner; a fill is a triangle whose corners share one colour and the white pixel. Draw channels (tables, columns)
// share one vertex buffer, so only the command's own indices are read.
void triangles_of(const ImDrawList& dl, const ImDrawCmd& cmd, bool font_texture, Walk& walk,
                  std::vector<DrawnGlyph>& out) {
  const TextRect clip{cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w};
  const ImDrawIdx* idx = dl.IdxBuffer.Data + cmd.IdxOffset;
  for (unsigned k = 0; k + 3 <= cmd.ElemCount; k += 3) {
    const unsigned v = cmd.VtxOffset + idx[k];
    const ImDrawVert& a = dl.VtxBuffer[static_cast<int>(v)];
    const ImDrawVert& b = dl.VtxBuffer[static_cast<int>(cmd.VtxOffset + idx[k + 1])];
    const ImDrawVert& c3 = dl.VtxBuffer[static_cast<int>(cmd.VtxOffset + idx[k + 2])];
    if (!font_texture) {
      walk.fills.push_back({a.pos, b.pos, c3.pos, clip, 0});
      continue;
    }
    if (a.uv.x == walk.white.x && a.uv.y == walk.white.y && b.uv.x == walk.white.x && c3.uv.x == walk.white.x &&
        a.col == b.col && a.col == c3.col) {
      walk.fills.push_back({a.pos, b.pos, c3.pos, clip, a.col});
      continue;
    }
    const bool quad = k + 6 <= cmd.ElemCount && idx[k + 1] == idx[k] + 1 && idx[k + 2] == idx[k] + 2 &&
                      idx[k + 3] == idx[k] && idx[k + 4] == idx[k] + 2 && idx[k + 5] == idx[k] + 3;
    if (!quad) continue;
    const auto it = walk.corners.find(uv_key(a.uv));
    if (it == walk.corners.end()) continue;
    const ImFontGlyph& g = *it->second.glyph;
    const float z = it->second.scale;
    const ImDrawVert& c = dl.VtxBuffer[static_cast<int>(v + 2)];
    DrawnGlyph d;
    d.codepoint = g.Codepoint;
    // Shortened to its clip rectangle on the CPU. Only a glyph cut at the right is `cut`: one cut at the bottom (an
    // input field at a scrolling panel's edge) is seen by its whole box against the clip, which knows it scrolls.
    d.cut = c.uv.x != g.U1;
    d.box = d.cut || c.uv.y != g.V1
                ? TextRect{a.pos.x, a.pos.y, a.pos.x + z * (g.X1 - g.X0), a.pos.y + z * (g.Y1 - g.Y0)}
                : TextRect{a.pos.x, a.pos.y, c.pos.x, c.pos.y};
    d.clip = clip;
    d.line_top = a.pos.y - z * g.Y0;
    d.pen_x0 = a.pos.x - z * g.X0;
    d.pen_x1 = d.pen_x0 + z * g.AdvanceX;
    d.colour = a.col;
    d.font_px = it->second.font_px;
    out.push_back(d);
    walk.under.push_back(walk.fills.size());
    k += 3;  // the quad's second triangle
  }
}

// Content that reaches past what a window or a table column shows, with no scroll bar to reach it.
void overflow_problems(std::vector<std::string>& out) {
  ImGuiContext& g = *ImGui::GetCurrentContext();
  for (const ImGuiWindow* w : g.Windows) {
    if (!w->Active || w->Hidden || w->LastFrameActive != g.FrameCount || (w->Flags & ImGuiWindowFlags_MenuBar))
      continue;
    const float inner_w = w->InnerRect.GetWidth() - w->WindowPadding.x * 2,
                inner_h = w->InnerRect.GetHeight() - w->WindowPadding.y * 2;
    if (!w->ScrollbarX && w->ContentSize.x > inner_w + 1 && !(w->Flags & ImGuiWindowFlags_AlwaysAutoResize))
      out.push_back(window_name(w->Name) + ": content " + std::to_string(static_cast<int>(w->ContentSize.x - inner_w)) +
                    " px wider than the panel, cut off at the right");
    if (!w->ScrollbarY && w->ContentSize.y > inner_h + 1 && !(w->Flags & ImGuiWindowFlags_AlwaysAutoResize))
      out.push_back(window_name(w->Name) + ": content " + std::to_string(static_cast<int>(w->ContentSize.y - inner_h)) +
                    " px taller than the panel, cut off at the bottom");
  }
  for (int n = 0; n < g.Tables.GetMapSize(); ++n) {
    const ImGuiTable* t = g.Tables.TryGetMapData(n);
    if (!t || t->LastFrameActive != g.FrameCount) continue;
    for (int c = 0; c < t->ColumnsCount; ++c) {
      const ImGuiTableColumn& col = t->Columns[c];
      const float content = std::max(col.ContentMaxXUnfrozen, col.ContentMaxXHeadersUsed);
      if (col.IsEnabled && content > col.WorkMaxX + 1)
        out.push_back(window_name(t->OuterWindow->Name) + ": table column " + std::to_string(c + 1) + " cut off (" +
                      std::to_string(static_cast<int>(content - col.WorkMaxX)) + " px too narrow)");
    }
  }
}

}  // namespace

void NoteInSight(SightKind kind, std::string name, std::string what, ImVec2 min, ImVec2 max) {
  if (!LayoutCheckOn()) return;
  const ImGuiWindow* w = ImGui::GetCurrentWindow();
  ImRect visible = w->InnerClipRect;
  visible.ClipWithFull(ImRect(w->DrawList->GetClipRectMin(), w->DrawList->GetClipRectMax()));
  NoteSightItem({window_name(w->Name),
                 std::move(name),
                 std::move(what),
                 kind,
                 {min.x, min.y, max.x, max.y},
                 {visible.Min.x, visible.Min.y, visible.Max.x, visible.Max.y}});
}

void NoteChartPlotHere(std::string title, ImVec2 min, ImVec2 max) {
  if (LayoutCheckOn())
    NoteChartPlot({window_name(ImGui::GetCurrentWindow()->Name), std::move(title), {min.x, min.y, max.x, max.y}});
}

void ReportLineContrastHere(std::string what, ImU32 colour, ImU32 background) {
  if (LayoutCheckOn())
    NoteLineContrast(window_name(ImGui::GetCurrentWindow()->Name), std::move(what), colour, background);
}

void ReportHiddenHere(std::string what) {
  if (LayoutCheckOn()) NoteHiddenStroke(window_name(ImGui::GetCurrentWindow()->Name), std::move(what));
}

void ReportHere(std::string what) {
  if (LayoutCheckOn()) ReportLayoutProblem(window_name(ImGui::GetCurrentWindow()->Name), std::move(what));
}

std::vector<DrawnText> DrawnTextOf(const ImDrawData& data) {
  const auto corners = glyphs_by_corner();
  const ImTextureID font_texture = ImGui::GetIO().Fonts->TexID;
  Walk walk{corners, ImGui::GetIO().Fonts->TexUvWhitePixel, {}, {}};
  std::vector<DrawnText> windows;
  for (int i = 0; i < data.CmdListsCount; ++i) {
    const ImDrawList& dl = *data.CmdLists[i];
    DrawnText w;
    w.window = window_name(dl._OwnerName);
    if (const ImGuiWindow* win = dl._OwnerName ? ImGui::FindWindowByName(dl._OwnerName) : nullptr) {
      w.scrolls_x = win->ScrollMax.x > 0;
      w.scrolls_y = win->ScrollMax.y > 0;
    }
    walk.under.clear();
    for (const ImDrawCmd& cmd : dl.CmdBuffer)
      if (!cmd.UserCallback) triangles_of(dl, cmd, cmd.TextureId == font_texture, walk, w.glyphs);
    for (std::size_t g = 0; g < w.glyphs.size(); ++g)
      w.glyphs[g].background = background_of(walk.fills, walk.under[g], w.glyphs[g].box, w.glyphs[g].clip);
    if (!w.glyphs.empty()) windows.push_back(std::move(w));
  }
  return windows;
}

std::vector<std::string> LayoutProblemsOfFrame(bool judge_sight) {
  std::vector<std::string> all = TakeLayoutReports();
  const std::vector<std::string> lines = TakeLineContrastProblems();
  all.insert(all.end(), lines.begin(), lines.end());
  overflow_problems(all);
  const std::string lesson_text = TakeLessonText();
  const std::vector<SightItem> items = TakeSightItems();
  const std::vector<std::string> hidden = TakeHiddenStrokes();
  const std::vector<ChartPlot> charts = TakeChartPlots();
  if (judge_sight && !lesson_text.empty()) {  // a lesson page's charts are what it shows the class
    const std::vector<std::string> small =
        charts_too_small(charts, ImGui::GetIO().DisplaySize.x, ImGui::GetIO().DisplaySize.y);
    all.insert(all.end(), small.begin(), small.end());
  }
  if (judge_sight) {
    const std::vector<std::string> unseen = items_out_of_sight(items, lesson_text);
    all.insert(all.end(), unseen.begin(), unseen.end());
    all.insert(all.end(), hidden.begin(), hidden.end());
  }
  if (const ImDrawData* data = ImGui::GetDrawData()) {
    const std::vector<DrawnText> drawn = DrawnTextOf(*data);
    const std::vector<std::string> text = text_problems(drawn);
    all.insert(all.end(), text.begin(), text.end());
    const std::vector<std::string> quotes = quotes_off_screen(drawn, lesson_text);
    all.insert(all.end(), quotes.begin(), quotes.end());
    const std::vector<std::string> faint = contrast_problems(drawn);
    all.insert(all.end(), faint.begin(), faint.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace attn::ui
