#include "app/gui/frame_drivers.h"

#include "ui/logic/train_actions.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <sstream>
#include <vector>

#include <GLFW/glfw3.h>

#include "app/gui/soak.h"
#include "core/engine_entries.h"
#include "core/text_format.h"
#include "ui/logic/lesson_nav.h"
#include "ui/widgets/keys.h"
#include "ui/widgets/layout_check_frame.h"

namespace attn::gui {
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

std::string ms(double v) { return milliseconds_text(v / 1e3, 2); }

// The Model view's weight dragged: layer 0's W_Q[0][0], as its matrix editor would set it.
bool nudge_model(ui::ModelDocument& doc, double delta) {
  const auto w_q = [](Model& m) -> SharedMatrix& { return m.layers[0].weights.W_Q; };
  if (!doc.resolved().layers[0].weights.W_Q) return false;  // mla compressing its queries has W_DQ instead
  Matrix edited = *doc.resolved().layers[0].weights.W_Q;
  edited(0, 0) += delta;
  return !doc.edit_weight(w_q, edited, 1).has_value();
}

// A typist in the Real model view, ten characters a second at 60 frames: every sixth frame a character typed at the
// end of the text or taken away again, one undo step. Whether an edit was made.
bool type_real_model(ui::RealModelDocument& doc, int frame) {
  if (frame % 6 != 0) return false;
  std::string text = doc.state().text;
  if (frame % 12 == 0) text += "!";
  else if (!text.empty()) text.pop_back();
  doc.set_text(text, 1);
  return true;
}

// Every frame nudges X[0][0] (as a drag on the embeddings would), or in the Model view a weight, so every frame
// has a fresh edit to show; the Real model view gets its text typed.
class BenchFrames final : public FrameDriver {
 public:
  explicit BenchFrames(int frames) : frames_(frames) {}

  bool paced() const override { return true; }  // a drag gives one edit per frame the display shows

  void before_frame(ui::AppState& state) override {
    start_ = Clock::now();
    const double delta = frame_ % 2 == 0 ? 0.1 : -0.1;
    if (state.view == ui::View::Train) {  // no edit: the run trains on its thread while the frames draw
      if (frame_ == 0) {
        ui::ensure_training(state);
        state.trainer.start();
        first_step_ = state.trainer.step_count();
      }
    } else if (state.view == ui::View::Real && state.real_model.loaded()) {
      if (type_real_model(state.real_model, frame_)) pending_.push_back({state.real_model.ticket(), Clock::now()});
    } else if (state.model_in_view()) {
      if (nudge_model(state.model_doc, delta)) pending_.push_back({state.model_doc.ticket(), Clock::now()});
    } else if (state.edit([delta](Scenario& d) { d.input.embeddings(0, 0) += delta; })) {
      pending_.push_back({state.ticket(), Clock::now()});
    }
    if (frame_ == 0) last_cpu_ = thread_cpu_ms();
  }

  bool after_frame(ui::AppState& state) override {
    frame_times_.push_back(ms_since(start_));  // the edit, the frame and the GL driver drawing it; not the pacing
    const double cpu = thread_cpu_ms();
    frame_cpu_.push_back(cpu - last_cpu_);
    last_cpu_ = cpu;
    // An edit is on screen once a frame shows its result or a newer one (the newest edit wins).
    const std::uint64_t shown = real(state)             ? state.real_model.shown().ticket
                                : state.model_in_view() ? state.model_doc.shown().ticket
                                                        : state.shown_ticket();
    while (!pending_.empty() && pending_.front().ticket <= shown) {
      latencies_.push_back(ms_since(pending_.front().at));
      pending_.pop_front();
    }
    return ++frame_ < frames_;
  }

  int report(const ui::AppState& state, std::ostream& out, std::ostream&) override {
    out << "bench-frames: " << frames_ << (real(state) ? " frames; " : " frames, an edit in each; ") << what(state)
        << '\n'
        << "  frame time (an edit, the frame, the GL driver done; frames come at the display's rate): median "
        << ms(percentile(frame_times_, 0.5)) << ", p99 " << ms(percentile(frame_times_, 0.99)) << ", max "
        << ms(percentile(frame_times_, 1.0)) << "; the window thread's CPU time per frame: median "
        << ms(percentile(frame_cpu_, 0.5)) << ", p99 " << ms(percentile(frame_cpu_, 0.99)) << '\n'
        << (state.view == ui::View::Train
                ? "  training meanwhile: " + std::to_string(state.trainer.step_count() - first_step_) + " steps, " +
                      std::to_string(static_cast<int>(state.trainer.progress().steps_per_second)) +
                      " steps/s at the end\n"
                : std::string())
        << "  edit to updated view: median " << ms(percentile(latencies_, 0.5)) << ", p99 "
        << ms(percentile(latencies_, 0.99)) << " (" << latencies_.size() << " edits shown, " << pending_.size()
        << " still computing at the end)\n"
        << "  last recompute: "
        << ms((real(state)             ? state.real_model.shown().seconds
               : state.model_in_view() ? state.model_doc.shown().seconds
                                       : state.last_recompute_seconds()) *
              1e3)
        << "; peak RSS " << peak_rss_bytes() / (1 << 20) << " MiB\n";
    return 0;
  }

 private:
  static bool real(const ui::AppState& state) { return state.view == ui::View::Real && state.real_model.loaded(); }

  static std::string what(const ui::AppState& state) {
    std::ostringstream o;
    if (real(state)) {
      const ui::RealModelRun& r = state.real_model.shown();
      o << "the Real model view, " << r.model->name() << " (" << r.model->model().layers.size() << " layers, d_model "
        << r.model->model().d_model << "), " << plural(static_cast<std::int64_t>(r.text.ids.size()), "token")
        << ", a character typed or taken away every sixth frame (worker thread)";
    } else if (state.view == ui::View::Train) {
      o << "the Train view while its run trains (" << state.trainer.settings().threads << " training thread)";
    } else if (state.model_in_view()) {
      const ui::ModelDocument& doc = state.model_doc;
      const int tokens = static_cast<int>(doc.input().tokens.size());
      o << "the Model view, " << doc.model().layers.size() << " layers of d_model " << doc.model().d_model << ", "
        << doc.parameters() << " parameters, " << tokens << " tokens, layer 0's W_Q dragged ("
        << (ui::model_work(doc.resolved(), doc.parameters(), tokens) >= ui::kModelBackgroundWork ? "worker thread"
                                                                                                 : "in the frame")
        << ")";
    } else {
      const Trace& t = state.trace();
      o << "T = " << t.n_q() << ", " << plural(t.attention.heads, "head") << ", "
        << thousands(std::uint64_t(t.attention.heads) * std::uint64_t(t.n_q()) * std::uint64_t(t.n_kv()))
        << " attention cells (" << (ui::compute_in_background(state.scenario()) ? "worker thread" : "in the frame")
        << ")";
    }
    return o.str();
  }

  struct Pending {
    std::uint64_t ticket;
    Clock::time_point at;
  };
  int frames_, frame_ = 0, first_step_ = 0;
  Clock::time_point start_;
  double last_cpu_ = 0.0;
  std::deque<Pending> pending_;
  std::vector<double> frame_times_, frame_cpu_, latencies_;
};

// Keys a person presses while working; none that opens a dialog or quits.
constexpr std::pair<int, int> kSoakKeys[] = {{GLFW_KEY_RIGHT, 0},
                                             {GLFW_KEY_LEFT, 0},
                                             {GLFW_KEY_UP, 0},
                                             {GLFW_KEY_DOWN, 0},
                                             {GLFW_KEY_HOME, 0},
                                             {GLFW_KEY_END, 0},
                                             {GLFW_KEY_SPACE, 0},
                                             {GLFW_KEY_F5, 0},
                                             {GLFW_KEY_F1, 0},
                                             {GLFW_KEY_ESCAPE, 0},
                                             {GLFW_KEY_Z, GLFW_MOD_CONTROL},
                                             {GLFW_KEY_Y, GLFW_MOD_CONTROL},
                                             {GLFW_KEY_EQUAL, GLFW_MOD_CONTROL},
                                             {GLFW_KEY_MINUS, GLFW_MOD_CONTROL},
                                             {GLFW_KEY_0, GLFW_MOD_CONTROL}};

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
    out << "soak: " << plural(done_, "action") << " (seed " << seed_
        << "), a frame after each: " << plural(c.applied, "edit") << " applied (" << c.background
        << " computed on the worker), " << c.refused << " refused, " << c.undos << " undo, " << c.redos << " redo, "
        << keys_ << (keys_ == 1 ? " key press; " : " key presses; ") << plural(c.checks, "check")
        << " against a fresh computation, all equal; peak RSS " << peak_rss_bytes() / (1 << 20) << " MiB\n";
    return 0;
  }

 private:
  int actions_, done_ = 0, keys_ = 0;
  std::uint64_t seed_;
  Soak soak_;
  std::string problem_;
};

// One picture the layout sweep checks: a size, a look, and what is on screen.
struct SweepShot {
  ImVec2 size;
  bool presentation;
  ui::Theme theme;
  int lesson, page;  // -1: no lesson, and then view (and step) below
  ui::View view;
  int step;
};

class LayoutSweep final : public FrameDriver {
 public:
  explicit LayoutSweep(bool skip_training) : skip_training_(skip_training) {}

  static constexpr int kFramesPerShot = 3;  // a layout settles in its second frame; the third is checked

  void before_frame(ui::AppState& state) override {
    if (shots_.empty()) plan(state);
    // Every frame: what a frame asked for while drawing (a snapshot's gradient) is there for the next.
    if (frame_ % kFramesPerShot != 0) {
      state.wait();
      entries_ = engine_entry_count();
      return;
    }
    const SweepShot& s = shots_[static_cast<std::size_t>(frame_ / kFramesPerShot)];
    state.display.presentation = s.presentation;
    state.display.theme = s.theme;
    if (s.lesson >= 0) {
      ui::ApplyLessonPage(state, s.lesson, s.page);
      // A page's run trained to its step before the picture, as a capture of it starts: else a later page's run,
      // still training in the background, would be shown at whatever step it had reached (and its marks judged
      // there).
      const ui::LessonPage& p =
          (*state_lessons_)[static_cast<std::size_t>(s.lesson)].pages[static_cast<std::size_t>(s.page)];
      if (p.view == ui::View::Train) state.trainer.run_until(p.train_steps);
      if (p.on_real_model()) ui::SettleRealPage(state);
    } else {
      if (state.lesson.open() || state.document().revision != document_revision_) {
        ui::CloseLesson(state);
        state.open(document_, path_);
        document_revision_ = state.document().revision;
      }
      state.show_view(s.view);
      state.set_step(s.step);
    }
    state.wait();
    entries_ = engine_entry_count();
  }

  bool after_frame(ui::AppState&) override {
    const SweepShot& s = shots_[static_cast<std::size_t>(frame_ / kFramesPerShot)];
    // Drawing reads what the workers made: a view that computes in the frame would stall it (debug builds count).
    if (const long entered = engine_entry_count() - entries_; entered > 0)
      found_.push_back(name(s) + " | drawing the frame entered the engine " + std::to_string(entered) +
                       " times on the window thread");
    if (frame_ % kFramesPerShot == kFramesPerShot - 1) {
      const bool judge_sight = s.presentation ? s.size.x <= 1280 : s.size.x >= 1600;
      for (const std::string& p : ui::LayoutProblemsOfFrame(judge_sight)) found_.push_back(name(s) + " | " + p);
    }
    return ++frame_ < static_cast<int>(shots_.size()) * kFramesPerShot;
  }

  int report(const ui::AppState&, std::ostream& out, std::ostream& err) override {
    for (const std::string& f : found_) err << "layout: " << f << '\n';
    out << "layout sweep: " << shots_.size() << " pictures, " << found_.size() << " findings\n";
    return found_.empty() ? 0 : 1;
  }

  std::optional<ImVec2> display_size() const override {
    if (shots_.empty()) return std::nullopt;
    return shots_[static_cast<std::size_t>(std::min(frame_ / kFramesPerShot, static_cast<int>(shots_.size()) - 1))]
        .size;
  }

 private:
  void plan(const ui::AppState& state) {
    document_ = state.scenario();
    path_ = state.document().path;
    document_revision_ = state.document().revision;
    state_lessons_ = &state.lesson.lessons;
    for (const ImVec2 size : {ImVec2{1280, 720}, ImVec2{1600, 900}})
      for (const bool presentation : {false, true})
        for (const ui::Theme theme : {ui::Theme::Dark, ui::Theme::Light}) {
          for (int step = 0; step < ui::step_count(state.trace().attention); ++step)
            shots_.push_back({size, presentation, theme, -1, 0, ui::View::Pipeline, step});
          for (int v = 1; v < ui::kViewCount; ++v)
            shots_.push_back({size, presentation, theme, -1, 0, static_cast<ui::View>(v), 0});
          for (std::size_t l = 0; l < state.lesson.lessons.size(); ++l)
            for (std::size_t p = 0; p < state.lesson.lessons[l].pages.size(); ++p)
              if (!skip_training_ || state.lesson.lessons[l].pages[p].view != ui::View::Train)
                shots_.push_back(
                    {size, presentation, theme, static_cast<int>(l), static_cast<int>(p), ui::View::Pipeline, 0});
        }
  }

  std::string name(const SweepShot& s) const {
    std::string n = std::to_string(static_cast<int>(s.size.x)) + "x" + std::to_string(static_cast<int>(s.size.y)) +
                    (s.presentation ? " presentation" : " normal") +
                    (s.theme == ui::Theme::Light ? " light" : " dark") + " | ";
    if (s.lesson >= 0)
      return n + "lesson " + (*state_lessons_)[static_cast<std::size_t>(s.lesson)].name + " page " +
             std::to_string(s.page + 1);
    return n + std::string(ui::view_name(s.view)) +
           (s.view == ui::View::Pipeline ? " step " + std::to_string(s.step) : "");
  }

  std::vector<SweepShot> shots_;
  Scenario document_;
  std::filesystem::path path_;
  std::uint64_t document_revision_ = 0;
  const std::vector<ui::Lesson>* state_lessons_ = nullptr;
  int frame_ = 0;
  bool skip_training_;
  std::vector<std::string> found_;
  long entries_ = 0;  // the window thread's engine entries when this frame's drawing began
};

}  // namespace

std::unique_ptr<FrameDriver> make_layout_sweep(bool skip_training) {
  return std::make_unique<LayoutSweep>(skip_training);
}
std::unique_ptr<FrameDriver> make_bench_frames(int frames) { return std::make_unique<BenchFrames>(frames); }
std::unique_ptr<FrameDriver> make_soak(int actions, std::uint64_t seed) {
  return std::make_unique<SoakDriver>(actions, seed);
}

std::int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return std::int64_t{u.ru_maxrss} * 1024;  // Linux reports KiB
}

}  // namespace attn::gui
