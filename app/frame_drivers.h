#pragma once
// What drives the window instead of a person, for measurements and tests: a hook before and after every
// frame. --bench-frames edits the document every frame and times frames and edit-to-view latency;
// --soak performs seeded random actions and key presses and checks the views against fresh computation.
#include <cstdint>
#include <memory>
#include <ostream>

#include "ui/app_state.h"

namespace attn::cli {

class FrameDriver {
 public:
  virtual ~FrameDriver() = default;
  virtual void before_frame(ui::AppState& state) = 0;
  // Once the frame is on screen. False ends the run.
  virtual bool after_frame(ui::AppState& state) = 0;
  // Prints the result; returns the exit code.
  virtual int report(const ui::AppState& state, std::ostream& out, std::ostream& err) = 0;
};

std::unique_ptr<FrameDriver> make_bench_frames(int frames);
std::unique_ptr<FrameDriver> make_soak(int actions, std::uint64_t seed);

// The most memory the process has held, in bytes (getrusage).
std::int64_t peak_rss_bytes();

}  // namespace attn::cli
