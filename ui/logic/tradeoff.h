#pragma once
// What a smaller KV cache costs the opened model, measured in the window (core/kv_tradeoff.h): the model as shipped,
// GQA at every divisor of its key/value heads and MLA at a ladder of latent widths, each run on the class's text or
// on the shipped sonnets. The measurement runs on a worker, point by point with its progress told; asking again (a
// new text, another model) drops a measurement under way at its next point.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/io/checkpoint_model.h"
#include "core/kv_tradeoff.h"
#include "core/memory_budget.h"
#include "core/tokenizer.h"
#include "ui/logic/latest_results.h"

namespace attn::ui {

// The texts the window measures on, as the view names them.
inline constexpr const char* kTypedTextName = "the typed text";
inline constexpr const char* kSonnetsName = "the sonnets";

// One measurement as the Compare view draws it.
struct TradeoffRun {
  std::shared_ptr<const CheckpointModel> model;
  std::filesystem::path folder;  // the model's: a point opens it converted (open_tradeoff_point)
  std::string text_name;         // "the typed text", "the sonnets"
  std::int64_t tokens = 0;
  // The points, the model as shipped first (LatestResults reads a result's `trace`: none when it failed).
  std::shared_ptr<const std::vector<TradeoffPoint>> trace;
  std::uint64_t ticket = 0;
  double seconds = 0.0;
  std::string error;
};

struct TradeoffJob {
  std::shared_ptr<const CheckpointModel> model;
  std::filesystem::path folder;
  Encoding text;
  std::string text_name;
  std::uint64_t ticket = 0;
  std::int64_t budget = 0;
};

// Where the worker is: the original's windows, then point `done` of `points`.
struct TradeoffProgress {
  std::atomic<bool> running{false};
  std::atomic<int> done{0}, points{0};
  std::atomic<std::uint64_t> newest{0};  // the newest ticket asked for: an older measurement stops
};

// The bytes measuring every conversion of `m` on `text` holds: both models' passes on a window, the text and every
// window's final stream, the widest conversion's weights and every layer's SVD.
std::int64_t tradeoff_bytes(const CheckpointModel& m, const Encoding& text,
                            const std::vector<KvConversion>& conversions);

class TradeoffDocument {
 public:
  explicit TradeoffDocument(std::int64_t memory_budget = limits::kDefaultMemoryBudget);
  // Measures `model` (opened from `folder`) on `text` (its name for the view), replacing any measurement asked for
  // before.
  void measure(std::shared_ptr<const CheckpointModel> model, std::filesystem::path folder, Encoding text,
               std::string text_name);
  // Drops the measurement under way (the model it measures was closed).
  void cancel();
  bool loaded() const { return results_.shown().trace != nullptr; }
  // Whether the newest measurement asked for (under way, shown or failed) is of `model` from `folder` on `text_name`
  // (and, given `ids`, on those tokens).
  bool asked_for(const std::shared_ptr<const CheckpointModel>& model, const std::filesystem::path& folder,
                 const std::string& text_name, const std::vector<int>* ids = nullptr) const;
  const TradeoffRun& shown() const { return results_.shown(); }
  // At the start of every frame: shows the worker's newest measurement; `failure` says why one could not be made.
  bool poll(std::optional<std::string>& failure);
  void wait() { results_.wait(); }
  bool computing() const { return !cancelled_ && results_.computing(); }
  const TradeoffProgress& progress() const { return *progress_; }
  void set_memory_budget(std::int64_t budget) { budget_ = budget; }

 private:
  std::int64_t budget_;
  bool cancelled_ = false;
  struct Asked {
    std::shared_ptr<const CheckpointModel> model;
    std::filesystem::path folder;
    std::string text_name;
    std::vector<int> ids;
  } asked_;
  std::shared_ptr<TradeoffProgress> progress_ = std::make_shared<TradeoffProgress>();
  LatestResults<TradeoffJob, TradeoffRun> results_;  // last: its thread starts after everything it uses
};

// One row of the Compare view's table: a point's cache and what it costs, as words and numbers.
struct TradeoffRow {
  std::string cache;       // "as shipped", "gqa 4", "mqa", "mla 384"
  std::string per_token;   // bytes per token, every layer: "18,432 B"
  std::string at_context;  // the whole cache at `context` tokens: "604 MB"
  std::string loss;        // "3.2871 (+0.0412)"
  std::string perplexity;
  std::string top1;  // "98.20%", "-" for the model as shipped
  std::string kl;    // "0.0123", "-"
};
std::vector<TradeoffRow> tradeoff_rows(const std::vector<TradeoffPoint>& points, std::int64_t context);

// "point 3 of 14", "the original's windows"; and how far along, 0..1.
std::string tradeoff_progress_text(const TradeoffProgress& p);
double tradeoff_progress_fraction(const TradeoffProgress& p);

}  // namespace attn::ui
