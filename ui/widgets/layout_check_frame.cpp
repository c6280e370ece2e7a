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
  float scale;
};

// Every visible glyph of every loaded font by the atlas corner its quads start at.
std::unordered_map<std::uint64_t, AtlasGlyph> glyphs_by_corner() {
  std::unordered_map<std::uint64_t, AtlasGlyph> map;
  for (const ImFont* font : ImGui::GetIO().Fonts->Fonts)
    for (const ImFontGlyph& g : font->Glyphs)
      if (g.Visible) map.emplace(uv_key({g.U0, g.V0}), AtlasGlyph{&g, font->Scale});
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

// A glyph is a quad drawn as the triangles (v, v+1, v+2) and (v, v+2, v+3) whose first corner is a glyph's atlas
// corner. Draw channels (tables, columns) share one vertex buffer, so only the command's own indices are read.
void glyphs_of(const ImDrawList& dl, const ImDrawCmd& cmd, const std::unordered_map<std::uint64_t, AtlasGlyph>& corners,
               std::vector<DrawnGlyph>& out) {
  const TextRect clip{cmd.ClipRect.x, cmd.ClipRect.y, cmd.ClipRect.z, cmd.ClipRect.w};
  const ImDrawIdx* idx = dl.IdxBuffer.Data + cmd.IdxOffset;
  for (unsigned k = 0; k + 6 <= cmd.ElemCount; k += 3) {
    const unsigned v = cmd.VtxOffset + idx[k];
    const bool quad = idx[k + 1] == idx[k] + 1 && idx[k + 2] == idx[k] + 2 && idx[k + 3] == idx[k] &&
                      idx[k + 4] == idx[k] + 2 && idx[k + 5] == idx[k] + 3;
    if (!quad) continue;
    const ImDrawVert& a = dl.VtxBuffer[static_cast<int>(v)];
    const auto it = corners.find(uv_key(a.uv));
    if (it == corners.end()) continue;
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
    out.push_back(d);
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

void ReportHere(std::string what) {
  if (LayoutCheckOn()) ReportLayoutProblem(window_name(ImGui::GetCurrentWindow()->Name), std::move(what));
}

std::vector<DrawnText> DrawnTextOf(const ImDrawData& data) {
  const auto corners = glyphs_by_corner();
  const ImTextureID font_texture = ImGui::GetIO().Fonts->TexID;
  std::vector<DrawnText> windows;
  for (int i = 0; i < data.CmdListsCount; ++i) {
    const ImDrawList& dl = *data.CmdLists[i];
    DrawnText w;
    w.window = window_name(dl._OwnerName);
    if (const ImGuiWindow* win = dl._OwnerName ? ImGui::FindWindowByName(dl._OwnerName) : nullptr) {
      w.scrolls_x = win->ScrollMax.x > 0;
      w.scrolls_y = win->ScrollMax.y > 0;
    }
    for (const ImDrawCmd& cmd : dl.CmdBuffer)
      if (!cmd.UserCallback && cmd.TextureId == font_texture) glyphs_of(dl, cmd, corners, w.glyphs);
    if (!w.glyphs.empty()) windows.push_back(std::move(w));
  }
  return windows;
}

std::vector<std::string> LayoutProblemsOfFrame() {
  std::vector<std::string> all = TakeLayoutReports();
  overflow_problems(all);
  if (const ImDrawData* data = ImGui::GetDrawData()) {
    const std::vector<DrawnText> drawn = DrawnTextOf(*data);
    const std::vector<std::string> text = text_problems(drawn);
    all.insert(all.end(), text.begin(), text.end());
    const std::vector<std::string> quotes = quotes_off_screen(drawn, TakeLessonText());
    all.insert(all.end(), quotes.begin(), quotes.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

}  // namespace attn::ui
