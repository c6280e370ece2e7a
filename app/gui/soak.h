#pragma once
// The soak test: seeded random actions of every kind the app offers (edits of every input, token add and
// remove, variant, mask and kernel switches, undo and redo, step, head and view changes), with checks that
// what the views show is what a fresh computation of the document gives. `attention-lab --soak N --seed S`
// runs it in the real window, a frame after every action; the unit tests run it without one.
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "ui/logic/app_state.h"

namespace attn::gui {

struct SoakCounts {
  int actions = 0, applied = 0, refused = 0, undos = 0, redos = 0, checks = 0, background = 0;
};

// "" when every intermediate of `shown` equals `fresh` bit for bit, else the first difference:
// "head 1 weights[0][2]: shown 0.25, fresh 0.3".
std::string compare_traces(const Trace& shown, const Trace& fresh);

class Soak {
 public:
  explicit Soak(std::uint64_t seed) : rng_(seed) {}
  // Performs one random action. Returns "" or, if the action itself broke a rule (a refused edit that
  // changed the document, an undo and redo that do not come back), what went wrong.
  std::string act(ui::AppState& state);
  // Waits for the newest trace, then compares every shown intermediate with a fresh computation of the
  // document, bit for bit, and the decoding with the causal trace. Returns "" or the first difference.
  std::string check(ui::AppState& state);
  const SoakCounts& counts() const { return counts_; }
  // Whether the next action should be a key press instead (the window sends it through ImGui); which key.
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }

 private:
  bool edit(ui::AppState& state, const std::function<void(Scenario&)>& change, std::string& problem);
  // The actions that take more than a line; each writes to `problem` what it finds wrong.
  void edit_embedding(ui::AppState& state, double value, std::string& problem);
  void edit_weight(ui::AppState& state, double value, std::string& problem);
  void edit_mask(ui::AppState& state, std::string& problem);
  void edit_variant(ui::AppState& state, std::string& problem);
  void rename_token(ui::AppState& state, std::string& problem);
  void toggle_attention_extra(ui::AppState& state, std::string& problem);
  void undo_and_redo(ui::AppState& state, std::string& problem);
  std::mt19937_64 rng_;
  SoakCounts counts_;
};

}  // namespace attn::gui
