#pragma once
// The undo history of a document: the revisions an edit, an undo or a redo replaced, newest last, bounded
// by count and by bytes (a long sequence of 2048-token documents would otherwise fill the memory). Edits
// made while one widget stays active (a drag, typing in a field) are one step.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/scenario.h"

namespace attn::ui {

// One state of the document. Shared with the views and the worker, never changed in place.
struct Revision {
  std::shared_ptr<const Scenario> scenario;
  std::uint64_t revision = 0;
};

class History {
 public:
  static constexpr std::size_t kLimit = 500;
  static constexpr std::int64_t kBytes = std::int64_t(256) << 20;  // the oldest steps go first

  // `replaced` is the document an edit replaces. `gesture` is the widget active as the edit is made (0:
  // none): while it stays the same, the edits are one step and only the first is recorded.
  void record(Revision replaced, unsigned gesture);
  // The revision to go back (or forward) to, with `current` kept for the way back; nullopt if none.
  std::optional<Revision> undo(Revision current);
  std::optional<Revision> redo(Revision current);
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  void end_gesture() { gesture_ = 0; }  // the next edit starts a step of its own
  void clear();                         // a new document: nothing to undo
  std::uint64_t next_revision() { return ++next_revision_; }

 private:
  std::vector<Revision> undo_, redo_;
  std::uint64_t next_revision_ = 0;
  unsigned gesture_ = 0;  // the widget whose edits the last undo entry covers; 0 = closed
};

}  // namespace attn::ui
