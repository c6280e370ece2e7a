#pragma once
// Large flat backgrounds filled by the GPU's clear instead of two shaded triangles. A software renderer
// (Mesa llvmpipe: virtual machines, classroom PCs without a driver) runs the fragment shader for every
// pixel of a triangle, and the panels' backgrounds are the whole window: filling them by a scissored clear
// halves the time a frame takes there. On a hardware GPU either way costs nothing.
#include <imgui.h>

namespace attn::ui {

// Queues, in `list` at its current position, a fill of [min, max) with `col` (opaque), done as a clear of
// that rectangle when the list is rendered. Draw it into a list rendered before what covers it (the
// background draw list for a window's background).
void AddClearRect(ImDrawList* list, ImVec2 min, ImVec2 max, ImU32 col);

}  // namespace attn::ui
