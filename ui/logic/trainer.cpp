#include "ui/logic/trainer.h"

#include "ui/logic/chart_axes.h"
#include "ui/logic/model_text.h"

#include <algorithm>
#include <chrono>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/memory_budget.h"
#include "core/model_bytes.h"
#include "core/validate.h"

namespace attn::ui {

// The state the thread and the window share, under `mutex`; the thread alone touches `train`.
struct Trainer::Worker {
  TrainSettings settings;
  TrainState train;
  std::mutex mutex;
  std::condition_variable wake;
  bool quit = false, running = false, busy = false;
  int pending_steps = 0;
  TrainProgress shared;                                       // the window copies from here
  std::vector<std::chrono::steady_clock::time_point> recent;  // when the last steps ended
};

namespace {

using Clock = std::chrono::steady_clock;

std::shared_ptr<const TrainSnapshot> take_snapshot(const TrainState& t, const TrainingRun& run) {
  auto s = std::make_shared<TrainSnapshot>();
  s->step = t.adam.step;
  s->model = std::make_shared<const Model>(t.model);  // shares the weights: each step replaces them
  s->eval = evaluate(t.model, run.task);
  const ProbeBatch probe = probe_batch(run.task, 1);
  s->probe = probe.ids[0];
  s->repeat = probe.repeats[0];
  s->probe_attention = attention_patterns(t.model, s->probe);
  return s;
}

// Steps per second over the steps of the last second.
double rate(std::vector<Clock::time_point>& recent, Clock::time_point now) {
  recent.push_back(now);
  const auto old =
      std::find_if(recent.begin(), recent.end(), [&](auto t) { return now - t <= std::chrono::seconds(1); });
  recent.erase(recent.begin(), old);
  const double seconds = std::chrono::duration<double>(recent.back() - recent.front()).count();
  return recent.size() < 2 || seconds <= 0.0 ? 0.0 : static_cast<double>(recent.size() - 1) / seconds;
}

// Whether the run is over: its steps done, or stopped (a divergence, an error). Under the lock.
bool run_over(const Trainer::Worker& w) {
  return !w.shared.stopped.empty() || static_cast<int>(w.shared.losses.size()) >= w.settings.steps;
}

// One step and, when due, a snapshot; then what it gave, under the lock.
void work_once(Trainer::Worker& w) {
  const StepResult r = training_step(w.train, w.settings.run);
  std::shared_ptr<const TrainSnapshot> snapshot;
  const int step = w.train.adam.step;  // after a divergence, the step before (the losses count the steps taken)
  if (r.diverged.empty() && (step % w.settings.snapshot_every == 0 || step >= w.settings.steps))
    snapshot = take_snapshot(w.train, w.settings.run);
  const std::lock_guard lock(w.mutex);
  w.busy = false;
  if (!r.diverged.empty()) {
    w.shared.stopped = r.diverged;
    w.running = false;
    w.pending_steps = 0;
    return;
  }
  w.shared.losses.push_back(r.loss);
  if (snapshot) w.shared.snapshots.push_back(std::move(snapshot));
  w.shared.steps_per_second = rate(w.recent, Clock::now());
  if (run_over(w)) w.running = false, w.pending_steps = 0;
}

// What an error in a step leaves: the run stopped, saying why, never an exception out of the thread.
void stop_with(Trainer::Worker& w, const std::string& why) {
  const std::lock_guard lock(w.mutex);
  w.busy = false;
  w.shared.stopped = "training stopped at step " + std::to_string(w.train.adam.step + 1) + ": " + why;
  w.running = false;
  w.pending_steps = 0;
}

void work(std::shared_ptr<Trainer::Worker> w) {
#ifdef _OPENMP
  omp_set_num_threads(std::max(1, w->settings.threads));  // this thread's parallel regions only
#endif
  for (;;) {
    {
      std::unique_lock lock(w->mutex);
      w->wake.wait(lock, [&] { return w->quit || w->running || w->pending_steps > 0; });
      if (w->quit) return;
      if (run_over(*w)) {  // a request that came after the end (a click the window had not polled yet)
        w->running = false;
        w->pending_steps = 0;
        w->wake.notify_all();
        continue;
      }
      if (!w->running) --w->pending_steps;
      w->busy = true;
    }
    try {
      work_once(*w);
    } catch (const std::exception& e) {
      stop_with(*w, e.what());
    } catch (...) {
      stop_with(*w, "an unknown error");
    }
    w->wake.notify_all();  // wait_idle
  }
}

}  // namespace

Trainer::~Trainer() { stop_worker(); }

void Trainer::stop_worker() {
  if (!worker_) return;
  {
    const std::lock_guard lock(worker_->mutex);
    worker_->quit = true;
  }
  worker_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
  worker_.reset();
}

Model trained_model(const TrainSettings& s) { return s.start ? *s.start : task_model(s.run.task, s.shape, s.run.seed); }

std::int64_t predicted_train_view_bytes(const TrainSettings& s, const Model& model) {
  const std::int64_t n = s.run.task.seq_len, every = std::max({1, s.snapshot_every, s.steps / 200});
  std::int64_t heads = 0;
  for (const ModelLayer& l : model.layers) heads += l.attention.heads;
  const std::int64_t snapshot = (parameter_count(model) + heads * n * n) * std::int64_t(sizeof(double));
  return predicted_training_bytes(model, s.run.batch, n) + (s.steps / every + 2) * snapshot;
}

std::optional<std::string> train_budget_refusal(const TrainSettings& s, const Model& model, std::int64_t budget,
                                                const HeldBeside& beside) {
  return budget_refusal(predicted_train_view_bytes(s, model), budget,
                        training_what(model, s.run.batch, s.run.task.seq_len),
                        "a smaller batch, shorter sequences, fewer steps or layers", beside);
}

std::optional<std::string> Trainer::reset(const TrainSettings& s, std::int64_t budget, const HeldBeside& beside) {
  // Everything the new run needs, made before the old one is stopped: a refusal leaves the old run as it was.
  auto next = std::make_shared<Worker>();
  std::int64_t held = 0;
  try {
    check_task(s.run.task);
    if (s.start) check_task_model(*s.start, s.run.task);
    next->settings = s;
    // Bounded memory: at most about 200 snapshots, each holding the run's weights at its step.
    next->settings.snapshot_every = std::max({1, s.snapshot_every, s.steps / 200});
    Model model = trained_model(s);
    if (std::optional<std::string> refused = train_budget_refusal(s, model, budget, beside)) return refused;
    held = predicted_train_view_bytes(s, model);
    next->train = start_training(resolve_model(model));
    next->shared.snapshots.push_back(take_snapshot(next->train, s.run));
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  stop_worker();
  settings_ = next->settings;
  held_bytes_ = held;
  worker_ = std::move(next);
  progress_ = worker_->shared;
  thread_ = std::thread(work, worker_);
  return std::nullopt;
}

void Trainer::start() {
  if (!worker_ || at_end()) return;
  {
    const std::lock_guard lock(worker_->mutex);
    worker_->running = true;
  }
  progress_.running = true;
  worker_->wake.notify_all();
}

void Trainer::pause() {
  if (!worker_) return;
  const std::lock_guard lock(worker_->mutex);
  worker_->running = false;
  worker_->pending_steps = 0;
  progress_.running = false;
}

void Trainer::step() {
  if (!worker_ || at_end()) return;
  {
    const std::lock_guard lock(worker_->mutex);
    worker_->running = false;
    ++worker_->pending_steps;
  }
  progress_.running = false;
  worker_->wake.notify_all();
}

void Trainer::poll() {
  if (!worker_) return;
  const std::lock_guard lock(worker_->mutex);
  const TrainProgress& s = worker_->shared;
  progress_.losses.insert(progress_.losses.end(),
                          s.losses.begin() + static_cast<std::ptrdiff_t>(progress_.losses.size()), s.losses.end());
  progress_.snapshots.insert(progress_.snapshots.end(),
                             s.snapshots.begin() + static_cast<std::ptrdiff_t>(progress_.snapshots.size()),
                             s.snapshots.end());
  progress_.running = worker_->running;
  progress_.stopped = s.stopped;
  progress_.steps_per_second = worker_->running ? s.steps_per_second : 0.0;
}

void Trainer::wait_idle() {
  if (!worker_) return;
  std::unique_lock lock(worker_->mutex);
  worker_->wake.wait(lock, [&] { return !worker_->running && worker_->pending_steps == 0 && !worker_->busy; });
}

void Trainer::train_to(int step) {
  if (!worker_) return;
  pause();
  wait_idle();
  poll();
  if (at_end()) return;
  const int missing = std::min(step, settings_.steps) - step_count();
  if (missing <= 0) return;
  {
    const std::lock_guard lock(worker_->mutex);
    worker_->pending_steps = missing;
  }
  worker_->wake.notify_all();
}

void Trainer::run_until(int step) {
  train_to(step);
  wait_idle();
  poll();
}

std::shared_ptr<const TrainSnapshot> snapshot_at(const TrainProgress& p, int step) {
  std::shared_ptr<const TrainSnapshot> found;
  for (const auto& s : p.snapshots)
    if (s->step <= step) found = s;
  return found;
}

std::string trained_model_description(const TrainSettings& s) {
  if (!s.start) return shape_summary(s.shape);
  return "model \"" + s.start->name + "\": " + model_summary(*s.start, parameter_count(*s.start));
}

namespace {

// The shapes make the same model: a variant's own settings count only for that variant.
bool same_task_shape(const TaskModelShape& p, const TaskModelShape& q) {
  if (p.variant != q.variant) return false;
  if (p.variant == Variant::Gqa && effective_kv_heads(p) != effective_kv_heads(q)) return false;
  if (p.variant == Variant::Mla && effective_latent_dim(p) != effective_latent_dim(q)) return false;
  return p.layers == q.layers && p.heads == q.heads && p.d_model == q.d_model && p.positions == q.positions &&
         p.norm == q.norm && p.ffn == q.ffn;
}

}  // namespace

bool same_run(const TrainSettings& a, const TrainSettings& b) {
  const Task &x = a.run.task, &y = b.run.task;
  return a.start == b.start && (a.start || same_task_shape(a.shape, b.shape)) && x.kind == y.kind &&
         (x.kind == TaskKind::Text || x.vocab == y.vocab) && x.seq_len == y.seq_len &&
         a.run.adamw.lr == b.run.adamw.lr && a.run.batch == b.run.batch &&
         a.run.schedule.warmup == b.run.schedule.warmup && a.steps == b.steps && a.run.seed == b.run.seed;
}

}  // namespace attn::ui
