// LatestWorker and LatestResults (ui/logic/latest_worker.h, latest_results.h) on toy jobs: the newest job wins, a
// result or a failure older than the one shown is dropped, and nothing a job throws reaches the window.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "ui/logic/latest_results.h"

using namespace attn::ui;

namespace {

struct Toy {
  std::shared_ptr<const int> trace;  // the job's number; none when it failed
  std::uint64_t ticket = 0;
  std::string error;
};

struct ToyJob {
  int value;
  std::uint64_t ticket;
};

// Jobs wait at the gate until it opens, so a test can queue several while one runs.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  std::vector<int> ran;
  void pass(int value) {
    std::unique_lock lock(m);
    ran.push_back(value);
    cv.wait(lock, [this] { return open; });
  }
  void release() {
    {
      std::lock_guard lock(m);
      open = true;
    }
    cv.notify_all();
  }
};

LatestResults<ToyJob, Toy> toy_results(Gate& gate) {
  return {[&gate](const ToyJob& j) {
            gate.pass(j.value);
            if (j.value < 0) throw std::runtime_error("negative: " + std::to_string(j.value));
            if (j.value == 13) throw 13;  // not a std::exception
            return Toy{std::make_shared<const int>(j.value), j.ticket, {}};
          },
          [](const ToyJob& j, const std::exception& e) {
            return Toy{nullptr, j.ticket, e.what()};
          },
          0.0, &Toy::error};
}

// Waits until the worker has started a job (it is at the gate).
void wait_started(Gate& gate, std::size_t jobs) {
  for (;;) {
    {
      std::lock_guard lock(gate.m);
      if (gate.ran.size() >= jobs) return;
    }
    std::this_thread::yield();
  }
}

}  // namespace

TEST_CASE("the newest job wins: one queued behind a running one is replaced by a newer one") {
  Gate gate;
  LatestResults<ToyJob, Toy> r = toy_results(gate);
  r.submit({1, r.next_ticket()});
  wait_started(gate, 1);
  r.submit({2, r.next_ticket()});
  r.submit({3, r.next_ticket()});  // replaces 2, which never runs
  CHECK(r.computing());
  gate.release();
  r.wait();
  std::optional<std::string> failure;
  CHECK(r.poll(failure));
  CHECK_FALSE(failure.has_value());
  CHECK(*r.shown().trace == 3);
  CHECK(gate.ran == std::vector<int>{1, 3});
  CHECK_FALSE(r.computing());
}

TEST_CASE("a failure is reported with why and leaves the last result, and a stale one is dropped silently") {
  Gate gate;
  gate.release();
  LatestResults<ToyJob, Toy> r = toy_results(gate);
  r.show(Toy{std::make_shared<const int>(7), r.next_ticket(), {}});
  r.submit({-1, r.next_ticket()});
  r.wait();
  std::optional<std::string> failure;
  CHECK_FALSE(r.poll(failure));
  CHECK(failure == std::optional<std::string>("negative: -1"));
  CHECK(*r.shown().trace == 7);
  CHECK_FALSE(r.computing());  // failed, not waiting

  // A failure older than what is shown (an undo computed in the frame overtook it) says nothing.
  Gate slow;
  LatestResults<ToyJob, Toy> s = toy_results(slow);
  s.submit({-2, s.next_ticket()});
  wait_started(slow, 1);
  s.show(Toy{std::make_shared<const int>(8), s.next_ticket(), {}});
  slow.release();
  s.wait();
  failure.reset();
  CHECK_FALSE(s.poll(failure));
  CHECK_FALSE(failure.has_value());
  CHECK(*s.shown().trace == 8);
}

TEST_CASE("a result computed in the frame cancels the queued job, and a job that throws anything leaves no result") {
  Gate gate;
  LatestResults<ToyJob, Toy> r = toy_results(gate);
  r.submit({1, r.next_ticket()});
  wait_started(gate, 1);
  r.submit({2, r.next_ticket()});
  r.show(Toy{std::make_shared<const int>(5), r.next_ticket(), {}});  // newer than 2: 2 is not computed
  gate.release();
  r.wait();
  std::optional<std::string> failure;
  CHECK_FALSE(r.poll(failure));  // 1 is older than 5
  CHECK(*r.shown().trace == 5);
  CHECK(gate.ran == std::vector<int>{1});

  r.submit({13, r.next_ticket()});  // throws an int: the worker survives, nothing is shown
  r.wait();
  CHECK_FALSE(r.poll(failure));
  CHECK_FALSE(failure.has_value());
  CHECK(*r.shown().trace == 5);
  r.submit({21, r.next_ticket()});
  r.wait();
  CHECK(r.poll(failure));
  CHECK(*r.shown().trace == 21);
}

TEST_CASE("a queued job starts only once the last result was taken: never a third result held") {
  Gate gate;
  LatestWorker<ToyJob, Toy> w(
      [&gate](const ToyJob& j) {
        gate.pass(j.value);
        return Toy{std::make_shared<const int>(j.value), j.ticket, {}};
      },
      [](const ToyJob& j, const std::exception& e) {
        return Toy{nullptr, j.ticket, e.what()};
      },
      0.0);
  w.submit({1, 1});
  wait_started(gate, 1);
  w.submit({2, 2});
  gate.release();
  CHECK(w.wait());  // 1 is done and not taken: 2 waits for it
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard lock(gate.m);
    CHECK(gate.ran == std::vector<int>{1});
  }
  const std::optional<Toy> first = w.take();
  REQUIRE(first.has_value());
  CHECK(*first->trace == 1);
  CHECK_FALSE(w.wait());  // 2 ran once 1 was taken
  const std::optional<Toy> second = w.take();
  REQUIRE(second.has_value());
  CHECK(*second->trace == 2);
}
