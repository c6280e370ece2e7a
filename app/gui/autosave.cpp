#include "app/gui/autosave.h"

#include <optional>

#include "app/gui/user_files.h"
#include "ui/logic/document_files.h"

namespace attn::gui {

Autosave Autosave::start(const std::filesystem::path& config, ui::AppState& state) {
  Autosave a;
  try {
    a.own_ = make_own_entry(config);
  } catch (const std::exception& e) {
    state.add_message(std::string("Autosave is off: ") + e.what());
  }
  OrphanedWork found = take_orphaned_work(config, state.memory_budget);
  state.recovery = std::move(found.offer);
  a.offered_ = std::move(found.entry);
  if (!found.message.empty()) state.add_message(found.message);  // after the settings' problem, if any
  return a;
}

Autosave::Unsaved Autosave::unsaved(const ui::AppState& state) {
  const ui::Document& d = state.recoverable_document();
  const ui::ModelDocument& m = state.model_doc;
  const ui::RealModelDocument& real = state.real_model;
  return {d.dirty() ? d.revision : 0, m.loaded() && m.dirty() ? m.revision() : 0,
          real.folder().empty() ? 0 : real.revision()};
}

bool Autosave::write(ui::AppState& state, double now) {
  last_write_ = now;  // after a failure, tried again after kSeconds, not in every frame
  try {
    write_recovery(own_.file, *ui::unsaved_work(state));
    written_ = unsaved(state);
    return true;
  } catch (const std::exception& e) {
    state.message = std::string("Autosave failed: ") + e.what();
    return false;
  }
}

void Autosave::settle_offer(ui::AppState& state, double now) {
  using ui::RecoveryAnswer;
  if (!state.recovery || state.recovery_answer == RecoveryAnswer::None) return;
  switch (state.recovery_answer) {
    case RecoveryAnswer::Restored:
      // The restored work is in this window's own entry before the one it came from goes.
      if (on() && unsaved(state) != Unsaved{} && write(state, now)) offered_.remove();
      else offered_.lock.release();  // kept: offered again at the next start
      break;
    case RecoveryAnswer::Discarded: offered_.remove(); break;
    default: offered_.lock.release(); break;  // Later: kept for the next start
  }
  offered_ = {};
  state.recovery.reset();
}

void Autosave::tick(ui::AppState& state, double now) {
  settle_offer(state, now);
  if (!on()) return;
  const Unsaved now_unsaved = unsaved(state);
  if (now_unsaved == Unsaved{}) {
    if (written_ != Unsaved{}) remove_own();
    return;
  }
  if (now_unsaved == written_ || now - last_write_ < kSeconds) return;
  write(state, now);
}

void Autosave::remove_own() {
  std::error_code ec;
  std::filesystem::remove(own_.file, ec);
  written_ = {};
}

void Autosave::finish() {
  if (on()) own_.remove();  // closed properly: nothing to recover
  offered_.lock.release();
}

}  // namespace attn::gui
