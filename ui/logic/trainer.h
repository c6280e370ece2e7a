#pragma once
// Training in the window (the Train view): a training run on its own thread, so the window keeps its frames while a
// model learns, and what the view reads of it: every step's loss and a snapshot every few steps (the weights, the
// evaluation and head scores, each head's attention on a probe sequence). The run is core/training.h's: the same
// settings give the same numbers as `attention-lab train`, bit for bit.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/memory_budget.h"
#include "core/training.h"

namespace attn::ui {

struct TrainSettings {
  TrainingRun run;  // the task (its text too), batch, seed, AdamW and the schedule
  TaskModelShape shape;
  std::shared_ptr<const Model> start;  // a model to train on (the Model view's: a file, a snapshot) instead of a new
                                       // one of `shape`
  int steps = 3000;                    // where the run pauses by itself
  int snapshot_every = 25;             // steps between snapshots
  int threads = 1;                     // for the batch's sequences; the window keeps a core
};

// What the run trains: "2 layers of 4 heads, d_model 64, ..." for a new model, "model \"induction\": 2 layers ·
// d_model 64 · ..." for one the Model view gave it.
std::string trained_model_description(const TrainSettings& s);

// Whether two settings make the same run: task, shape, optimiser, steps and seed (not the snapshots or threads).
bool same_run(const TrainSettings& a, const TrainSettings& b);

// The run at one step: what the view draws when it is chosen on the timeline.
struct TrainSnapshot {
  int step = 0;
  std::shared_ptr<const Model> model;  // every weight
  Evaluation eval;
  std::vector<int> probe;                            // the probe sequence the patterns are on
  Repeat repeat;                                     // where it repeats itself
  std::vector<std::vector<Matrix>> probe_attention;  // [layer][head] (N, N)
};

// What the view reads, copied from the worker at each poll().
struct TrainProgress {
  std::vector<double> losses;                                   // step s's loss (before its update) at [s - 1]
  std::vector<std::shared_ptr<const TrainSnapshot>> snapshots;  // step 0 first
  bool running = false;
  std::string stopped;            // why the run stopped by itself (it diverged, a step failed), empty otherwise
  double steps_per_second = 0.0;  // over the last second of running
};

class Trainer {
 public:
  Trainer() = default;
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // A new run of the settings, from a model made for the task (task_model) or from `start` (a model that can train
  // on it); the run before is stopped and forgotten. Returns why not (the old run stays), else nullopt. The step-0
  // snapshot is taken before this returns. A run that would hold more than `budget` bytes is refused
  // (train_budget_refusal).
  std::optional<std::string> reset(const TrainSettings& s, std::int64_t budget, const HeldBeside& beside = {});
  bool ready() const { return worker_ != nullptr; }
  // What the run holds at its peak (predicted_train_view_bytes); nothing before the first run.
  std::int64_t held_bytes() const { return held_bytes_; }
  const TrainSettings& settings() const { return settings_; }

  void start();  // runs until paused, settings.steps, a divergence or a failed step
  void pause();
  void step();  // one step, then pauses
  void toggle() { progress_.running ? pause() : start(); }

  // At the start of every frame: takes what the worker did since.
  void poll();
  const TrainProgress& progress() const { return progress_; }
  int step_count() const { return static_cast<int>(progress_.losses.size()); }
  bool at_end() const { return step_count() >= settings_.steps || !progress_.stopped.empty(); }
  // Until the worker has nothing left to do (tests).
  void wait_idle();
  // Trains on to step `step` (or the run's end) in the background, then pauses.
  void train_to(int step);
  // Trains up to step `step` (or the run's end), blocking, then polls: captures and lessons start there.
  void run_until(int step);

  struct Worker;  // the thread's side (trainer.cpp)

 private:
  void stop_worker();
  TrainSettings settings_;
  std::int64_t held_bytes_ = 0;
  std::shared_ptr<Worker> worker_;
  std::thread thread_;
  TrainProgress progress_;
};

// What a run of these settings holds at its peak: the training step (predicted_training_bytes of `model`, the one it
// trains) and every snapshot it keeps (the weights and each head's attention on the probe sequence).
std::int64_t predicted_train_view_bytes(const TrainSettings& s, const Model& model);
// The model a run of the settings trains, unresolved: s.start, or a new one of s.shape for the task. Throws InputError.
Model trained_model(const TrainSettings& s);
// "training 2 layers on batches of 32 sequences of 32 tokens needs 1,610,612,736 bytes (1.50 GiB) but the memory
// budget is ..." (budget_refusal, with the program's share), or nullopt when the run fits.
std::optional<std::string> train_budget_refusal(const TrainSettings& s, const Model& model, std::int64_t budget,
                                                const HeldBeside& beside = {});

// The snapshot at `step` or the last before it (the timeline's); nullptr when there is none.
std::shared_ptr<const TrainSnapshot> snapshot_at(const TrainProgress& p, int step);

}  // namespace attn::ui
