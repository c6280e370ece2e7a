#include "ui/recompute.h"

#include <chrono>

#include "core/mask.h"
#include "core/validate.h"

namespace attn::ui {

Scenario causal_version(const Scenario& s) {
  Scenario c = s;
  c.attention.mask = MaskKind::Custom;
  c.attention.custom_mask = decode_mask(s.attention, s.n_q());
  return c;
}

Computed compute_all(const Scenario& s, std::uint64_t revision) {
  const auto start = std::chrono::steady_clock::now();
  Computed c;
  c.revision = revision;
  c.trace = std::make_shared<const Trace>(compute_trace(s));
  c.causal_trace = c.trace;
  // Decoding needs the tokens' own keys; a cross-attention scenario has a fixed key side instead.
  try {
    c.decoded = std::make_shared<const DecodeTrace>(decode(s));
    if (decode_mask(s.attention, s.n_q()) != build_mask(s.attention, s.n_q(), s.n_kv()))
      c.causal_trace = std::make_shared<const Trace>(compute_trace(causal_version(s)));
  } catch (const ScenarioError& e) {
    c.decoded.reset();
    c.decode_error = e.what();
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

bool compute_in_background(const Scenario& s) {
  return std::int64_t{s.attention.heads} * s.n_q() * s.n_kv() > kBackgroundCells;
}

RecomputeWorker::RecomputeWorker() : thread_([this] { run(); }) {}

RecomputeWorker::~RecomputeWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RecomputeWorker::submit(Scenario s, std::uint64_t revision) {
  {
    std::lock_guard lock(mutex_);
    queued_.emplace(std::move(s), revision);
    done_.reset();  // an older result is stale the moment a newer revision exists
  }
  wake_.notify_all();
}

std::optional<Computed> RecomputeWorker::take() {
  std::lock_guard lock(mutex_);
  std::optional<Computed> c = std::move(done_);
  done_.reset();
  return c;
}

bool RecomputeWorker::busy() const {
  std::lock_guard lock(mutex_);
  return running_ || queued_.has_value();
}

void RecomputeWorker::wait() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return !running_ && !queued_; });
}

void RecomputeWorker::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || queued_.has_value(); });
    if (stop_) return;
    auto [scenario, revision] = std::move(*queued_);
    queued_.reset();
    running_ = true;
    lock.unlock();
    std::optional<Computed> result;
    try {
      result = compute_all(scenario, revision);
    } catch (const ScenarioError&) {
      // The caller validated it; nothing to show if it still fails.
    }
    lock.lock();
    running_ = false;
    if (!queued_ && result) done_ = std::move(result);  // a newer revision queued meanwhile makes this one stale
    if (!queued_) idle_.notify_all();
  }
}

}  // namespace attn::ui
