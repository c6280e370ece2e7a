#include "ui/logic/snapshot_gradients.h"

#include <utility>

namespace attn::ui {

SnapshotGradients::SnapshotGradients()
    : worker_(
          [](const Job& s) {
            return Result{s, attention_gradients(*s->model, s->probe, next_token_targets(s->probe))};
          },
          [](const Job& s, const std::exception&) {
            return Result{s, {}};
          },
          0.0) {}

const std::vector<HeadGradients>* SnapshotGradients::of(const std::shared_ptr<const TrainSnapshot>& s) {
  if (shown_.snapshot == s) return &shown_.layers;
  if (asked_ != s) {
    asked_ = s;
    worker_.submit(s);
  }
  return nullptr;
}

void SnapshotGradients::poll() {
  if (std::optional<Result> done = worker_.take()) worker_.dispose(std::exchange(shown_, std::move(*done)));
}

void SnapshotGradients::wait() {
  while (worker_.wait()) poll();  // a result held back the newest job: take it, and wait for that one
  poll();
}

}  // namespace attn::ui
