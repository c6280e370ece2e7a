#pragma once
// What the Train view's buttons do, written once for the buttons, the keys and lessons.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ui/logic/app_state.h"

namespace attn::ui {

// What a run of the settings would hold, as its share of the budget beside the other views (budget_share_text):
// "memory: 1.20 MiB of the 3.00 GiB memory budget, beside ... (...)";
// empty when the settings make no model.
std::string train_budget_line(const TrainSettings& s, std::int64_t budget, const HeldBeside& beside);

// A new run of state.train.settings (the text task's text read from state.train.texts_dir first). False, with
// state.train.error saying why, if it cannot start; the run before then stays.
bool restart_training(AppState& state);
// The run of state.train.settings, started the first time the view is shown.
void ensure_training(AppState& state);
// A lesson's moment: the default run (the induction task) trained on to `step` in the background, or scrubbed back
// to it when it is there already; the gradient tab on (layer, head) if given, else the heads.
void show_training_step(AppState& state, int step, std::optional<std::pair<int, int>> gradient);
// The snapshot the view shows: the timeline's, or the newest.
std::shared_ptr<const TrainSnapshot> shown_snapshot(const AppState& state);
// Training pauses and the snapshot's model opens in the Model view on its probe sequence (unsaved: File > Save
// writes it), after the unsaved-changes question when the model open there has changes.
void open_snapshot_in_model_view(AppState& state, const TrainSnapshot& s);

}  // namespace attn::ui
