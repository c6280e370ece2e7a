#pragma once
// What the views read from a LatestWorker: the newest complete result, the results it replaced (kept until the next
// poll(), since a view may read them after an edit it made in the same frame, then freed on the worker), and the
// tickets that order requests and results. A result without a trace failed and leaves the last one shown; one older
// than the one shown (an undo back to a small document overtook it) is dropped. Used by Computation (the scenario's
// trace) and ModelDocument (the model's forward pass).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ui/logic/latest_worker.h"

namespace attn::ui {

template <class Job, class Result>  // Result has `ticket` and `trace`
class LatestResults {
 public:
  using Worker = LatestWorker<Job, Result>;
  // `why`: the member saying why a result without a trace failed.
  LatestResults(typename Worker::Compute compute, typename Worker::Fail fail, double rest, std::string Result::*why)
      : why_(why), worker_(std::move(compute), std::move(fail), rest) {}

  const Result& shown() const { return shown_; }
  // Every request takes a ticket; the shown result answers one of them.
  std::uint64_t ticket() const { return ticket_; }
  std::uint64_t next_ticket() { return ++ticket_; }
  bool computing() const { return shown_.ticket != ticket_ && failed_ticket_ != ticket_; }

  void show(Result r) {  // computed in the frame: a job still queued is older
    worker_.cancel();
    retired_.push_back(std::exchange(shown_, std::move(r)));
  }
  void submit(Job job) { worker_.submit(std::move(job)); }
  void retire(Result old) { retired_.push_back(std::move(old)); }  // something else a view may still read

  // At the start of every frame: frees what was replaced since the last call and shows the worker's newest result.
  // Returns whether a new one is shown; `failure` says why one could not be computed.
  bool poll(std::optional<std::string>& failure) {
    for (Result& old : retired_) worker_.dispose(std::move(old));
    retired_.clear();
    std::optional<Result> done = worker_.take();
    if (!done) return false;
    if (done->ticket <= shown_.ticket) {  // a newer one is shown already: neither it nor its failure matters
      worker_.dispose(std::move(*done));
      return false;
    }
    if (!done->trace) {
      failed_ticket_ = done->ticket;
      failure = (*done).*why_;
      return false;
    }
    // A queued job is newer: it stays. The result replaced goes now (references to it were valid until this poll),
    // so that the worker frees it before it starts that job.
    worker_.dispose(std::exchange(shown_, std::move(*done)));
    return true;
  }
  // Until the worker is idle: a poll() after it takes every result it will give. A result that holds back a queued
  // job is shown meanwhile (its failure is superseded by the job's): returns whether one was.
  bool wait() {
    bool shown = false;
    while (worker_.wait()) {
      std::optional<std::string> superseded;
      shown = poll(superseded) || shown;
    }
    return shown;
  }

 private:
  Result shown_;
  std::vector<Result> retired_;
  std::uint64_t ticket_ = 0;
  std::uint64_t failed_ticket_ = 0;  // the worker could not compute this one
  std::string Result::*why_;
  Worker worker_;  // last: its thread starts after everything it uses
};

}  // namespace attn::ui
