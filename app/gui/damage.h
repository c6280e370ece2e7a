#pragma once
// Which parts of the window a frame changed. A software renderer (Mesa llvmpipe: virtual machines, classroom PCs
// without a GPU driver) shades every pixel of every triangle on the CPU, about 15 ms a frame at 1600x900, and those
// cores are the ones computing the trace. Most frames, even while a drag streams edits, draw what the frame before
// drew (the views show the last trace until the worker delivers the next), so the window is drawn into a canvas that
// keeps its pixels, and only the rectangles whose draw lists changed are drawn again.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <imgui.h>

namespace attn::gui {

// [x0, x1) x [y0, y1) in the display's coordinates (ImGui's, top-left origin).
struct ScreenRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool empty() const { return x1 <= x0 || y1 <= y0; }
  bool operator==(const ScreenRect&) const = default;
};
ScreenRect bounding(const ScreenRect& a,
                    const ScreenRect& b);  // the smallest rectangle holding both (empty ones add nothing)

// What one draw list drew: its window, a hash of everything the GPU reads from it (vertices, indices, commands, and
// the version of the pixels of each texture they sample), and where it can draw.
struct CommandPrint {
  std::size_t hash = 0;  // of its clip rectangle, texture and pixels version, indices and the vertices they use
  ScreenRect bounds;     // where it can draw: its vertices' bounding box within its clip rectangle
};
struct ListPrint {
  std::string owner;  // the window's name, which orders the lists: "Heads", "Inputs/list_E7719207", "##Tooltip_00"
  std::size_t hash = 0;
  ScreenRect bounds;  // the union of its commands' clip rectangles
  std::vector<CommandPrint> commands;
};
// `pixels_version`: how many times a texture's pixels have been replaced (ui::TexturePixelsVersion).
ListPrint print(const ImDrawList& list, const std::function<std::uint64_t(ImTextureID)>& pixels_version);

// The rectangles to draw again, given the last frame's prints and this one's, none overlapping: where each changed
// command of a changed list was and is, or the list's old and new bounds when its commands are others in number. The
// whole display when the lists are others or in another order (a popup opened or closed, a window brought to the
// front), since a list that moved under another would not show as changed.
std::vector<ScreenRect> damaged(const std::vector<ListPrint>& before, const std::vector<ListPrint>& now,
                                ScreenRect display);

}  // namespace attn::gui
