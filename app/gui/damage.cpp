#include "app/gui/damage.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>

namespace attn::gui {

ScreenRect bounding(const ScreenRect& a, const ScreenRect& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

namespace {

std::size_t mix(std::size_t h, std::size_t v) { return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull; }

std::size_t float_bits(float f) {
  std::uint32_t u = 0;
  static_assert(sizeof u == sizeof f);
  std::memcpy(&u, &f, sizeof u);
  return u;
}

ScreenRect clipped(const ScreenRect& r, const ScreenRect& to) {
  return {std::max(r.x0, to.x0), std::max(r.y0, to.y0), std::min(r.x1, to.x1), std::min(r.y1, to.y1)};
}

bool overlap(const ScreenRect& a, const ScreenRect& b) { return !clipped(a, b).empty(); }

// Overlapping rectangles joined into their bounding one, until none overlap: no pixel is drawn twice.
std::vector<ScreenRect> disjoint(std::vector<ScreenRect> rects) {
  for (bool joined = true; joined;) {
    joined = false;
    for (std::size_t i = 0; i < rects.size() && !joined; ++i)
      for (std::size_t j = i + 1; j < rects.size() && !joined; ++j)
        if (overlap(rects[i], rects[j])) {
          rects[i] = bounding(rects[i], rects[j]);
          rects.erase(rects.begin() + static_cast<std::ptrdiff_t>(j));
          joined = true;
        }
  }
  return rects;
}

// One command: what it draws with, the indices it draws and the vertices they name (a command draws the same pixels
// when these are the same and what is under it is too), and their bounding box within its clip rectangle.
CommandPrint command_print(const ImDrawList& list, const ImDrawCmd& c,
                           const std::function<std::uint64_t(ImTextureID)>& pixels_version) {
  CommandPrint p;
  for (const std::size_t v :
       {float_bits(c.ClipRect.x), float_bits(c.ClipRect.y), float_bits(c.ClipRect.z), float_bits(c.ClipRect.w),
        reinterpret_cast<std::size_t>(c.TextureId), std::size_t{pixels_version(c.TextureId)}, std::size_t{c.ElemCount},
        reinterpret_cast<std::size_t>(c.UserCallback), reinterpret_cast<std::size_t>(c.UserCallbackData)})
    p.hash = mix(p.hash, v);
  if (c.ElemCount == 0 || c.IdxOffset + c.ElemCount > static_cast<unsigned>(list.IdxBuffer.Size)) return p;
  const std::span<const ImDrawIdx> indices(list.IdxBuffer.Data + c.IdxOffset, c.ElemCount);
  const auto [lo, hi] = std::ranges::minmax(indices);
  const std::size_t first = c.VtxOffset + lo, count = static_cast<std::size_t>(hi - lo) + 1;
  if (first + count > static_cast<std::size_t>(list.VtxBuffer.Size)) return p;
  const std::span<const ImDrawVert> vertices(list.VtxBuffer.Data + first, count);
  // Indices counted from the first vertex used: the same shapes further along the list (an earlier command grew) hash
  // the same.
  for (const ImDrawIdx i : indices) p.hash = mix(p.hash, static_cast<std::size_t>(i - lo));
  p.hash = mix(p.hash,
               std::hash<std::string_view>()({reinterpret_cast<const char*>(vertices.data()), vertices.size_bytes()}));
  ScreenRect box{vertices[0].pos.x, vertices[0].pos.y, vertices[0].pos.x, vertices[0].pos.y};
  for (const ImDrawVert& v : vertices)
    box = {std::min(box.x0, v.pos.x), std::min(box.y0, v.pos.y), std::max(box.x1, v.pos.x), std::max(box.y1, v.pos.y)};
  p.bounds = clipped(box, {c.ClipRect.x, c.ClipRect.y, c.ClipRect.z, c.ClipRect.w});
  return p;
}

}  // namespace

ListPrint print(const ImDrawList& list, const std::function<std::uint64_t(ImTextureID)>& pixels_version) {
  ListPrint p{list._OwnerName ? list._OwnerName : "", 0, {}, {}};
  for (const ImDrawCmd& c : list.CmdBuffer) {
    p.commands.push_back(command_print(list, c, pixels_version));
    p.hash = mix(p.hash, p.commands.back().hash);
    if (c.ElemCount > 0) p.bounds = bounding(p.bounds, {c.ClipRect.x, c.ClipRect.y, c.ClipRect.z, c.ClipRect.w});
  }
  return p;
}

std::vector<ScreenRect> damaged(const std::vector<ListPrint>& before, const std::vector<ListPrint>& now,
                                ScreenRect display) {
  const auto same_owner = [](const ListPrint& a, const ListPrint& b) { return a.owner == b.owner; };
  if (!std::ranges::equal(before, now, same_owner)) return {display};
  std::vector<ScreenRect> rects;
  auto add = [&](const ScreenRect& was, const ScreenRect& is) {
    const ScreenRect r = clipped(bounding(was, is), display);
    if (!r.empty()) rects.push_back(r);
  };
  for (std::size_t i = 0; i < now.size(); ++i) {
    const ListPrint &b = before[i], &n = now[i];
    if (b.hash == n.hash) continue;
    if (b.commands.size() != n.commands.size()) {
      add(b.bounds, n.bounds);
      continue;
    }
    for (std::size_t k = 0; k < n.commands.size(); ++k)
      if (b.commands[k].hash != n.commands[k].hash) add(b.commands[k].bounds, n.commands[k].bounds);
  }
  return disjoint(std::move(rects));
}

}  // namespace attn::gui
