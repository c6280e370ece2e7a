#pragma once
// Everything the application knows, in one place: the document being edited, the trace computed from
// it, and what the user is looking at. Views read it; edits go through edit(), which recomputes the
// trace in the same frame (on a worker thread when the document is big: see recompute.h), or keeps the
// document as it was and says why.
#include <filesystem>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/attention.h"
#include "core/decode.h"
#include "core/memory.h"
#include "core/scenario.h"
#include "ui/widgets/file_dialog.h"
#include "ui/logic/views.h"
#include "ui/logic/lessons.h"
#include "ui/logic/recompute.h"
#include "ui/logic/sqrt_dk.h"
#include "ui/logic/steps.h"

namespace attn::ui {

// How much the window's size enlarges everything. Presentation mode fits 1.35 times a 1600x900 layout to the
// window (1280x720: 1.1, 1920x1080: 1.6); normal mode only grows on large windows (1920x1080: 1.2). In steps of
// 0.05, so resizing does not rebuild the fonts at every pixel.
float window_fit(float width, float height, bool presentation);

struct Document {
  // Shared with the undo history and the worker, never changed in place: an edit makes a new one, so a
  // 2048-token document is copied once per edit, not once for each of them.
  std::shared_ptr<const Scenario> scenario;
  Scenario saved;                // as last opened or saved: "Reset to file" returns here
  std::filesystem::path path;    // empty until saved
  std::uint64_t revision = 0;        // changes with every edit, undo and redo
  std::uint64_t saved_revision = 0;  // the revision on disk
  bool dirty() const { return revision != saved_revision; }
};

// A cell the pointer is over in the pipeline view: which equation of the step, which term, which cell.
// Views draw operands before results, so they outline what fed the cell hovered in the previous frame.
struct HoverCell {
  Step step = Step::Inputs;
  int head = 0;
  int equation = 0;  // a step may show several (Q, K and V)
  int term = -1, row = -1, col = -1;
  std::string explanation;
  explicit operator bool() const { return term >= 0; }
  bool on(Step s, int eq, int t) const { return term == t && step == s && equation == eq; }
};


// How the window looks; remembered between runs.
enum class Theme { Dark, Light };

// A document found in the recovery file at start-up: what was being edited when the app last stopped
// without closing cleanly.
struct RecoveryOffer {
  Scenario scenario;
  std::filesystem::path original;  // the file it came from, empty if never saved
  std::string when;                // "2026-11-21 23:40"
};

// What the memory, cost and compare views are set to.
struct ModelViewSettings {
  std::string preset = "llama-3-70b";
  Dtype dtype = Dtype::BF16;
  int batch = 1;
  std::int64_t context = 32768;     // tokens, for the bar chart and the tables
  bool lines_per_preset = false;    // memory chart: one line per preset instead of per variant
  int top_k = 2048;                 // DeepSeek sparse attention's candidate set
};

class AppState {
 public:
  AppState(Scenario scenario, std::filesystem::path path);

  // Valid until the next poll(), like trace(): a view may read it after an edit it made in the same frame.
  const Scenario& scenario() const { return *doc_.scenario; }
  const Document& document() const { return doc_; }
  // The last complete trace. While computing() it belongs to an earlier revision of the document.
  const Trace& trace() const { return *now_.trace; }
  // Decoding the document token by token (nullptr when it cannot be decoded: decode_error() says why),
  // and the full trace it must reproduce row by row (the document with its mask made causal).
  const DecodeTrace* decoded() const { return now_.decoded.get(); }
  const std::string& decode_error() const { return now_.decode_error; }
  const Trace& causal_trace() const { return *now_.causal_trace; }
  // A big document is recomputed on the worker: computing() until its result arrives. The window calls
  // poll() at the start of every frame to take it (references to the shown trace stay valid until the
  // next poll()); wait() blocks until the newest revision is shown (tests, captures).
  bool computing() const { return now_.ticket != ticket_ && failed_ticket_ != ticket_; }
  // The weights the document computes with: the shown trace's, or while it is an older revision's, the
  // document's own (given ones, the rest drawn from its seed). Edits that start from weights use these.
  // Shared, because an edit made while a view reads them replaces them.
  std::shared_ptr<const Weights> document_weights() const;
  void poll();
  void wait();  // until the worker is idle, then poll: every result it will give has been taken
  double last_recompute_seconds() const { return now_.seconds; }
  // Every change of the document (edit, undo, open) takes a ticket; the shown trace answers one of them.
  std::uint64_t ticket() const { return ticket_; }
  std::uint64_t shown_ticket() const { return now_.ticket; }

  // Applies `change` to a copy; if the result is a valid scenario it becomes the document and the trace is
  // recomputed, otherwise nothing changes and the reason is shown. Returns whether it was applied.
  bool edit(const std::function<void(Scenario&)>& change);
  // The same as an undo step of its own, whichever widget is active (a field applied when another is clicked).
  bool edit_own_step(const std::function<void(Scenario&)>& change);
  // Replaces the document (File > Open); the old one stays if the new one cannot be traced.
  bool open(Scenario scenario, std::filesystem::path path);
  void mark_saved(std::filesystem::path path);
  void reset_to_saved();  // an edit like any other: it can be undone

  // Undo and redo of every document edit. Edits made while one widget stays active (a drag, typing in a
  // field) are one step: `active_widget` says which widget is active as an edit is made (0: none), and the
  // window calls end_gesture() in every frame in which no widget is active.
  bool undo();
  bool redo();
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  std::function<unsigned()> active_widget;
  void end_gesture() { undo_gesture_ = 0; }
  static constexpr std::size_t kHistoryLimit = 500;
  static constexpr std::int64_t kHistoryBytes = std::int64_t(256) << 20;  // the oldest steps go first

  // What is shown.
  View view = View::Pipeline;
  Step step = Step::Inputs;
  int head = 0;
  int projection = 0;        // which projection the projections step draws large (MLA: latent, Q, K, V)
  bool show_absorbed = false;  // MLA: the scores step shows the absorbed form
  bool playing = false;
  double play_clock = 0.0;   // seconds since the last automatic step
  bool show_help = false;
  int decode_step = 0;       // the token the decode view has just fed in
  bool decode_playing = false;
  ModelViewSettings models;
  std::vector<ModelShape> presets;  // the shipped model shapes, for the memory, cost and compare views
  HoverCell hover;           // written while drawing this frame
  HoverCell last_hover;      // what was hovered in the previous frame
  std::optional<std::pair<int, int>> pinned_cell;  // a result cell explained as if pointed at (--cell)
  // A lesson page's cells of its step's result, outlined while that step is shown.
  std::vector<std::pair<int, int>> outlined;
  Step outlined_step = Step::Inputs;
  bool scroll_to_outlined = false;  // a page just opened: its first outlined cell is scrolled into view once
  int scroll_to_decode_section = 0;  // a page just opened on the decode view: this section (1-4) scrolled to the top once
  std::string message;       // the last problem or note (a file that would not open, an edit that was refused)
  FileDialogState file_dialog;
  bool quit_requested = false;   // Ctrl+Q or the window's close button; unsaved changes ask first
  bool quit_confirmed = false;   // nothing unsaved, or the user chose what to do with it
  // Replacing the document (open a file, go to a lesson page) waits here for the unsaved-changes answer.
  std::function<void()> pending_replace;

  // Lessons: the shipped ones, and where the user is in one (lesson -1: none).
  std::vector<Lesson> lessons;
  std::filesystem::path scenarios_dir;  // where lesson pages find their scenarios
  int lesson = -1, lesson_page = 0;
  int sqrt_dk = kSqrtDkDefault;         // the experiment's d_k
  std::optional<RecoveryOffer> recovery;              // offered once, at start-up
  std::vector<std::string> recent_files;              // most recent first (File > Recent)
  // File > Export: the trace as a handout, written by the command line's code (Markdown or LaTeX).
  std::function<std::string(const Trace&, bool latex)> handout;
  bool recovery_answered = false;                     // restored or discarded: the file can go

  // Presentation: readable from the back of a room. Zoom multiplies every size (75%-300%); presentation
  // mode hides the editors and adds its own enlargement and high contrast.
  Theme theme = Theme::Dark;
  float zoom = 1.0f;
  bool presentation = false;
  bool fullscreen = false;
  float display_w = 1600, display_h = 900;  // the window's size, which the window sets before each frame
  float effective_zoom() const { return zoom * window_fit(display_w, display_h, presentation); }

  void set_step(int index);  // clamped
  void set_head(int h);      // clamped to the heads of the current trace
  void set_decode_step(int t);  // clamped to the tokens
  // Play or pause, one behaviour for the button, the menu and Space: the clock starts over, and playing from
  // the last step (or token) starts from the first.
  void toggle_play();
  void toggle_decode_play();
  std::string window_title() const;

 private:
  // Makes `scenario` (valid) the document at `revision` and computes what the views read, here or on the worker.
  void adopt(std::shared_ptr<const Scenario> scenario, std::uint64_t revision);
  // edit() with the revision the result gets: a new one, or (reset to saved) the saved one.
  bool apply(const std::function<void(Scenario&)>& change, std::optional<std::uint64_t> revision, bool own_step = false);
  void show(Computed c);
  Document doc_;
  Computed now_;
  std::vector<Computed> retired_;  // replaced during this frame; freed at the next poll()
  std::vector<std::shared_ptr<const Scenario>> retired_documents_;  // likewise
  std::uint64_t ticket_ = 0;
  std::uint64_t failed_ticket_ = 0;  // the worker could not compute this one (out of memory): message says so
  RecomputeWorker worker_;
  // The document's weights while its trace is computed, kept across edits that leave them alone: drawing
  // a 512-wide layer's weights from the seed every frame of a drag would cost the window milliseconds.
  mutable std::shared_ptr<const Weights> doc_weights_;
  struct Revision {
    std::shared_ptr<const Scenario> scenario;
    std::uint64_t revision;
  };
  void restore(std::vector<Revision>& from, std::vector<Revision>& to);
  std::vector<Revision> undo_, redo_;
  std::uint64_t next_revision_ = 0;
  unsigned undo_gesture_ = 0;  // the widget whose edits the last undo entry covers; 0 = closed
};

}  // namespace attn::ui
