#include "ui/widgets/clear_fill.h"

#include <GL/gl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attn::ui {
namespace {

// The rectangle travels as the command's clip rectangle and the colour in the callback's pointer, so that
// nothing has to outlive the frame.
void clear_rect(const ImDrawList*, const ImDrawCmd* cmd) {
  const ImDrawData* d = ImGui::GetDrawData();
  const ImVec2 scale = d->FramebufferScale;
  const int fb_w = static_cast<int>(d->DisplaySize.x * scale.x), fb_h = static_cast<int>(d->DisplaySize.y * scale.y);
  const ImVec4 r = cmd->ClipRect;
  const int x0 = std::clamp(static_cast<int>(std::lround((r.x - d->DisplayPos.x) * scale.x)), 0, fb_w);
  const int x1 = std::clamp(static_cast<int>(std::lround((r.z - d->DisplayPos.x) * scale.x)), 0, fb_w);
  const int y0 = std::clamp(static_cast<int>(std::lround((r.y - d->DisplayPos.y) * scale.y)), 0, fb_h);
  const int y1 = std::clamp(static_cast<int>(std::lround((r.w - d->DisplayPos.y) * scale.y)), 0, fb_h);
  if (x1 <= x0 || y1 <= y0) return;
  const ImVec4 c =
      ImGui::ColorConvertU32ToFloat4(static_cast<ImU32>(reinterpret_cast<std::uintptr_t>(cmd->UserCallbackData)));
  glScissor(x0, fb_h - y1, x1 - x0, y1 - y0);  // GL counts rows from the bottom; the backend keeps the scissor test on
  glClearColor(c.x, c.y, c.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
}

}  // namespace

void AddClearRect(ImDrawList* list, ImVec2 min, ImVec2 max, ImU32 col) {
  list->PushClipRect(min, max, true);
  list->AddCallback(clear_rect, reinterpret_cast<void*>(static_cast<std::uintptr_t>(col)));
  list->PopClipRect();
}

}  // namespace attn::ui
