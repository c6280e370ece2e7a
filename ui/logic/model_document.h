#pragma once
// The model the Model view shows (core/model.h), edited as a document of its own: the model file and the
// tokens typed in, with an undo history, and the forward pass computed from them (on a worker thread when the
// model is big). An edit that leaves no valid model (or a token outside the vocabulary) is refused with the
// reason and changes nothing.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/memory_budget.h"
#include "core/model.h"
#include "ui/logic/file_identity.h"
#include "ui/logic/history.h"
#include "ui/logic/latest_results.h"

namespace attn::ui {

// One state of the model document.
struct ModelInput {
  Model model;                      // as its file gives it: a missing weight is drawn from the seed
  std::vector<std::string> tokens;  // from the vocabulary, 1 .. max_positions of them
};

// Tokens to start with: the vocabulary from its first token, up to 8 (and max_positions).
std::vector<std::string> starting_tokens(const Model& m);
// The model with the tokens typed (separated by spaces), or with its starting tokens when none are.
ModelInput model_input(Model m, std::string_view typed_tokens = {});

// Each head's weights of every layer are kept as an overview of at most this many cells a side (the head grid's
// cells are at most 140 pixels); the shown layer's whole.
inline constexpr int kModelOverview = 64;

// What the Model view's forward pass of `in` keeping `layer`'s heads holds (predicted_model_run_bytes).
std::int64_t model_view_bytes(const ModelInput& in, int layer);
// Why the Model view's forward pass of `in` keeping `layer`'s heads (predicted_model_run_bytes) and its undo history
// (`history_bytes`, its share) do not fit the budget beside what the window's other views hold, or nullopt.
std::optional<std::string> model_view_refusal(const ModelInput& in, int layer, std::int64_t budget,
                                              const HeldBeside& beside = {}, std::int64_t history_bytes = 0);
// The forward pass the Model view runs: `layer`'s heads kept whole, every layer's as an overview.
ModelRunOptions model_view_run(int layer);

// What the Model view shows: a state of the document and its forward pass, the newest one computed.
struct ModelShown {
  std::shared_ptr<const ModelInput> input;
  std::shared_ptr<const Model> resolved;    // every weight, drawn ones included
  std::shared_ptr<const ModelTrace> trace;  // the heads of `layer` kept whole (LayerTrace::kept), overviews of all
  int layer = 0;
  std::uint64_t ticket = 0;  // which state of the document: every change takes the next one
  double seconds = 0.0;      // how long the forward pass took
  std::string error;         // the worker could not compute it (no trace then)
};

// A forward pass of this much work or more (multiply-adds, about a millisecond) is computed on a worker
// thread, so that a drag on a big model keeps the window's frames; a smaller one in the frame.
std::int64_t model_work(const Model& resolved, std::int64_t parameters, int tokens);
inline constexpr std::int64_t kModelBackgroundWork = std::int64_t(1) << 21;

class ModelDocument {
 public:
  // `history_bytes` bounds the undo history (tests give a smaller bound); a state whose forward pass would hold more
  // than `memory_budget` bytes is refused with both numbers.
  explicit ModelDocument(std::int64_t history_bytes = BasicHistory<ModelInput>::kBytes,
                         std::int64_t memory_budget = limits::kDefaultMemoryBudget);

  bool loaded() const { return input_ != nullptr; }
  // Replaces the document and its history, its forward pass computed before this returns. Returns why not if
  // it cannot be computed (the old one stays).
  std::optional<std::string> open(ModelInput input, std::filesystem::path path);

  // The newest state, what edits start from. Only while loaded(). Valid until the next poll() after an edit,
  // undo, redo or open: a view may read them after an edit it made in the same frame.
  const ModelInput& input() const { return *input_; }
  const Model& model() const { return input_->model; }
  const Model& resolved() const { return *resolved_; }     // every weight, drawn ones included
  std::int64_t parameters() const { return parameters_; }  // parameter_count(model())
  // What the views draw: the newest state whose forward pass is done. A small model's is computed in the
  // edit itself, so it is the newest state; a big model's on the worker, and until it is done the last one
  // stays.
  const ModelShown& shown() const { return results_.shown(); }
  const ModelTrace& trace() const { return *results_.shown().trace; }
  bool computing() const { return results_.computing(); }
  std::uint64_t ticket() const { return results_.ticket(); }  // the newest state's

  // Applies `change` to a copy; if that is not a valid model (or a token is outside its vocabulary) nothing
  // changes and the reason is returned ("layers[0].attention.heads: ..."). Edits made while `gesture` (the
  // active widget, 0: none) stays the same are one undo step.
  std::optional<std::string> edit(const std::function<void(ModelInput&)>& change, unsigned gesture = 0);
  // The same as edit() setting the tokens, without drawing the weights from the seed again.
  std::optional<std::string> edit_tokens(std::vector<std::string> tokens, unsigned gesture = 0);
  // One weight set to `value` (its slot picked by `slot` from a model): the same as edit() setting it, without
  // drawing the other weights from the seed again (a drag on a 4-layer d_model 256 model would redraw 3M numbers
  // every frame).
  using WeightSlot = std::function<SharedMatrix&(Model&)>;
  std::optional<std::string> edit_weight(const WeightSlot& slot, const Matrix& value, unsigned gesture = 0);
  // The layer whose heads the forward pass keeps whole (the others as overviews): another is computed again, on
  // the worker when the model is big, and shown when done. Out of range: the last layer. Returns why not when that
  // layer's heads would not fit the memory budget (nothing changes then).
  std::optional<std::string> show_layer(int layer);
  int shown_layer() const { return layer_; }
  std::int64_t memory_budget() const { return budget_; }
  // The budget the next forward pass is held to (what is shown stays until then); the undo history keeps at most
  // its share (history_share).
  void set_memory_budget(std::int64_t budget);
  // What the window's other views hold, which the budget must leave room for beside the forward pass (the window
  // sets it; nothing by default).
  std::function<HeldBeside()> held_beside = [] { return HeldBeside{}; };
  // What this view holds: the newest state's forward pass (as model_view_refusal counts it) and the undo history's
  // share of the budget; nothing before a model is opened.
  std::int64_t held_bytes() const;

  // False when there is nothing to undo (redo), or when it could not be computed: the history is then as before.
  bool undo();
  bool redo();
  bool can_undo() const { return history_.can_undo(); }
  bool can_redo() const { return history_.can_redo(); }
  void end_gesture() { history_.end_gesture(); }

  // At the start of every frame (LatestResults::poll).
  bool poll(std::optional<std::string>& failure) { return results_.poll(failure); }
  void wait() { results_.wait(); }  // until the worker is idle: a poll() after it shows the newest state

  // The file: empty until opened from or saved to one.
  const std::filesystem::path& path() const { return path_; }
  std::uint64_t revision() const { return revision_; }
  bool dirty() const { return revision_ != saved_revision_; }
  void mark_saved(std::filesystem::path path);
  void mark_unsaved() { saved_revision_ = ~std::uint64_t{0}; }  // a state restored from the recovery file
  // The file's stamp when it was opened or last saved (file_identity.h).
  const std::optional<FileStamp>& stamp() const { return stamp_; }
  // Restored from the recovery file, from this original (titled after it) until saved or another is opened.
  const std::filesystem::path& recovered_from() const { return recovered_from_; }
  void mark_recovered(std::filesystem::path original) { recovered_from_ = std::move(original); }

 private:
  // adopt() as an undoable step of `gesture`, or the reason it was refused.
  std::optional<std::string> replace(std::shared_ptr<const ModelInput> next, std::shared_ptr<const Model> resolved,
                                     unsigned gesture);
  // Checks `next` (with its weights resolved already, if given) and makes it the document at `revision`, its
  // forward pass computed here (when small or `in_frame`) or requested from the worker; or returns why not.
  std::optional<std::string> adopt(std::shared_ptr<const ModelInput> next, std::uint64_t revision,
                                   std::shared_ptr<const Model> resolved = nullptr, bool in_frame = false);
  std::shared_ptr<const ModelInput> input_;
  std::shared_ptr<const Model> resolved_;
  std::int64_t parameters_ = 0;
  std::int64_t budget_;
  std::int64_t history_bytes_;  // the history's bound before the budget's share
  int layer_ = 0;               // whose heads are kept
  BasicHistory<ModelInput> history_;
  std::filesystem::path path_;
  std::optional<FileStamp> stamp_;
  std::filesystem::path recovered_from_;
  std::uint64_t revision_ = 0, saved_revision_ = 0;
  LatestResults<ModelShown, ModelShown> results_;  // last: its thread starts after everything it uses
};

// The bytes one state holds (the given weights and the tokens), for the history's bound. States share the weights
// an edit left alone (SharedMatrix), but each counts them whole: the bound errs on the side of memory.
std::int64_t model_input_bytes(const ModelInput& in);

}  // namespace attn::ui
