#include "ui/logic/history.h"

#include <utility>

#include "core/trace_bytes.h"

namespace attn::ui {
namespace {

std::int64_t history_bytes(const std::vector<Revision>& revisions) {
  std::int64_t bytes = 0;
  for (const Revision& r : revisions) bytes += scenario_bytes(*r.scenario);
  return bytes;
}

std::optional<Revision> step(std::vector<Revision>& from, std::vector<Revision>& to, Revision current) {
  if (from.empty()) return std::nullopt;
  to.push_back(std::move(current));
  Revision r = std::move(from.back());
  from.pop_back();
  return r;
}

}  // namespace

void History::record(Revision replaced, unsigned gesture) {
  if (gesture == 0 || gesture != gesture_) {
    undo_.push_back(std::move(replaced));
    while (undo_.size() > kLimit || (undo_.size() > 1 && history_bytes(undo_) > kBytes)) undo_.erase(undo_.begin());
    gesture_ = gesture;
  }
  redo_.clear();
}

std::optional<Revision> History::undo(Revision current) {
  std::optional<Revision> r = step(undo_, redo_, std::move(current));
  if (r) gesture_ = 0;
  return r;
}

std::optional<Revision> History::redo(Revision current) {
  std::optional<Revision> r = step(redo_, undo_, std::move(current));
  if (r) gesture_ = 0;
  return r;
}

void History::clear() {
  undo_.clear();
  redo_.clear();
  gesture_ = 0;
}

}  // namespace attn::ui
