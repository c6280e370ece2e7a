#pragma once
// The undo history of a document (a scenario, a model): the revisions an edit, an undo or a redo replaced,
// newest last, bounded by count and by bytes (a long sequence of 2048-token documents would otherwise fill
// the memory). Edits made while one widget stays active (a drag, typing in a field) are one step.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/scenario.h"

namespace attn::ui {

// One state of a document. Shared with the views and the worker, never changed in place.
template <class Doc>
struct BasicRevision {
  std::shared_ptr<const Doc> document;
  std::uint64_t revision = 0;
};

template <class Doc>
class BasicHistory {
 public:
  using Revision = BasicRevision<Doc>;
  static constexpr std::size_t kLimit = 500;
  static constexpr std::int64_t kBytes = std::int64_t(256) << 20;  // the oldest steps go first

  // `bytes_of` measures one document; `bytes` bounds them all (a test gives a smaller bound).
  explicit BasicHistory(std::function<std::int64_t(const Doc&)> bytes_of, std::int64_t bytes = kBytes)
      : bytes_of_(std::move(bytes_of)), bytes_(bytes) {}

  // `replaced` is the document an edit replaces. `gesture` is the widget active as the edit is made (0:
  // none): while it stays the same, the edits are one step and only the first is recorded.
  void record(Revision replaced, unsigned gesture) {
    if (gesture == 0 || gesture != gesture_) {
      undo_.push_back(std::move(replaced));
      while (undo_.size() > kLimit || (undo_.size() > 1 && held_bytes() > bytes_)) undo_.erase(undo_.begin());
      gesture_ = gesture;
    }
    redo_.clear();
  }
  // The revision to go back (or forward) to, with `current` kept for the way back; nullopt if none.
  std::optional<Revision> undo(Revision current) { return step(undo_, redo_, std::move(current)); }
  std::optional<Revision> redo(Revision current) { return step(redo_, undo_, std::move(current)); }
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  void end_gesture() { gesture_ = 0; }  // the next edit starts a step of its own
  // A new bound (the window's share of a memory budget), held from the next record on.
  void set_bytes(std::int64_t bytes) { bytes_ = bytes; }
  std::int64_t bytes() const { return bytes_; }
  void clear() {  // a new document: nothing to undo
    undo_.clear();
    redo_.clear();
    gesture_ = 0;
  }
  std::uint64_t next_revision() { return ++next_revision_; }
  // Revisions never repeat: a history brought back (after a visit elsewhere) counts on from `r`.
  void count_from(std::uint64_t r) { next_revision_ = std::max(next_revision_, r); }

 private:
  std::int64_t held_bytes() const {
    std::int64_t sum = 0;
    for (const Revision& r : undo_) sum += bytes_of_(*r.document);
    return sum;
  }
  std::optional<Revision> step(std::vector<Revision>& from, std::vector<Revision>& to, Revision current) {
    if (from.empty()) return std::nullopt;
    to.push_back(std::move(current));
    Revision r = std::move(from.back());
    from.pop_back();
    gesture_ = 0;
    return r;
  }
  std::function<std::int64_t(const Doc&)> bytes_of_;
  std::int64_t bytes_;
  std::vector<Revision> undo_, redo_;
  std::uint64_t next_revision_ = 0;
  unsigned gesture_ = 0;  // the widget whose edits the last undo entry covers; 0 = closed
};

using Revision = BasicRevision<Scenario>;
using History = BasicHistory<Scenario>;

}  // namespace attn::ui
