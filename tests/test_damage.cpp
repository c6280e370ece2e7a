// Which rectangles of the window a frame draws again (app/gui/damage.h), on draw lists made by hand: a frame that
// draws what the last one drew draws nothing, a changed list is drawn again where it was and where it is, a texture
// whose pixels changed counts as a change, and lists opened, closed or reordered redraw the whole window.
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

TEST_CASE("a list that changed is drawn again within where it was and where it is, the others not") {
  const std::vector<ListPrint> a{p("Inputs", kLeft, {{10, 30, 200, 60}}), p("Heads", kRight, {{1310, 30, 1400, 120}})};
  const std::vector<ListPrint> b{p("Inputs", kLeft, {{10, 30, 200, 60}}),
                                 p("Heads", kRight, {{1310, 30, 1400, 120, nullptr, 0xff0000ff}})};  // recoloured
  CHECK(damaged(a, b, kDisplay) == std::vector<ScreenRect>{kRight});
  // A list whose clip rectangle grew: the union of both.
  const std::vector<ListPrint> c{p("Inputs", {0, 20, 350, 880}, {{10, 30, 200, 60}}),
                                 p("Heads", kRight, {{1310, 30, 1400, 120}})};
  CHECK(damaged(a, c, kDisplay) == std::vector<ScreenRect>{{0, 20, 350, 880}});
  // Two changed lists that do not overlap stay two rectangles; ones that overlap become their bounding one.
  const std::vector<ListPrint> d{p("Inputs", kLeft, {{10, 30, 200, 61}}), p("Heads", kRight, {{1310, 30, 1400, 121}})};
  CHECK(damaged(a, d, kDisplay) == std::vector<ScreenRect>{kLeft, kRight});
  const std::vector<ListPrint> e{p("Inputs", kLeft, {{10, 30, 200, 60}}), p("Pipeline", kCentre, {{310, 30, 400, 60}})};
  const std::vector<ListPrint> f{p("Inputs", {0, 20, 320, 880}, {{10, 30, 200, 60}}),
                                 p("Pipeline", kCentre, {{310, 30, 400, 70}})};
  CHECK(damaged(e, f, kDisplay) == std::vector<ScreenRect>{{0, 20, 1300, 880}});
}

TEST_CASE("a texture whose pixels were replaced counts as a change of the lists that sample it") {
  ImTextureID heatmap = reinterpret_cast<ImTextureID>(std::intptr_t{7});
  versions[heatmap] = 1;
  const std::vector<ListPrint> a{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}}), p("Heads", kRight, {})};
  versions[heatmap] = 2;
  const std::vector<ListPrint> b{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}}), p("Heads", kRight, {})};
  CHECK(damaged(a, b, kDisplay) == std::vector<ScreenRect>{kCentre});
  const std::vector<ListPrint> c{p("Pipeline", kCentre, {{310, 30, 400, 60, heatmap}}), p("Heads", kRight, {})};
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
  const ListPrint wide = p("Inputs", {-50, 0, 2000, 1000}, {{10, 30, 200, 60}});
  CHECK(damaged({inputs, heads}, {wide, heads}, kDisplay) == std::vector<ScreenRect>{kDisplay});
}

TEST_CASE("a list's bounds are its drawing commands' clip rectangles, an empty command adding none") {
  ImDrawList l = list_of("Heads", kRight, {{1310, 30, 1400, 120}});
  ImDrawCmd empty;
  empty.ClipRect = {0, 0, 10, 10};
  l.CmdBuffer.push_back(empty);
  CHECK(print(l, version_of).bounds == kRight);
  CHECK(print(l, version_of).owner == "Heads");
  CHECK(print(ImDrawList(nullptr), version_of).bounds.empty());
}
