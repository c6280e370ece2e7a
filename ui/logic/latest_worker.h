#pragma once
// A thread that computes the newest of the jobs it is given, away from the frame: the window keeps drawing the
// last complete result until a newer one is done. A job that has not started is replaced by a newer one (the
// newest wins), and the next job starts only once the last result was taken, and what it replaced freed: the window
// holds at most the result it shows and one more (window_memory.h). Results are freed on this thread too (a 2048-token
// trace is a gigabyte, and freeing it would cost the window a frame). Used for the scenario's trace (Computation) and
// the model's forward pass (ModelDocument).
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace attn::ui {

// Called first on a worker thread: compute on every core, but let the window's thread (and the GL driver's) go first.
void yield_to_window();

template <class Job, class Result>
class LatestWorker {
 public:
  using Compute = std::function<Result(const Job&)>;
  // What a job that threw gives instead (validated by the caller, so it ran out of memory).
  using Fail = std::function<Result(const Job&, const std::exception&)>;

  // Edits streaming in (a drag) would keep this thread computing back to back: it rests `rest` times as long as
  // it worked before the next job, so the window's frames keep their share of a small machine. Longer rests give
  // smoother frames, shorter ones a view that catches up sooner.
  LatestWorker(Compute compute, Fail fail, double rest)
      : compute_(std::move(compute)), fail_(std::move(fail)), rest_(rest), thread_([this] { run(); }) {}
  ~LatestWorker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  LatestWorker(const LatestWorker&) = delete;
  LatestWorker& operator=(const LatestWorker&) = delete;

  // Queues `job`, replacing one that has not started yet.
  void submit(Job job) {
    {
      std::lock_guard lock(mutex_);
      queued_ = std::move(job);
    }
    wake_.notify_all();
  }
  // The newest result finished since the last call, if any. A queued job starts after it is taken.
  std::optional<Result> take() {
    std::optional<Result> r;
    {
      std::lock_guard lock(mutex_);
      r = std::exchange(done_, std::nullopt);
    }
    wake_.notify_all();
    return r;
  }
  void dispose(Result old) {
    {
      std::lock_guard lock(mutex_);
      disposed_.push_back(std::move(old));
    }
    wake_.notify_all();
  }
  void cancel() {  // a queued job is not needed any more (a newer result was computed in the frame)
    std::optional<Job> dropped;
    {
      std::lock_guard lock(mutex_);
      dropped = std::exchange(queued_, std::nullopt);
    }
    idle_.notify_all();
  }
  // Until nothing is queued or being computed, or a result waits to be taken before the queued job can start: true
  // then (take() it and wait again).
  bool wait() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return !running_ && (!queued_ || done_); });
    return queued_.has_value();
  }

 private:
  void run() {
    yield_to_window();
    std::unique_lock lock(mutex_);
    for (;;) {
      // A result not taken yet holds a job back: the window would hold it, the one shown and the job's.
      wake_.wait(lock, [this] { return stop_ || (queued_.has_value() && !done_) || !disposed_.empty(); });
      if (stop_) return;
      if (!disposed_.empty()) {
        std::vector<Result> freed = std::exchange(disposed_, {});
        lock.unlock();
        freed.clear();
        lock.lock();
        continue;
      }
      std::optional<Job> job = std::exchange(queued_, std::nullopt);
      running_ = true;
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      std::optional<Result> result = run_job(*job);
      job.reset();  // it may hold the last reference to a big document: freed without the lock
      const std::chrono::duration<double> worked = std::chrono::steady_clock::now() - start;
      lock.lock();
      running_ = false;
      // Shown even if a newer job is queued: while edits stream in, the view still moves on. One not taken yet
      // is freed without the lock (it may be a gigabyte).
      std::optional<Result> untaken;
      if (result) untaken = std::exchange(done_, std::move(result));
      idle_.notify_all();  // idle, or a result to take before the queued job
      if (untaken) {
        lock.unlock();
        untaken.reset();
        lock.lock();
      }
      if (queued_) wake_.wait_for(lock, worked * rest_, [this] { return stop_; });
    }
  }

  // Never throws (the window would be terminated). When even fail_ cannot say why (out of memory for the message),
  // there is no result: the last one stays shown.
  std::optional<Result> run_job(const Job& job) noexcept {
    try {
      return compute_(job);
    } catch (const std::exception& e) {
      try {
        return fail_(job, e);
      } catch (...) {
      }
    } catch (...) {
    }
    return std::nullopt;
  }

  Compute compute_;
  Fail fail_;
  double rest_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::optional<Job> queued_;
  std::optional<Result> done_;
  std::vector<Result> disposed_;
  bool running_ = false, stop_ = false;
  std::thread thread_;  // last, so that it starts after everything it uses
};

}  // namespace attn::ui
