// Which rectangles of the window a frame draws again (app/gui/damage.h), on draw lists made by hand: a frame that
// draws what the last one drew draws nothing, a changed command is drawn again where it was and where it is, a
// texture whose pixels changed counts as a change, and lists opened, closed or reordered redraw the whole window.
// (That what is drawn in part equals the frame drawn whole, pixel for pixel, is the window test ui_damage_check.)
#include <doctest/doctest.h>

#include <map>

#include "app/gui/damage.h"

using namespace attn::gui;

namespace {

const ScreenRect kDisplay{0, 0, 1600, 900};

// A list named `owner` with one textured quad at [x0, x1) x [y0, y1), clipped to `clip`.
struct Quad {
  float x0, y0, x1, y1;
  ImTextureID texture = nullptr;
  ImU32 colour = 0xffffffff;
};
ImDrawList list_of(const char* owner, ScreenRect clip, const std::vector<Quad>& quads) {
  ImDrawList l(nullptr);
  l._OwnerName = owner;
  for (const Quad& q : quads) {
    const unsigned base = static_cast<unsigned>(l.VtxBuffer.Size);
    for (const ImVec2 p : {ImVec2{q.x0, q.y0}, ImVec2{q.x1, q.y0}, ImVec2{q.x1, q.y1}, ImVec2{q.x0, q.y1}})
      l.VtxBuffer.push_back({p, {0, 0}, q.colour});
    for (const unsigned i : {0u, 1u, 2u, 0u, 2u, 3u}) l.IdxBuffer.push_back(static_cast<ImDrawIdx>(base + i));
    ImDrawCmd cmd;
    cmd.ClipRect = {clip.x0, clip.y0, clip.x1, clip.y1};
    cmd.TextureId = q.texture;
    cmd.IdxOffset = static_cast<unsigned>(l.IdxBuffer.Size) - 6;
    cmd.ElemCount = 6;
    l.CmdBuffer.push_back(cmd);
  }
  return l;
}

std::map<ImTextureID, std::uint64_t> versions;
std::uint64_t version_of(ImTextureID t) { return versions.count(t) ? versions[t] : 0; }

ListPrint p(const char* owner, ScreenRect clip, const std::vector<Quad>& quads) {
  const ImDrawList l = list_of(owner, clip, quads);
  ListPrint out = print(l, version_of);
  return out;
}

const ScreenRect kLeft{0, 20, 300, 880}, kRight{1300, 20, 1600, 880}, kCentre{300, 20, 1300, 600};

}  // namespace

TEST_CASE("a frame that draws what the last one drew draws nothing") {
  const std::vector<ListPrint> a{p("Inputs", kLeft, {{10, 30, 200, 60}}), p("Heads", kRight, {{1310, 30, 1400, 120}})};
  const std::vector<ListPrint> b{p("Inputs", kLeft, {{10, 30, 200, 60}}), p("Heads", kRight, {{1310, 30, 1400, 120}})};
  CHECK(damaged(a, b, kDisplay).empty());
}

TEST_CASE("a changed command is drawn again where it was and where it is, nothing else") {
  const std::vector<ListPrint> a{p("Inputs", kLeft, {{10, 30, 200, 60}}), p("Heads", kRight, {{1310, 30, 1400, 120}})};
  const std::vector<ListPrint> b{p("Inputs", kLeft, {{10, 30, 200, 60}}),
                                 p("Heads", kRight, {{1310, 30, 1400, 120, nullptr, 0xff0000ff}})};  // recoloured
  CHECK(damaged(a, b, kDisplay) == std::vector<ScreenRect>{{1310, 30, 1400, 120}});
  // Moved: where it was and where it is; cut to its clip rectangle.
  const std::vector<ListPrint> c{p("Inputs", kLeft, {{150, 30, 350, 60}}), p("Heads", kRight, {{1310, 30, 1400, 120}})};
  CHECK(damaged(a, c, kDisplay) == std::vector<ScreenRect>{{10, 30, 300, 60}});
  // Two that do not overlap stay two rectangles; ones that overlap become their bounding one.
  const std::vector<ListPrint> d{p("Inputs", kLeft, {{10, 30, 200, 61}}), p("Heads", kRight, {{1310, 30, 1400, 121}})};
  CHECK(damaged(a, d, kDisplay) == std::vector<ScreenRect>{{10, 30, 200, 61}, {1310, 30, 1400, 121}});
  const std::vector<ListPrint> e{p("Pipeline", kCentre, {{310, 30, 400, 60}}),
                                 p("Explanation", kCentre, {{350, 50, 450, 90}})};
  const std::vector<ListPrint> f{p("Pipeline", kCentre, {{310, 30, 400, 70}}),
                                 p("Explanation", kCentre, {{350, 50, 450, 91}})};
  CHECK(damaged(e, f, kDisplay) == std::vector<ScreenRect>{{310, 30, 450, 91}});
  // A command whose clip rectangle alone changed is drawn again where its shapes are.
  const std::vector<ListPrint> g{p("Inputs", {0, 20, 350, 880}, {{10, 30, 200, 60}}),
                                 p("Heads", kRight, {{1310, 30, 1400, 120}})};
  CHECK(damaged(a, g, kDisplay) == std::vector<ScreenRect>{{10, 30, 200, 60}});
}

TEST_CASE("a list with commands gained or lost is drawn again within its old and new clip rectangles") {
  const std::vector<ListPrint> a{p("Heads", kRight, {{1310, 30, 1400, 120}})};
  const std::vector<ListPrint> b{p("Heads", kRight, {{1310, 30, 1400, 120}, {1310, 130, 1400, 220}})};
  CHECK(damaged(a, b, kDisplay) == std::vector<ScreenRect>{kRight});
}

TEST_CASE("a command drawing the same shapes further along the list (an earlier one grew) is unchanged") {
  ImTextureID heatmap = reinterpret_cast<ImTextureID>(std::intptr_t{7});
  ImDrawList before = list_of("Heads", kRight, {{1310, 30, 1400, 120}, {1310, 300, 1400, 400, heatmap}});
  ImDrawList after = list_of("Heads", kRight, {{1310, 30, 1400, 120}, {1310, 300, 1400, 400, heatmap}});
  // The first command now draws a second quad: its vertices and indices come before the heatmap's.
  after.VtxBuffer.resize(0);
  after.IdxBuffer.resize(0);
  after.CmdBuffer.resize(0);
  ImDrawList grown = list_of("Heads", kRight, {{1310, 30, 1400, 120}, {1310, 130, 1400, 140}});
  ImDrawList heat = list_of("Heads", kRight, {{1310, 300, 1400, 400, heatmap}});
  for (const ImDrawVert& v : grown.VtxBuffer) after.VtxBuffer.push_back(v);
  for (const ImDrawIdx i : grown.IdxBuffer) after.IdxBuffer.push_back(i);
  ImDrawCmd first = grown.CmdBuffer[0];
  first.ElemCount = 12;  // both quads in one command
  after.CmdBuffer.push_back(first);
  ImDrawCmd second = heat.CmdBuffer[0];
  second.VtxOffset = static_cast<unsigned>(grown.VtxBuffer.Size);
  second.IdxOffset = static_cast<unsigned>(after.IdxBuffer.Size);
  for (const ImDrawIdx i : heat.IdxBuffer) after.IdxBuffer.push_back(i);
  for (const ImDrawVert& v : heat.VtxBuffer) after.VtxBuffer.push_back(v);
  after.CmdBuffer.push_back(second);
  CHECK(damaged({print(before, version_of)}, {print(after, version_of)}, kDisplay) ==
        std::vector<ScreenRect>{{1310, 30, 1400, 140}});
}

TEST_CASE("a texture whose pixels were replaced counts as a change of the commands that sample it") {
  ImTextureID heatmap = reinterpret_cast<ImTextureID>(std::intptr_t{7});
  versions[heatmap] = 1;
  const std::vector<ListPrint> a{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}, {500, 30, 600, 60}})};
  versions[heatmap] = 2;
  const std::vector<ListPrint> b{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}, {500, 30, 600, 60}})};
  CHECK(damaged(a, b, kDisplay) == std::vector<ScreenRect>{{310, 30, 400, 60}});
  const std::vector<ListPrint> c{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}, {500, 30, 600, 60}})};
  CHECK(damaged(b, c, kDisplay).empty());  // the same version again: no change
  versions.clear();
}

TEST_CASE("lists opened, closed or reordered redraw the whole window, and damage stays within it") {
  const ListPrint inputs = p("Inputs", kLeft, {{10, 30, 200, 60}}), heads = p("Heads", kRight, {});
  const ListPrint tooltip = p("##Tooltip_00", {100, 100, 300, 140}, {{100, 100, 300, 140}});
  CHECK(damaged({inputs, heads}, {inputs, heads, tooltip}, kDisplay) == std::vector<ScreenRect>{kDisplay});
  CHECK(damaged({inputs, heads, tooltip}, {inputs, heads}, kDisplay) == std::vector<ScreenRect>{kDisplay});
  CHECK(damaged({inputs, heads}, {heads, inputs}, kDisplay) == std::vector<ScreenRect>{kDisplay});
  CHECK(damaged({}, {inputs}, kDisplay) == std::vector<ScreenRect>{kDisplay});  // the first frame
  const ScreenRect beyond{-50, 0, 2000, 1000};
  const ListPrint edge = p("Heads", beyond, {{1500, 800, 1700, 1000}});
  const ListPrint edge_red = p("Heads", beyond, {{1500, 800, 1700, 1000, nullptr, 0xff0000ff}});
  CHECK(damaged({inputs, edge}, {inputs, edge_red}, kDisplay) == std::vector<ScreenRect>{{1500, 800, 1600, 900}});
}

TEST_CASE("a list's bounds are its drawing commands' clip rectangles, an empty command adding none") {
  ImDrawList l = list_of("Heads", kRight, {{1310, 30, 1400, 120}});
  ImDrawCmd empty;
  empty.ClipRect = {0, 0, 10, 10};
  l.CmdBuffer.push_back(empty);
  const ListPrint lp = print(l, version_of);
  CHECK(lp.bounds == kRight);
  CHECK(lp.owner == "Heads");
  REQUIRE(lp.commands.size() == 2);
  CHECK(lp.commands[0].bounds == ScreenRect{1310, 30, 1400, 120});  // its vertices within its clip rectangle
  CHECK(lp.commands[1].bounds.empty());
  CHECK(print(ImDrawList(nullptr), version_of).bounds.empty());
}
