#pragma once
// A training run on a classroom task (tasks.h): the model a task starts from, the step that draws its batch and
// schedules its learning rate, and the evaluation that says what was learned. What the train command and the
// Train view both drive.
#include <cstdint>
#include <vector>

#include "core/adamw.h"
#include "core/head_scores.h"
#include "core/tasks.h"

namespace attn {

// The shape of a model made for a task (its vocabulary and max_positions come from the task).
struct TaskModelShape {
  int layers = 2, heads = 4, d_model = 64;
  Variant variant = Variant::Mha;
  int kv_heads = 0;    // gqa: the KV heads (0: half the heads, at least 1)
  int latent_dim = 0;  // mla: d_c (0: d_model / 2, at least 1); with rope its decoupled part is half a head
                       // rounded down to even, at least 2
  Positions positions = Positions::Learned;
  Norm norm = Norm::Pre;
  FfnKind ffn = FfnKind::None;
  int d_ff = 0;  // 0: 4 * d_model when there is an FFN
};

// The shape's KV heads (gqa) and latent width (mla), defaults filled in.
int effective_kv_heads(const TaskModelShape& s);
int effective_latent_dim(const TaskModelShape& s);

// "2 layers of 4 heads, d_model 64, learned positions, norm pre, attention only"
std::string shape_summary(const TaskModelShape& shape);

// An untrained model of that shape for the task: every layer of the shape's variant with a causal mask and W_O,
// head_dim d_model / heads, every weight drawn from `seed`. Throws InputError (fields as in a model file) for a shape
// no model can have.
Model task_model(const Task& task, const TaskModelShape& shape, std::uint64_t seed);
// Whether a model (a file, say) can train on the task: the task's vocabulary exactly, room for its sequences, and
// only what training supports (check_trainable). Throws InputError naming the first problem.
void check_task_model(const Model& m, const Task& task);

struct TrainingRun {
  Task task;
  int batch = 32;          // sequences per step
  std::uint64_t seed = 1;  // draws the batches
  AdamWConfig adamw;       // adamw.lr: the peak learning rate
  LrSchedule schedule;
};

// Step t.adam.step + 1 on `batch` at the run's scheduled learning rate (the run's task is not read).
StepResult scheduled_step(TrainState& t, const std::vector<Sequence>& batch, const TrainingRun& run);
// Step t.adam.step + 1 on training batch number t.adam.step of the run's task, at the scheduled learning rate.
StepResult training_step(TrainState& t, const TrainingRun& run);

inline constexpr int kEvalSequences = 64, kProbeSequences = 16;
// The evaluation reads at most as many tokens as 64 sequences of 32 (the probe as 16 of 32): a run on long
// sequences is evaluated on fewer of them (at least one), so its evaluation is not 80 forward passes of 4,096
// tokens after a single step.
inline constexpr int kEvalTokens = kEvalSequences * 32, kProbeTokens = kProbeSequences * 32;
int eval_sequences(int seq_len);   // clamp(kEvalTokens / seq_len, 1, kEvalSequences)
int probe_sequences(int seq_len);  // clamp(kProbeTokens / seq_len, 1, kProbeSequences)

// What the model does on the task's evaluation batch and each head on the probe batch.
struct Evaluation {
  double loss = 0.0;      // mean cross-entropy over the evaluation batch's targets
  double accuracy = 0.0;  // the share of those targets that are the most probable token
  std::vector<HeadScores> heads;
};
Evaluation evaluate(const Model& resolved, const Task& task);

}  // namespace attn
