#include "ui/logic/train_actions.h"

#include "core/io/json_fields.h"
#include "core/validate.h"
#include "ui/logic/window_memory.h"

namespace attn::ui {
bool restart_training(AppState& state) {
  TrainSettings s = state.train.settings;
  if (s.run.task.kind == TaskKind::Text && s.run.task.text.empty()) {
    try {
      s.run.task.text =
          read_text_file(state.train.texts_dir / "sonnets.txt", 16u << 20, "a text to train on", state.memory_budget);
    } catch (const InputError& e) {
      state.train.error = e.what();
      return false;
    }
  }
  if (const std::optional<std::string> why =
          state.trainer.reset(s, state.memory_budget, state.held_beside(WindowPart::Training))) {
    state.train.error = *why;
    return false;
  }
  state.train.error.clear();
  state.train.shown_step = -1;
  return true;
}

std::string train_budget_line(const TrainSettings& s, std::int64_t budget, const HeldBeside& beside) {
  try {
    return "memory: " + budget_share_text(predicted_train_view_bytes(s, trained_model(s)), budget, beside) +
           " (a step's activations for every sequence, AdamW's state, the snapshots)";
  } catch (const InputError&) {
    return {};  // the settings make no model: Restart says why
  }
}

void ensure_training(AppState& state) {
  if (!state.trainer.ready() && state.train.error.empty()) restart_training(state);
}

void show_training_step(AppState& state, int step, std::optional<std::pair<int, int>> gradient) {
  const TrainSettings defaults;
  const bool default_run = state.trainer.ready() && same_run(state.trainer.settings(), defaults);
  if (!default_run) {
    state.train.settings = defaults;
    restart_training(state);
  }
  state.trainer.pause();
  if (state.trainer.step_count() >= step) state.train.shown_step = step;
  else {
    state.train.shown_step = -1;
    state.trainer.train_to(step);
  }
  state.train.gradient_tab = gradient.has_value();
  state.train.select_tab = true;
  if (gradient) {
    state.train.layer = gradient->first;
    state.train.head = gradient->second;
    state.train.row = -1;
  }
}

std::shared_ptr<const TrainSnapshot> shown_snapshot(const AppState& state) {
  const TrainProgress& p = state.trainer.progress();
  if (p.snapshots.empty()) return nullptr;
  return state.train.shown_step < 0 ? p.snapshots.back() : snapshot_at(p, state.train.shown_step);
}

void open_snapshot_in_model_view(AppState& state, const TrainSnapshot& s) {
  state.trainer.pause();
  Model m = *s.model;
  m.name = m.name + " (step " + std::to_string(s.step) + ")";
  std::vector<std::string> tokens;
  for (int id : s.probe) tokens.push_back(m.vocab[static_cast<std::size_t>(id)]);
  state.pending.ask_to_replace(
      [&state, m = std::move(m), tokens = std::move(tokens)]() mutable {
        if (const std::optional<std::string> why =
                state.model_doc.open(ModelInput{std::move(m), std::move(tokens)}, {}))
          state.message = "The snapshot did not open: " + *why;
        else {
          state.model_doc.mark_unsaved();
          state.view = View::Model;
        }
      },
      true);
}

}  // namespace attn::ui
