#pragma once
// The window's unsaved work kept in its own recovery entry (recovery_entries.h): written a couple of seconds after a
// change whatever the recovery prompt is doing, removed once nothing is unsaved or the window closes properly. And
// the entry of a window that is gone, offered at start-up (state.recovery): restored, discarded or left for later,
// each answer touches that entry only.
#include <cstdint>
#include <filesystem>
#include <string>

#include "app/gui/recovery_entries.h"
#include "ui/logic/app_state.h"

namespace attn::gui {

class Autosave {
 public:
  static constexpr double kSeconds = 2.0;
  Autosave() = default;  // off: a capture, a benchmark or a soak keeps nothing
  // This window's entry in `config` and the offer of a window that is gone, put into state.recovery; what could not
  // be done (an unreadable entry moved aside, no entry of its own: autosave off) goes into state.message.
  static Autosave start(const std::filesystem::path& config, ui::AppState& state);
  // In every frame, `now` in seconds: acts on the prompt's answer, then keeps the entry up to date.
  void tick(ui::AppState& state, double now);
  // Closed properly: this window's entry is deleted; an offer not answered is let go, kept for the next start.
  void finish();
  bool on() const { return own_.lock.held(); }
  const std::filesystem::path& own_file() const { return own_.file; }

 private:
  // The revisions of what is unsaved (0 for a document with nothing unsaved): a save or an edit changes them.
  struct Unsaved {
    std::uint64_t document = 0, model = 0, real_model = 0;  // the Real model view's: while a folder is open
    bool operator==(const Unsaved&) const = default;
  };
  static Unsaved unsaved(const ui::AppState& state);
  void settle_offer(ui::AppState& state, double now);
  bool write(ui::AppState& state, double now);
  void remove_own();

  RecoveryEntry own_;
  RecoveryEntry offered_;  // taken from a window that is gone, while its offer waits for an answer
  Unsaved written_;        // what the own entry holds; nothing while it does not exist
  double last_write_ = -1e9;
};

}  // namespace attn::gui
