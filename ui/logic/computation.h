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
#include "ui/logic/recompute.h"

namespace attn::ui {

class Computation {
 public:
  // The first document (valid) is computed here: a trace is there before the first frame.
  explicit Computation(const Scenario& first);

  // Valid until the next poll(): a view may read it after an edit it made in the same frame.
  const Computed& shown() const { return now_; }
  // A new state of the document (valid). `same_weights`: it resolves to the same weights as the previous
  // one (same_resolved_weights), which are then kept instead of drawn again.
  void request(std::shared_ptr<const Scenario> document, bool same_weights);
  // At the start of every frame: frees the results replaced since the last call and takes the worker's
  // newest. Returns whether a new result is shown; `failure` is set when one could not be computed, to why.
  bool poll(std::optional<std::string>& failure);
  void wait();  // until the worker is idle: a poll() after it takes every result the worker will give

  // Every request takes a ticket; the shown result answers one of them.
  std::uint64_t ticket() const { return ticket_; }
  bool computing() const { return now_.ticket != ticket_ && failed_ticket_ != ticket_; }
  // The weights the newest document computes with: the shown trace's, or while it is an older request's,
  // the document's own (given ones, the rest drawn from its seed). Shared: an edit replaces them.
  std::shared_ptr<const Weights> weights(const Scenario& document) const;

 private:
  void show(Computed c);
  Computed now_;
  std::vector<Computed> retired_;  // replaced during this frame; freed at the next poll()
  std::uint64_t ticket_ = 0;
  std::uint64_t failed_ticket_ = 0;  // the worker could not compute this one (out of memory)
  RecomputeWorker worker_;
  // The document's weights while its trace is computed, kept across edits that leave them alone: drawing
  // a 512-wide layer's weights from the seed every frame of a drag would cost the window milliseconds.
  mutable std::shared_ptr<const Weights> weights_;
};

}  // namespace attn::ui
