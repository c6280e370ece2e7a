#pragma once
// What waits for the user's answer about unsaved changes before it happens: quitting (Ctrl+Q, the close button), and
// replacing the document, or the Model view's model, with another (open a file, a lesson page, a restored window, a
// training snapshot). The unsaved-changes prompt reads it and answers with go_on or stay; nothing else touches it.
#include <functional>
#include <utility>

namespace attn::ui {

class PendingActions {
 public:
  void ask_to_quit() { quit_requested_ = true; }
  // `replace` runs once the answer allows it (at once when nothing is unsaved); `model`: it may replace the Model
  // view's model too, so the model's unsaved changes are asked about as well. A newer request takes its place.
  void ask_to_replace(std::function<void()> replace, bool model) {
    replace_ = std::move(replace);
    replaces_model_ = model;
  }

  bool quitting() const { return quit_requested_ && !quit_confirmed_; }
  bool quit_confirmed() const { return quit_confirmed_; }  // the window closes
  bool replacing() const { return static_cast<bool>(replace_); }
  bool waiting() const { return quitting() || replacing(); }
  bool puts_model_at_stake() const { return quit_requested_ || replaces_model_; }

  // The answer: what waited happens (the replacement, the quit).
  void go_on() {
    replaces_model_ = false;
    if (replace_) std::exchange(replace_, nullptr)();
    if (quit_requested_) quit_confirmed_ = true;
  }
  // The answer: nothing happens (Cancel, Escape, or a Save that must ask for a file name first).
  void stay() {
    replaces_model_ = quit_requested_ = false;
    replace_ = nullptr;
  }

 private:
  bool quit_requested_ = false, quit_confirmed_ = false;
  std::function<void()> replace_;
  bool replaces_model_ = false;
};

}  // namespace attn::ui
