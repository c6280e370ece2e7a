#pragma once
// Everything the application knows, in three parts: the document and its history (edits go through
// edit(), which validates them or keeps the document as it was and says why), the computation the views
// read (see computation.h), and one small state struct per view (view_state.h). Views read the document
// and the computation and own their own struct.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/decode.h"
#include "core/memory_budget.h"
#include "core/scenario.h"
#include "ui/logic/computation.h"
#include "ui/logic/file_identity.h"
#include "ui/logic/history.h"
#include "ui/logic/model_document.h"
#include "ui/logic/pending_actions.h"
#include "ui/logic/real_model.h"
#include "ui/logic/snapshot_gradients.h"
#include "ui/logic/tradeoff.h"
#include "ui/logic/view_state.h"
#include "ui/logic/views.h"
#include "ui/logic/window_memory.h"

namespace attn::ui {

// The saved revision of a document that has no saved state (restored from the recovery file without a file).
inline constexpr std::uint64_t kNeverSaved = ~std::uint64_t{0};

struct Document {
  // Shared with the undo history and the worker, never changed in place: an edit makes a new one, so a
  // 2048-token document is copied once per edit, not once for each of them.
  std::shared_ptr<const Scenario> scenario;
  Scenario saved;                    // as last opened or saved: "Reset to file" returns here
  std::filesystem::path path;        // empty until saved
  std::uint64_t revision = 0;        // changes with every edit, undo and redo
  std::uint64_t saved_revision = 0;  // the revision on disk
  std::optional<FileStamp> stamp;    // of `path` when it was opened or last saved
  // Restored from the recovery file, from this original (titled after it) until saved: `path` is the original
  // only if that file was still as the work found it, else empty (Save asks where).
  std::filesystem::path recovered_from;
  bool dirty() const { return revision != saved_revision; }
};

// The pipeline on a layer of the Model view's model: what was open before, brought back when the visit ends.
struct LayerVisit {
  int layer = 0;
  std::string model_name;
  bool pre_norm = false;    // X is LN1 of the stream entering the layer
  View from = View::Model;  // the view the way back leads to: the Model view's model or the Real model view's
  Document before;          // as it was, unsaved changes included
  History history;
};

// The unsaved changes the recovery file keeps (written a couple of seconds after a change), and what it offers at
// start-up after the app last stopped without closing cleanly: the document's, the model's, or both.
// Each original is named by its absolute canonical path, with the stamp the file had when the work started
// from it (opened or last saved): restoring lets Save write there only if the file still has that stamp.
struct RecoveryOffer {
  std::optional<Scenario> scenario;
  std::filesystem::path original{};  // the file the scenario came from, empty if never saved
  std::optional<FileStamp> original_stamp{};
  std::optional<ModelInput> model{};
  std::filesystem::path model_original{};  // the file the model came from, empty if never saved
  std::optional<FileStamp> model_original_stamp{};
  std::optional<RealModelRecovery> real_model{};  // the Real model view's folder and state, while one is open
  std::string when;                               // "2026-11-21 23:40"
};

// The answer to the "Restore unsaved work?" prompt. Each touches only the offered entry: Restored (the work is this
// window's document now, autosaved to its own entry), Discarded (the entry is deleted), Later (Escape: neither, the
// entry is kept for the next start).
enum class RecoveryAnswer { None, Restored, Discarded, Later };

// Save found the file it would write over changed on disk since the document was opened or last saved (or gone):
// nothing was written, and the window asks Overwrite / Save As... / Cancel. Or Save As chose another file that
// exists (`replace`): the window asks Replace / Cancel.
struct SaveConflict {
  bool model = false;  // the Model view's model, else the document
  std::filesystem::path path;
  std::string question;  // "docC.json has changed on disk since it was opened or last saved."
  bool replace = false;  // "Replace V.json? It already exists."
};

// The parts of a window that each hold memory under the one budget.
enum class WindowPart { Document, Model, Training };

class AppState {
 public:
  // `history_bytes` bounds the undo history (tests give a smaller bound).
  // `scenario` has passed validate(): an edit re-reads only what its change could have made wrong (a weight the
  // edited document still shares is taken as checked).
  AppState(Scenario scenario, std::filesystem::path path, std::int64_t history_bytes = History::kBytes);

  // What the window may hold (predicted_window_bytes: itself, the undo history's share and two results of the
  // document): an edit or a file past it is refused with both numbers, and the tokens slider stops at it. The window
  // sets it from --memory-budget, the settings or the machine. The Model view's forward pass and the Train view's runs
  // are held to the same budget (set_memory_budget).
  std::int64_t memory_budget = limits::kDefaultMemoryBudget;
  void set_memory_budget(std::int64_t budget);
  // The window itself (window_frame_bytes of its size): the window sets it from its frame buffer's size.
  std::int64_t window_frame = window_frame_bytes(1600, 900);
  void set_window_size(int width, int height) { window_frame = window_frame_bytes(width, height); }
  // What the window holds with the document, as checked against the budget.
  std::int64_t window_bytes() const { return predicted_window_bytes(*doc_.scenario, window_frame, memory_budget); }
  // What the window's parts hold beside `part`, which the budget must leave room for when `part` grows: the window
  // with its document (window_bytes), the Model view's forward pass and history, the Train view's run.
  HeldBeside held_beside(WindowPart part) const;

  // --- The document and its history.
  // Valid until the next poll(), like trace(): a view may read it after an edit it made in the same frame.
  const Scenario& scenario() const { return *doc_.scenario; }
  const Document& document() const { return doc_; }
  // Applies `change` to a copy; if the result is a valid scenario it becomes the document and the trace is
  // recomputed, otherwise nothing changes and the reason is shown. Returns whether it was applied.
  bool edit(const std::function<void(Scenario&)>& change);
  // The same as an undo step of its own, whichever widget is active (a field applied when another is clicked).
  bool edit_own_step(const std::function<void(Scenario&)>& change);
  // Replaces the document (File > Open); the old one stays if the new one cannot be traced.
  bool open(Scenario scenario, std::filesystem::path path);
  void mark_saved(std::filesystem::path path);
  // The document (just opened) is what the recovery file kept of `original`: unsaved until saved, titled after it.
  void mark_recovered(std::filesystem::path original);
  // An edit like any other: it can be undone. Nothing for a recovered document without a file (nothing to go back to).
  void reset_to_saved();
  // Undo and redo of every document edit. Edits made while one widget stays active (a drag, typing in a
  // field) are one step: `active_widget` says which widget is active as an edit is made (0: none), and the
  // window calls end_gesture() in every frame in which no widget is active.
  bool undo();
  bool redo();
  bool can_undo() const { return history_.can_undo(); }
  bool can_redo() const { return history_.can_redo(); }
  std::function<unsigned()> active_widget;
  void end_gesture() { history_.end_gesture(); }

  // --- The computation: what the views read.
  const Computation& computation() const { return computation_; }
  // The last complete trace. While computing() it belongs to an earlier revision of the document.
  const Trace& trace() const { return *computation_.shown().trace; }
  // Decoding the document token by token (nullptr when it cannot be decoded: decode_error() says why),
  // and the full trace it must reproduce row by row (the document with its mask made causal).
  const DecodeTrace* decoded() const { return computation_.shown().decoded.get(); }
  const std::string& decode_error() const { return computation_.shown().decode_error; }
  const Trace& causal_trace() const { return *computation_.shown().causal_trace; }
  // Sparse attention only (else nullptr): the shown trace's output computed densely, for what sparsity lost.
  const Matrix* dense_output() const { return computation_.shown().dense_output.get(); }
  // Shifted positions only (else nullptr): each head's scores with the positions from 0.
  const std::vector<Matrix>* unshifted_scores() const { return computation_.shown().unshifted_scores.get(); }
  const std::vector<NaiveRopeMla>* naive_rope() const { return computation_.shown().naive_rope.get(); }
  bool computing() const { return computation_.computing(); }
  // The weights the document computes with (Computation::weights). Edits that start from weights use these.
  std::shared_ptr<const Weights> document_weights() const { return computation_.weights(*doc_.scenario); }
  // The window calls poll() at the start of every frame to take a result the worker finished (references
  // to the shown trace stay valid until the next poll()); wait() blocks until the newest one is shown.
  void poll();
  void wait();
  double last_recompute_seconds() const { return computation_.shown().seconds; }
  std::uint64_t ticket() const { return computation_.ticket(); }
  std::uint64_t shown_ticket() const { return computation_.shown().ticket; }
  const KnownRanges* known_ranges() const { return computation_.shown().ranges.get(); }

  // --- The Model view's model, a document of its own, and the pipeline on one of its layers.
  ModelDocument model_doc;
  RealModelDocument real_model;  // a Hugging Face model folder, the Real model view's
  TradeoffDocument tradeoff;     // what smaller caches cost that model, measured for the Compare view
  // Measures the Real model view's model on the text the Compare view names (compare.sonnets: the shipped sonnets,
  // else the typed text). False, and the message says why, when there is no model or the sonnets cannot be read.
  bool measure_cache_tradeoff();
  std::string model_unopened;  // why the shipped model did not open at start, said in the Model view while empty
  // Opens layer `layer`'s attention as the document (layer_scenario: the stream entering it, normalised for pre)
  // on the pipeline view; the document open before comes back with end_layer_visit(). Another document opened
  // meanwhile ends the visit. False (and a message) if the model has no such layer.
  bool visit_model_layer(int layer);
  // The same for a layer of the Real model view's model, as trained (the heads knocked out there are back), with
  // head `head` on screen.
  bool visit_real_layer(int layer, int head);
  void end_layer_visit();  // back to the view the visit started from
  const std::optional<LayerVisit>& layer_visit() const { return layer_visit_; }
  // The document whose unsaved changes the recovery file keeps: the one on screen, or during a visit (if that
  // one has none) the one open before it.
  const Document& recoverable_document() const {
    return !doc_.dirty() && layer_visit_ && layer_visit_->before.dirty() ? layer_visit_->before : doc_;
  }
  // Undo and redo of what the view on screen edits: the model in the Model view, the document elsewhere.
  bool model_in_view() const;
  bool undo_in_view();
  bool redo_in_view();
  bool can_undo_in_view() const;
  bool can_redo_in_view() const;
  void reseed_in_view();  // the next seed, every weight drawn from it

  // --- What each view is set to: each struct is its panel's own state, which that panel reads and writes (as Tracy's
  // views own theirs); the view shown changes through show_view.
  View view = View::Pipeline;
  void show_view(View v) { view = v; }
  PipelineView pipeline;
  DecodeView decode;
  ModelViewSettings models;
  CompareView compare;
  ModelPanelView model_view;
  RealModelView real_view;
  TrainView train;
  Trainer trainer;                    // the Train view's run, on its own thread
  SnapshotGradients train_gradients;  // the gradient tab's backward pass, on its own thread
  LessonView lesson;
  Display display;
  // Navigation, one behaviour for the buttons, the keys, the menu and lessons: every target is clamped.
  void set_step(int index);
  // Step numbers count the steps of the trace on screen (pipeline_steps of its configuration).
  void step_by(int delta) { set_step(step_index(pipeline.step, trace().attention) + delta); }
  void set_head(int h);  // to the heads of the current trace
  void set_decode_token(int t);
  int decodable_tokens() const;  // the document's tokens, as far as the shown decoding reaches
  void decode_by(int delta) { set_decode_token(decode.token + delta); }
  // Play or pause, one behaviour for the button, the menu and Space: the clock starts over, and playing from
  // the last step (or token) starts from the first.
  void toggle_play();
  void toggle_decode_play();
  // Called every frame: while playing, the shown view moves on every kPlaySeconds and stops at its end.
  void advance_play(double dt);

  // --- The session around the document.
  bool show_help = false;  // the shortcuts overlay (F1), set through set_help_shown
  void set_help_shown(bool shown) { show_help = shown; }
  std::string message;  // the last problem or note (a file that would not open, an edit that was refused)
  // `m` in place of the message shown (the answer to what the user just did; empty clears it), the waiting ones kept.
  void say(std::string m) { message = std::move(m); }
  // Messages waiting behind `message` (start-up may find several problems: settings, recovery, lessons, presets),
  // each shown in its turn once the one before is dismissed or cleared.
  std::vector<std::string> more_messages;
  // `m` as the message, or after the ones shown and waiting: no problem hides another.
  void add_message(std::string m);
  // The next waiting message, when there is no message now (the status line calls it every frame).
  void next_message();
  // An action's notes (each weight an edit drew or dropped) in place of the messages shown: the first shown, the
  // rest waiting behind it, as the status line counts them. Nothing when there are none.
  void show_messages(std::vector<std::string> notes);
  PendingActions pending;                 // quitting and replacing the document, waiting for the unsaved-changes answer
  std::optional<RecoveryOffer> recovery;  // the work of a window that is gone, offered at start-up
  RecoveryAnswer recovery_answer = RecoveryAnswer::None;
  std::string recovery_failed;                // why restoring it did not work
  std::optional<SaveConflict> save_conflict;  // a Save waiting for Overwrite / Save As... / Cancel (or Replace)
  void close_save_conflict() { save_conflict.reset(); }
  std::vector<std::string> recent_files;  // most recent first (File > Recent)
  // The folders the lab reads whole (its assets, its settings folder): nothing the user makes is written there. A
  // document opened from one (the worked example, the default model) is saved elsewhere: Save asks where.
  std::vector<std::filesystem::path> lab_folders;
  // File > Export: the trace as a handout, written by the command line's code (Markdown or LaTeX).
  // Written as it is made, into the export's file.
  std::function<void(std::ostream&, const Trace&, bool latex)> handout;
  std::string window_title() const;

 private:
  // Makes `scenario` (valid) the document at `revision` and asks for what the views read.
  void adopt(std::shared_ptr<const Scenario> scenario, std::uint64_t revision);
  // edit() with the revision the result gets: a new one, or (reset to saved) the saved one.
  bool apply(const std::function<void(Scenario&)>& change, std::optional<std::uint64_t> revision,
             bool own_step = false);
  void restore(std::optional<Revision> r);
  void clamp_views();  // a new result: the head and the decoded token stay within it
  // Opens `s`, layer `layer` of m, as the document on the pipeline view, the way back leading to `from`.
  bool visit_layer(Scenario s, int layer, const Model& m, View from);
  Document doc_;
  History history_;
  std::int64_t history_bytes_;  // the history's bound before the budget's share
  std::optional<LayerVisit> layer_visit_;
  Computation computation_;
  std::vector<std::shared_ptr<const Scenario>>
      retired_documents_;  // replaced during this frame; freed at the next poll()
};

}  // namespace attn::ui
