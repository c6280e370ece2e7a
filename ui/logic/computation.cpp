#include "ui/logic/computation.h"

#include <utility>

#include "core/init.h"

namespace attn::ui {
namespace {

// While edits stream in, the worker rests a quarter as long as it worked: the view catches up sooner, and the frames
// still meet their targets (docs/PERFORMANCE.md, the window).
constexpr double kRestAfterTrace = 0.25;

}  // namespace

Computation::Computation(const Scenario& first)
    : results_(
          // The worker remembers the last trace it computed: a drag's next document differs from it in one token,
          // and the tiles and blocks that did not change are taken from it. Weakly: once the window has let it go
          // (a newer trace shown, or a small document computed in the frame) it is freed, not kept for the next job.
          [last = std::weak_ptr<const Trace>()](const RecomputeRequest& r) mutable {
            std::shared_ptr<const Trace> earlier = last.lock();
            if (!earlier) earlier = r.shown.lock();
            Computed c = compute_all(*r.scenario, r.ticket, r.resolved.get(), r.shown_head, earlier.get());
            if (c.trace) last = c.trace;
            return c;
          },
          failed_computation, kRestAfterTrace, &Computed::decode_error) {
  results_.show(compute_all(first, results_.next_ticket()));
}

void Computation::request(std::shared_ptr<const Scenario> document, bool same_weights, int shown_head) {
  const Computed& now = results_.shown();
  if (!same_weights) weights_.reset();
  else if (!weights_ && now.ticket == results_.ticket()) weights_ = std::make_shared<const Weights>(now.trace->weights);
  const std::uint64_t ticket = results_.next_ticket();
  if (compute_in_background(*document)) results_.submit({std::move(document), ticket, weights_, shown_head, now.trace});
  else results_.show(compute_all(*document, ticket, nullptr, shown_head, now.trace.get()));
}

std::shared_ptr<const Weights> Computation::weights(const Scenario& document) const {
  const Computed& now = results_.shown();
  if (now.ticket == results_.ticket()) return {now.trace, &now.trace->weights};
  if (!weights_) weights_ = std::make_shared<const Weights>(resolve_weights(document));
  return weights_;
}

}  // namespace attn::ui
