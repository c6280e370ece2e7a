#pragma once
// What the views read, computed from one revision of the document, and the worker thread that computes
// it away from the frame when the document is big: the window keeps drawing the last complete result,
// the newest edit wins and results for older revisions are dropped.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/attention.h"
#include "core/decode.h"
#include "core/scenario.h"

namespace attn::ui {

struct Computed {
  std::shared_ptr<const Trace> trace;
  std::shared_ptr<const DecodeTrace> decoded;  // nullptr when the document cannot be decoded
  std::shared_ptr<const Trace> causal_trace;   // what decoding must reproduce row by row (the trace itself when causal)
  std::string decode_error;                    // why it cannot be decoded
  std::uint64_t revision = 0;                  // the document revision it was computed from
  double seconds = 0.0;                        // how long computing it took
};

// The document as decoding sees it: nothing after the current token, so "none" becomes causal and a custom
// mask loses its future cells.
Scenario causal_version(const Scenario& s);

// Validates (throws ScenarioError) and computes the trace, the decoding and the causal trace.
Computed compute_all(const Scenario& s, std::uint64_t revision);

// Above this many attention cells (heads x N_Q x N_KV; 8 heads at 180 tokens) an edit is computed on the
// worker: about 10 ms of work, where a frame has 16.
inline constexpr std::int64_t kBackgroundCells = std::int64_t(1) << 18;
bool compute_in_background(const Scenario& s);

class RecomputeWorker {
 public:
  RecomputeWorker();
  ~RecomputeWorker();
  RecomputeWorker(const RecomputeWorker&) = delete;
  RecomputeWorker& operator=(const RecomputeWorker&) = delete;

  // Queues a revision (validated by the caller); replaces one that has not started yet.
  void submit(Scenario s, std::uint64_t revision);
  // The result of the newest revision submitted, once it is ready.
  std::optional<Computed> take();
  bool busy() const;  // a revision queued or being computed
  void wait();        // until nothing is queued or being computed

 private:
  void run();
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::optional<std::pair<Scenario, std::uint64_t>> queued_;
  std::optional<Computed> done_;
  bool running_ = false, stop_ = false;
  std::thread thread_;  // last, so that it starts after everything it uses
};

}  // namespace attn::ui
