#pragma once
// What the views read, computed from the document: the latest complete result (trace, decoding, causal
// trace) and the requests that replace it, computed in the same frame when small and on the worker when big
// (see recompute.h). A result older than the one shown is dropped; a failed one leaves the last one shown.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "ui/logic/latest_results.h"
#include "ui/logic/recompute.h"

namespace attn::ui {

class Computation {
 public:
  // The first document (valid) is computed here: a trace is there before the first frame.
  explicit Computation(const Scenario& first);

  // Valid until the next poll(): a view may read it after an edit it made in the same frame.
  const Computed& shown() const { return results_.shown(); }
  // A new state of the document (valid). `same_weights`: it resolves to the same weights as the previous
  // one (same_resolved_weights), which are then kept instead of drawn again. `shown_head`: the head the pipeline
  // follows (compute_all).
  void request(std::shared_ptr<const Scenario> document, bool same_weights, int shown_head = 0);
  // At the start of every frame (LatestResults::poll).
  bool poll(std::optional<std::string>& failure) { return results_.poll(failure); }
  // Even when nothing is awaited: a stale request may still be running, and its result must meet poll's check now,
  // not later (the newest request was queued last, so it is the last one done).
  // Returns whether a result was shown meanwhile (one that held back a newer request).
  bool wait() { return results_.wait(); }

  std::uint64_t ticket() const { return results_.ticket(); }
  bool computing() const { return results_.computing(); }
  // The weights the newest document computes with: the shown trace's, or while it is an older request's,
  // the document's own (given ones, the rest drawn from its seed). Shared: an edit replaces them.
  std::shared_ptr<const Weights> weights(const Scenario& document) const;

 private:
  LatestResults<RecomputeRequest, Computed> results_;
  // The document's weights while its trace is computed, kept across edits that leave them alone: drawing
  // a 512-wide layer's weights from the seed every frame of a drag would cost the window milliseconds.
  mutable std::shared_ptr<const Weights> weights_;
};

}  // namespace attn::ui
