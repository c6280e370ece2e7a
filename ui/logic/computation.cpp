#include "ui/logic/computation.h"

#include <utility>

#include "core/init.h"

namespace attn::ui {

Computation::Computation(const Scenario& first)
    : worker_([](const RecomputeRequest& r) { return compute_all(*r.scenario, r.ticket, r.resolved.get()); },
              failed_computation, 0.5) {  // docs/PERFORMANCE.md: the view catches up sooner
  show(compute_all(first, ++ticket_));
}

void Computation::request(std::shared_ptr<const Scenario> document, bool same_weights) {
  if (!same_weights) weights_.reset();
  else if (!weights_ && now_.ticket == ticket_) weights_ = std::make_shared<const Weights>(now_.trace->weights);
  ++ticket_;
  if (compute_in_background(*document)) worker_.submit({std::move(document), ticket_, weights_});
  else show(compute_all(*document, ticket_));
}

void Computation::show(Computed c) {
  // A view that made an edit may still hold the old result until the frame ends: it is kept until the next
  // poll(), then freed on the worker.
  if (now_.trace) retired_.push_back(std::exchange(now_, std::move(c)));
  else now_ = std::move(c);
}

bool Computation::poll(std::optional<std::string>& failure) {
  for (Computed& old : retired_) worker_.dispose(std::move(old));
  retired_.clear();
  std::optional<Computed> c = worker_.take();
  if (!c) return false;
  if (!c->trace) {  // it failed: the last complete trace stays
    failed_ticket_ = c->ticket;
    failure = c->decode_error;
    return false;
  }
  // A result older than the one shown (an undo back to a small document overtook it) is dropped.
  if (c->ticket <= now_.ticket) {
    worker_.dispose(std::move(*c));
    return false;
  }
  show(std::move(*c));
  return true;
}

void Computation::wait() {
  // Even when nothing is awaited: a stale request may still be running, and its result must meet poll's
  // check now, not later (the newest request was queued last, so it is the last one done).
  worker_.wait();
}

std::shared_ptr<const Weights> Computation::weights(const Scenario& document) const {
  if (now_.ticket == ticket_) return {now_.trace, &now_.trace->weights};
  if (!weights_) weights_ = std::make_shared<const Weights>(resolve_weights(document));
  return weights_;
}

}  // namespace attn::ui
