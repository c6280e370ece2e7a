#include "app/frame_drivers.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <vector>

#include <GLFW/glfw3.h>

#include "app/soak.h"
#include "ui/keys.h"

namespace attn::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// CPU time of the calling thread: what drawing a frame costs, whatever else the machine is doing.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

std::string ms(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f ms", v);
  return b;
}

// Every frame nudges X[0][0] (as a drag on the embeddings would), so every frame has a fresh edit to show.
class BenchFrames final : public FrameDriver {
 public:
  explicit BenchFrames(int frames) : frames_(frames) {}

  void before_frame(ui::AppState& state) override {
    const double delta = frame_ % 2 == 0 ? 0.1 : -0.1;
    if (state.edit([delta](Scenario& d) { d.input.embeddings(0, 0) += delta; }))
      pending_.push_back({state.ticket(), Clock::now()});
    if (frame_ == 0) {
      last_ = Clock::now();
      last_cpu_ = thread_cpu_ms();
    }
  }

  bool after_frame(ui::AppState& state) override {
    frame_times_.push_back(ms_since(last_));
    last_ = Clock::now();
    const double cpu = thread_cpu_ms();
    frame_cpu_.push_back(cpu - last_cpu_);
    last_cpu_ = cpu;
    // An edit is on screen once a frame shows its result or a newer one (the newest edit wins).
    while (!pending_.empty() && pending_.front().ticket <= state.shown_ticket()) {
      latencies_.push_back(ms_since(pending_.front().at));
      pending_.pop_front();
    }
    return ++frame_ < frames_;
  }

  int report(const ui::AppState& state, std::ostream& out, std::ostream&) override {
    const Trace& t = state.trace();
    out << "bench-frames: " << frames_ << " frames, an edit in each; T = " << t.n_q() << ", " << t.attention.heads
        << " heads, " << std::int64_t{t.attention.heads} * t.n_q() * t.n_kv() << " attention cells ("
        << (ui::compute_in_background(state.scenario()) ? "worker thread" : "in the frame") << ")\n"
        << "  frame time: median " << ms(percentile(frame_times_, 0.5)) << ", p99 " << ms(percentile(frame_times_, 0.99))
        << ", max " << ms(percentile(frame_times_, 1.0)) << "; the window thread's CPU time per frame: median "
        << ms(percentile(frame_cpu_, 0.5)) << ", p99 " << ms(percentile(frame_cpu_, 0.99)) << '\n'
        << "  edit to updated view: median " << ms(percentile(latencies_, 0.5)) << ", p99 "
        << ms(percentile(latencies_, 0.99)) << " (" << latencies_.size() << " edits shown, " << pending_.size()
        << " still computing at the end)\n"
        << "  last recompute: " << ms(state.last_recompute_seconds() * 1e3) << "; peak RSS "
        << peak_rss_bytes() / (1 << 20) << " MiB\n";
    return 0;
  }

 private:
  struct Pending {
    std::uint64_t ticket;
    Clock::time_point at;
  };
  int frames_, frame_ = 0;
  Clock::time_point last_;
  double last_cpu_ = 0.0;
  std::deque<Pending> pending_;
  std::vector<double> frame_times_, frame_cpu_, latencies_;
};

// Keys a person presses while working; none that opens a dialog or quits.
constexpr std::pair<int, int> kSoakKeys[] = {
    {GLFW_KEY_RIGHT, 0}, {GLFW_KEY_LEFT, 0}, {GLFW_KEY_UP, 0}, {GLFW_KEY_DOWN, 0}, {GLFW_KEY_HOME, 0}, {GLFW_KEY_END, 0},
    {GLFW_KEY_SPACE, 0}, {GLFW_KEY_F5, 0}, {GLFW_KEY_F1, 0}, {GLFW_KEY_ESCAPE, 0},
    {GLFW_KEY_Z, GLFW_MOD_CONTROL}, {GLFW_KEY_Y, GLFW_MOD_CONTROL}, {GLFW_KEY_EQUAL, GLFW_MOD_CONTROL},
    {GLFW_KEY_MINUS, GLFW_MOD_CONTROL}, {GLFW_KEY_0, GLFW_MOD_CONTROL}};

class SoakDriver final : public FrameDriver {
 public:
  SoakDriver(int actions, std::uint64_t seed) : actions_(actions), seed_(seed), soak_(seed) {}

  void before_frame(ui::AppState& state) override {
    if (soak_.pick(4) == 0) {
      const auto [key, mods] = kSoakKeys[soak_.pick(static_cast<int>(std::size(kSoakKeys)))];
      ui::queue_key_press(key, mods);
      ++keys_;
    } else if (problem_.empty()) {
      problem_ = soak_.act(state);
    }
    ++done_;
  }

  bool after_frame(ui::AppState& state) override {
    if (problem_.empty() && (done_ % 50 == 0 || done_ == actions_)) problem_ = soak_.check(state);
    return problem_.empty() && done_ < actions_;
  }

  int report(const ui::AppState&, std::ostream& out, std::ostream& err) override {
    const SoakCounts& c = soak_.counts();
    if (!problem_.empty()) {
      err << "attention-lab: soak: after action " << done_ << " (seed " << seed_ << "): " << problem_ << '\n';
      return 1;
    }
    out << "soak: " << done_ << " actions (seed " << seed_ << "), a frame after each: " << c.applied << " edits applied ("
        << c.background << " computed on the worker), " << c.refused << " refused, " << c.undos << " undo, " << c.redos
        << " redo, " << keys_ << " key presses; " << c.checks << " checks against a fresh computation, all equal; peak RSS "
        << peak_rss_bytes() / (1 << 20) << " MiB\n";
    return 0;
  }

 private:
  int actions_, done_ = 0, keys_ = 0;
  std::uint64_t seed_;
  Soak soak_;
  std::string problem_;
};

}  // namespace

std::unique_ptr<FrameDriver> make_bench_frames(int frames) { return std::make_unique<BenchFrames>(frames); }
std::unique_ptr<FrameDriver> make_soak(int actions, std::uint64_t seed) { return std::make_unique<SoakDriver>(actions, seed); }

std::int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return std::int64_t{u.ru_maxrss} * 1024;  // Linux reports KiB
}

}  // namespace attn::cli
