#pragma once
// The Train view's gradient tab: each head's d weights and d scores on a snapshot's probe sequence, from a forward
// and backward pass of its model. Computed on a worker thread (as the trace and the Model view's forward pass are),
// once per snapshot shown; the tab shows the newest computed while a newer one is asked for.
#include <memory>
#include <vector>

#include "core/model_gradient.h"
#include "ui/logic/latest_worker.h"
#include "ui/logic/trainer.h"

namespace attn::ui {

class SnapshotGradients {
 public:
  SnapshotGradients();
  // The gradients of `s` (every layer's), or null while they are computed: asked for then (the newest asked wins).
  // An empty vector: they could not be computed (out of memory).
  const std::vector<HeadGradients>* of(const std::shared_ptr<const TrainSnapshot>& s);
  void poll();  // at the start of every frame: takes a finished result
  void wait();  // until what was asked for is computed and taken (captures)

 private:
  struct Result {
    std::shared_ptr<const TrainSnapshot> snapshot;
    std::vector<HeadGradients> layers;
  };
  using Job = std::shared_ptr<const TrainSnapshot>;
  std::shared_ptr<const TrainSnapshot> asked_;
  Result shown_;
  LatestWorker<Job, Result> worker_;  // last: its thread starts after the rest is made
};

}  // namespace attn::ui
