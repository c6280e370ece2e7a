#pragma once
// The window's pixels, kept between frames in an off-screen framebuffer so that a frame draws again only the
// rectangles it changed (damage.h), then copies the whole of it to the window's back buffer. Also the OpenGL 3
// framebuffer calls it and the pictures use, and the frame's clear.
#include <GL/gl.h>
#include <GL/glext.h>
#include <imgui.h>

#include <optional>
#include <string>
#include <vector>

#include "app/gui/damage.h"
#include "app/gui/x11_window.h"

namespace attn::gui {

// OpenGL 3 framebuffer calls, which the GL 1.1 headers do not declare: loaded through GLFW.
struct FramebufferApi {
  PFNGLGENFRAMEBUFFERSPROC gen = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind = nullptr;
  PFNGLFRAMEBUFFERTEXTURE2DPROC attach = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC status = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC remove = nullptr;
  PFNGLBLITFRAMEBUFFERPROC blit = nullptr;
};
// Loaded once (a GL context must be current); nullptr when the driver lacks them.
const FramebufferApi* framebuffers();

// The bound framebuffer's [0, width) x [0, height) cleared to the panels' background colour (within the scissor
// rectangle, if the test is on). The panels tile the window and draw no background of their own (BeginPanel), so
// this clear is every panel's background: an unscissored clear, which a software renderer does as a memory fill,
// where a background drawn or cleared per panel costs llvmpipe about 3.5 ms of CPU a frame at 1600x900.
void clear_to_background(int width, int height);

// A texture-backed framebuffer of the window's size.
struct OffscreenTarget {
  GLuint texture = 0, framebuffer = 0;
  int width = 0, height = 0;
  bool ready(int w, int h);  // made (again) at w x h; false when the driver cannot complete it
  void release();            // its texture and framebuffer deleted
};

struct Canvas {
  OffscreenTarget pixels;
  std::vector<ListPrint> prints;     // the draw lists it holds
  std::optional<RegionCopy> region;  // when set, a frame changed in part reaches the window without a swap
  // --check-damage: every frame drawn in part is drawn whole too, into `whole`, and the two compared pixel for pixel.
  bool check = false;
  OffscreenTarget whole;
  int checked = 0, differed = 0;  // frames drawn in part and compared; of those, frames whose pixels differed
  std::string first_difference;   // "frame 12 drawn in part: pixel (400, 300 from the top) ..."
  // And every frame sent to the window in part (`region`): the window's pixels read back and compared with the canvas.
  int sent = 0, sent_differed = 0;
  std::string first_sent_difference;  // "frame 3 sent in part: pixel (400, 300 from the top) ..."
};

// Draws `d` into the canvas, all of it when `anew` (the first frame, a new look, size or exposure), else only what
// changed since the last call, and copies the canvas to the window's back buffer. Returns whether it did, for a swap:
// not when nothing changed, unless `present` (a capture reads the back buffer every frame), nor when `c.region` sent
// the changed rectangle to the window itself. Without framebuffers every frame is drawn whole, straight to the
// window.
bool present_frame(Canvas& c, ImDrawData& d, int width, int height, bool anew, bool present);

}  // namespace attn::gui
