#pragma once
// The model the Model view shows (core/model.h), edited as a document of its own: the model file and the
// tokens typed in, with an undo history, and the forward pass computed from them. An edit that leaves no
// valid model (or a token outside the vocabulary) is refused with the reason and changes nothing.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "ui/logic/history.h"

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

class ModelDocument {
 public:
  // `history_bytes` bounds the undo history (tests give a smaller bound).
  explicit ModelDocument(std::int64_t history_bytes = BasicHistory<ModelInput>::kBytes);

  bool loaded() const { return input_ != nullptr; }
  // Replaces the document and its history. Returns why not if it cannot be computed (the old one stays).
  std::optional<std::string> open(ModelInput input, std::filesystem::path path);

  // Only while loaded(). Valid until release_retired() after the next edit, undo, redo or open: a view may read
  // them after an edit it made in the same frame.
  const ModelInput& input() const { return *input_; }
  const Model& model() const { return input_->model; }
  const Model& resolved() const { return *resolved_; }  // every weight, drawn ones included
  const ModelTrace& trace() const { return *trace_; }
  double last_run_seconds() const { return seconds_; }
  std::int64_t parameters() const { return parameters_; }  // parameter_count(model())

  // Applies `change` to a copy and computes it; if that fails nothing changes and the reason is returned
  // ("layers[0].attention.heads: ..."). Edits made while `gesture` (the active widget, 0: none) stays the
  // same are one undo step.
  std::optional<std::string> edit(const std::function<void(ModelInput&)>& change, unsigned gesture = 0);
  // One weight set to `value` (its slot picked by `slot` from a model): the same as edit() setting it, without
  // drawing the other weights from the seed again (a drag on a 4-layer d_model 256 model would redraw 3M numbers
  // every frame).
  using WeightSlot = std::function<std::optional<Matrix>&(Model&)>;
  std::optional<std::string> edit_weight(const WeightSlot& slot, const Matrix& value, unsigned gesture = 0);
  bool undo();
  bool redo();
  bool can_undo() const { return history_.can_undo(); }
  bool can_redo() const { return history_.can_redo(); }
  void end_gesture() { history_.end_gesture(); }
  void release_retired() { retired_.clear(); }  // at the start of a frame (AppState::poll)

  // The file: empty until opened from or saved to one.
  const std::filesystem::path& path() const { return path_; }
  std::uint64_t revision() const { return revision_; }
  bool dirty() const { return revision_ != saved_revision_; }
  void mark_saved(std::filesystem::path path);

 private:
  // adopt() as an undoable step of `gesture`, or the reason it was refused.
  std::optional<std::string> replace(std::shared_ptr<const ModelInput> next, std::shared_ptr<const Model> resolved,
                                     unsigned gesture);
  // Computes `next` (with its weights resolved already, if given); on success it becomes the document at `revision`.
  std::optional<std::string> adopt(std::shared_ptr<const ModelInput> next, std::uint64_t revision,
                                   std::shared_ptr<const Model> resolved = nullptr);
  std::shared_ptr<const ModelInput> input_;
  std::shared_ptr<const Model> resolved_;
  std::shared_ptr<const ModelTrace> trace_;
  double seconds_ = 0.0;
  std::int64_t parameters_ = 0;
  struct Retired {
    std::shared_ptr<const ModelInput> input;
    std::shared_ptr<const Model> resolved;
    std::shared_ptr<const ModelTrace> trace;
  };
  std::vector<Retired> retired_;  // replaced during this frame
  BasicHistory<ModelInput> history_;
  std::filesystem::path path_;
  std::uint64_t revision_ = 0, saved_revision_ = 0;
};

// The bytes one state holds (the given weights and the tokens), for the history's bound.
std::int64_t model_input_bytes(const ModelInput& in);

}  // namespace attn::ui
