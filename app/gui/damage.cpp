#include "app/gui/damage.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace attn::gui {
namespace {

std::size_t mix(std::size_t h, std::size_t v) { return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull; }

template <typename T>
std::size_t bytes_hash(const ImVector<T>& v) {
  return std::hash<std::string_view>()({reinterpret_cast<const char*>(v.Data), v.Size * sizeof(T)});
}

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

}  // namespace

ScreenRect bounding(const ScreenRect& a, const ScreenRect& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

ListPrint print(const ImDrawList& list, const std::function<std::uint64_t(ImTextureID)>& pixels_version) {
  ListPrint p{list._OwnerName ? list._OwnerName : "", mix(bytes_hash(list.VtxBuffer), bytes_hash(list.IdxBuffer)), {}};
  for (const ImDrawCmd& c : list.CmdBuffer) {
    for (const std::size_t v :
         {float_bits(c.ClipRect.x), float_bits(c.ClipRect.y), float_bits(c.ClipRect.z), float_bits(c.ClipRect.w),
          reinterpret_cast<std::size_t>(c.TextureId), std::size_t{pixels_version(c.TextureId)},
          std::size_t{c.VtxOffset}, std::size_t{c.IdxOffset}, std::size_t{c.ElemCount},
          reinterpret_cast<std::size_t>(c.UserCallback), reinterpret_cast<std::size_t>(c.UserCallbackData)})
      p.hash = mix(p.hash, v);
    if (c.ElemCount > 0) p.bounds = bounding(p.bounds, {c.ClipRect.x, c.ClipRect.y, c.ClipRect.z, c.ClipRect.w});
  }
  return p;
}

std::vector<ScreenRect> damaged(const std::vector<ListPrint>& before, const std::vector<ListPrint>& now,
                                ScreenRect display) {
  const auto same_owner = [](const ListPrint& a, const ListPrint& b) { return a.owner == b.owner; };
  if (!std::ranges::equal(before, now, same_owner)) return {display};
  std::vector<ScreenRect> rects;
  for (std::size_t i = 0; i < now.size(); ++i)
    if (before[i].hash != now[i].hash) {
      const ScreenRect r = clipped(bounding(before[i].bounds, now[i].bounds), display);
      if (!r.empty()) rects.push_back(r);
    }
  return disjoint(std::move(rects));
}

}  // namespace attn::gui
