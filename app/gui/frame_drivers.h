#pragma once
// What drives the window instead of a person, for measurements and tests: a hook before and after every
// frame. --bench-frames edits the document every frame and times frames and edit-to-view latency;
// --soak performs seeded random actions and key presses and checks the views against fresh computation.
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include <imgui.h>

#include "ui/logic/app_state.h"

namespace attn::gui {

class FrameDriver {
 public:
  virtual ~FrameDriver() = default;
  virtual void before_frame(ui::AppState& state) = 0;
  // Once the frame is on screen. False ends the run.
  virtual bool after_frame(ui::AppState& state) = 0;
  // Prints the result; returns the exit code.
  virtual int report(const ui::AppState& state, std::ostream& out, std::ostream& err) = 0;
  // The size the frame is laid out for, when the driver chooses it; else the window's.
  virtual std::optional<ImVec2> display_size() const { return std::nullopt; }
  // Whether its frames come at the display's rate, as a person's do (pace_frame), rather than as fast as they draw.
  virtual bool paced() const { return false; }
};

std::unique_ptr<FrameDriver> make_bench_frames(int frames);
std::unique_ptr<FrameDriver> make_soak(int actions, std::uint64_t seed);
// --check-layout-sweep: every pipeline step of the document and every other view, then every lesson page, each
// at 1280x720 and 1600x900, normal and presentation, dark and light; the layout check's findings of each. A page
// that trains a model is judged at its run's step (trained first), or left out with `skip_training`.
std::unique_ptr<FrameDriver> make_layout_sweep(bool skip_training);

// The most memory the process has held, in bytes (getrusage).
std::int64_t peak_rss_bytes();

}  // namespace attn::gui
