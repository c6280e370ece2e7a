#pragma once
// A Hugging Face model folder opened in the window (core/io/checkpoint_model.h) as a document of its own: the text the
// class typed and the heads knocked out, with an undo history. The forward pass runs on a worker, the newest state
// winning; the worker says which layer it is on, and the last complete result stays on screen meanwhile. A text the
// model cannot read (too long, no tokens) keeps the state, says why and leaves the last result shown.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ablation.h"
#include "core/io/checkpoint_model.h"
#include "core/memory_budget.h"
#include "core/model.h"
#include "core/tokenizer.h"
#include "ui/logic/history.h"
#include "ui/logic/latest_results.h"
#include "ui/logic/window_memory.h"

namespace attn::ui {

// The text a folder opens on (a repeat, so induction heads have something to find).
inline constexpr const char* kRealModelStartingText = "The cat sat on the mat. The cat sat on the mat.";

// A random repeated sequence draws this many tokens and repeats them once: only a head that looks back for what came
// after the token's last occurrence (an induction head) can predict the second half.
inline constexpr int kRandomRepeatHalf = 20;

// One state of the document: what an undo step brings back.
struct RealModelState {
  std::string text;
  Ablation ablation;
  // Token ids read as they are rather than `text` tokenized: drawn at random, they need not survive a decode and an
  // encode. `text` is then their pieces joined, what the text box shows; a text typed replaces them.
  std::optional<std::vector<int>> ids{};
};

// The Real model view as the recovery file keeps it (document_files.h): its folder and newest state. It has no file
// of its own, so it is kept whenever a folder is open.
struct RealModelRecovery {
  std::filesystem::path folder;
  RealModelState state;
  std::optional<KvConversion> conversion{};  // the folder's model converted in memory (CheckpointModel::converted)
};

// What the views draw: a state and its forward pass.
struct RealModelRun {
  std::shared_ptr<const CheckpointModel> model;
  std::shared_ptr<const CheckpointModel> source;  // the folder's model: `model` before its conversion, or it
  std::optional<KvConversion> conversion;         // the one `model` was made by
  std::filesystem::path folder;
  std::shared_ptr<const RealModelState> state;
  Encoding text;                               // the model's pieces of state->text and their ids
  std::shared_ptr<const ModelTrace> trace;     // as ablated: every head's weights as an overview and its scores
  std::shared_ptr<const ModelTrace> baseline;  // with an ablation, the model without it; else null
  std::vector<double> losses;                  // next_token_losses of trace
  std::vector<double> baseline_losses;         // ... of baseline, with an ablation
  std::uint64_t ticket = 0;
  double seconds = 0.0;
  std::string error;  // why it could not be computed (no trace then)
};

// What the worker is asked: the model (null: open the folder first, or convert `source` when given) on a state.
struct RealModelJob {
  std::shared_ptr<const CheckpointModel> model;
  std::shared_ptr<const CheckpointModel> source;
  std::optional<KvConversion> conversion;
  std::filesystem::path folder;
  std::shared_ptr<const RealModelState> state;
  std::uint64_t ticket = 0;
  std::int64_t budget = 0;
  // The unablated run of the same model on the same text, when one is shown already: reused rather than run again.
  std::shared_ptr<const ModelTrace> unablated{};
  std::int64_t shown_bytes = 0;  // what the model shown holds of its own (converted in memory), kept while converting
};

// Where the worker is, written by it and read by the frame.
struct RealModelProgress {
  enum Phase { Idle, Opening, Converting, Running, Baseline };
  std::atomic<int> phase{Idle};
  std::atomic<int> layer{0};  // the layers done in this pass
  std::atomic<int> layers{0};
  // A state with an ablation runs twice (knocked out, then as trained): the bar goes once across both.
  std::atomic<int> pass{0}, passes{1};
};

// The model the worker opened last, its folder and conversion: a state that then fails keeps it, so the next edit does
// not open the folder again.
struct OpenedFolder {
  std::mutex mutex;
  std::filesystem::path folder;
  std::optional<KvConversion> conversion;
  std::shared_ptr<const CheckpointModel> model, source;
};

// "reading the folder", "layer 3 of 12", "layer 3 of 12 without the ablation"; and how far along, 0..1.
std::string progress_text(const RealModelProgress& p);
double progress_fraction(const RealModelProgress& p);

// The bytes a forward pass of n tokens holds in the window: the run (its stream and logits, no layer's heads kept),
// every head's overview, and with an ablation the unablated run beside it.
std::int64_t real_model_run_bytes(const CheckpointModel& m, std::int64_t n, bool ablated);

// The template's prefix (a BOS), then `half` ids drawn from the vocabulary's first `vocab` ids (never a special token,
// an added special token or the unknown one), then the same `half` again; fewer when the model's `positions` do not
// hold them, at least one. The same seed draws the same ids. InputError when no id can be drawn or nothing fits.
std::vector<int> random_repeated_ids(const Tokenizer& t, int vocab, int positions, std::uint64_t seed,
                                     int half = kRandomRepeatHalf);
// The text box's text for ids: their pieces joined, the template's prefix left out.
std::string ids_text(const CheckpointModel& m, const std::vector<int>& ids);
// What a converted model was made from, runs of layers alike together: "made from gpt2: layers 0-5 as mla with a
// latent of 64, layer 6 as mqa"; empty for a model as its source has it.
std::string conversion_text(const CheckpointModel& m);
// Why a RoPE model converted to mla expands its cached latents again at every token, and what that costs with
// `context` tokens cached: "RoPE turns its keys after the up-projection, so W_UK cannot be absorbed: each new token
// expands every cached latent into keys again, 201 MFLOP a token at 4,096 cached tokens". Empty when every layer
// absorbs.
std::string reexpansion_text(const Model& m, std::int64_t context);

class RealModelDocument {
 public:
  explicit RealModelDocument(std::int64_t memory_budget = limits::kDefaultMemoryBudget);

  // Opens `folder` on the worker with this text and ablation: shown once computed (the model open before stays until
  // then). A folder that cannot be opened says why through poll().
  void open(std::filesystem::path folder, std::string text, Ablation ablation = {});
  // The same on a whole state (the recovery file's, token ids and all), the folder's model converted in memory when
  // a conversion is given; `source`, when the folder's model is at hand already, is converted rather than read again.
  void open(std::filesystem::path folder, RealModelState state, std::optional<KvConversion> conversion = {},
            std::shared_ptr<const CheckpointModel> source = nullptr);
  bool loaded() const { return results_.shown().trace != nullptr; }
  const RealModelRun& shown() const { return results_.shown(); }
  const RealModelState& state() const { return *state_; }  // the newest, what edits start from
  bool ablated() const { return !state_->ablation.empty(); }

  // A new text (typing is one undo step while `gesture` stays the same widget) or a new set of heads knocked out.
  void set_text(std::string text, unsigned gesture = 0);
  void set_ablation(Ablation ablation);
  // A random repeated sequence of the shown model's tokens in place of the text (random_repeated_ids): one undo step.
  // False, and failure() says why, when the model cannot hold one or none is shown yet.
  bool set_random_repeat(std::uint64_t seed);
  bool undo();
  bool redo();
  bool can_undo() const { return history_.can_undo(); }
  bool can_redo() const { return history_.can_redo(); }
  void end_gesture() { history_.end_gesture(); }

  // At the start of every frame: shows the worker's newest result; `failure` says why one could not be computed.
  bool poll(std::optional<std::string>& failure);
  void wait() { results_.wait(); }
  bool computing() const { return results_.computing(); }
  std::uint64_t ticket() const { return results_.ticket(); }  // the newest state's: shown().ticket once it shows
  const RealModelProgress& progress() const { return *progress_; }
  // Why the newest state could not be computed (empty once a state is shown): said under the text box.
  const std::string& failure() const { return failure_; }
  const std::filesystem::path& folder() const { return folder_; }
  const std::optional<KvConversion>& conversion() const { return conversion_; }
  // Changes with every state submitted: what the autosave compares.
  std::uint64_t revision() const { return revision_; }
  std::int64_t memory_budget() const { return budget_; }
  void set_memory_budget(std::int64_t budget) {
    budget_ = budget;
    history_.set_bytes(history_share(budget));
  }

 private:
  void submit(std::shared_ptr<const RealModelState> next, unsigned gesture, bool record);
  std::shared_ptr<const ModelTrace> unablated_run() const;  // the shown one's, when it read the newest text
  std::int64_t budget_;
  std::filesystem::path folder_;
  std::optional<KvConversion> conversion_;
  std::shared_ptr<const CheckpointModel> model_, source_;  // the folder's (converted, and as read), once opened
  std::shared_ptr<const RealModelState> state_ = std::make_shared<RealModelState>();
  std::uint64_t revision_ = 0;
  std::string failure_;
  BasicHistory<RealModelState> history_;
  std::shared_ptr<RealModelProgress> progress_ = std::make_shared<RealModelProgress>();
  std::shared_ptr<OpenedFolder> opened_ = std::make_shared<OpenedFolder>();
  LatestResults<RealModelJob, RealModelRun> results_;  // last: its thread starts after everything it uses
};

}  // namespace attn::ui
