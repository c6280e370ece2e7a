#include "core/training.h"

#include <algorithm>
#include <cmath>

#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

// Mean loss and accuracy over every target of the batch, each position counted once.
void score_batch(const Model& m, const std::vector<Sequence>& batch, Evaluation& e) {
  int counted = 0, right = 0;
  double loss = 0.0;
  for (const Sequence& s : batch) {
    const Matrix p = next_token_probabilities(m, s.ids);  // (N, V)
    for (std::size_t i = 0; i < s.ids.size(); ++i) {
      const int t = s.targets[i];
      if (t == kNoTarget) continue;
      Eigen::Index best = 0;
      p.row(static_cast<Eigen::Index>(i)).maxCoeff(&best);
      loss -= std::log(p(static_cast<Eigen::Index>(i), t));
      right += best == t ? 1 : 0;
      ++counted;
    }
  }
  e.loss = loss / counted;
  e.accuracy = static_cast<double>(right) / counted;
}

}  // namespace

int effective_kv_heads(const TaskModelShape& s) { return s.kv_heads > 0 ? s.kv_heads : std::max(1, s.heads / 2); }
int effective_latent_dim(const TaskModelShape& s) {
  return s.latent_dim > 0 ? s.latent_dim : std::max(1, s.d_model / 2);
}

std::string shape_summary(const TaskModelShape& shape) {
  std::string variant;
  if (shape.variant == Variant::Gqa) variant = " (gqa, " + plural(effective_kv_heads(shape), "KV head") + ")";
  if (shape.variant == Variant::Mqa) variant = " (mqa)";
  if (shape.variant == Variant::Mla) variant = " (mla, latent " + std::to_string(effective_latent_dim(shape)) + ")";
  return plural(shape.layers, "layer") + " of " + plural(shape.heads, "head") + variant + ", d_model " +
         std::to_string(shape.d_model) + ", " + std::string(to_string(shape.positions)) + " positions, norm " +
         std::string(to_string(shape.norm)) + ", " +
         (shape.ffn == FfnKind::None ? std::string("attention only")
                                     : std::string(to_string(shape.ffn)) + " feed-forward");
}

Model task_model(const Task& task, const TaskModelShape& shape, std::uint64_t seed) {
  check_task(task);
  check_range(shape.heads, 1, limits::kMaxHeads, "heads");
  if (shape.d_model % shape.heads != 0)
    throw InputError("d_model", "must be a multiple of heads (" + std::to_string(shape.heads) + ") but found " +
                                    std::to_string(shape.d_model));
  Model m;
  m.name = std::string(to_string(task.kind));
  m.vocab = task_vocab(task);
  m.d_model = shape.d_model;
  m.max_positions = task.seq_len;
  m.positions = shape.positions;
  m.norm = shape.norm;
  m.ffn = {shape.ffn, shape.ffn == FfnKind::None ? 0 : shape.d_ff > 0 ? shape.d_ff : 4 * shape.d_model};
  m.seed = seed;
  m.description = "A model for the " + m.name + " task: " + shape_summary(shape) + ".";
  check_range(shape.layers, 1, limits::kMaxLayers, "layers");
  ModelLayer layer;
  AttentionConfig& a = layer.attention;
  a.variant = shape.variant;
  a.heads = shape.heads;
  a.head_dim = shape.d_model / shape.heads;
  if (shape.variant == Variant::Gqa) {
    a.kv_heads = effective_kv_heads(shape);
    if (shape.heads % a.kv_heads != 0)
      throw InputError("kv_heads", "must divide heads (" + std::to_string(shape.heads) + ") but found " +
                                       std::to_string(a.kv_heads));
  }
  if (shape.variant == Variant::Mla) {
    a.latent_dim = effective_latent_dim(shape);
    // DeepSeek-V2's decoupled RoPE part is half a head wide; RoPE turns pairs, so it is even and at least one pair.
    if (shape.positions == Positions::Rope) a.rope_dim = std::max(2, a.head_dim / 4 * 2);
  }
  layer.attention.mask = MaskKind::Causal;
  layer.attention.output_projection = true;  // a model layer writes back to the stream through W_O
  m.layers.assign(static_cast<std::size_t>(shape.layers), layer);
  set_model_positions(m, shape.positions);
  check_model(m);
  check_trainable(m);
  return m;
}

void check_task_model(const Model& m, const Task& task) {
  check_trainable(m);
  const std::vector<std::string> vocab = task_vocab(task);
  const std::string task_name = "the " + std::string(to_string(task.kind)) + " task's vocabulary";
  if (m.vocab.size() != vocab.size())
    throw InputError("vocab", task_name + " has " + plural(static_cast<std::int64_t>(vocab.size()), "token") +
                                  " but found " + std::to_string(m.vocab.size()));
  for (std::size_t i = 0; i < vocab.size(); ++i)
    if (m.vocab[i] != vocab[i])
      throw InputError("vocab[" + std::to_string(i) + "]",
                       task_name + " has \"" + vocab[i] + "\" here but found \"" + m.vocab[i] + "\"");
  if (m.max_positions < task.seq_len)
    throw InputError("max_positions", "the task's sequences have " + std::to_string(task.seq_len) +
                                          " tokens but the model takes at most " + std::to_string(m.max_positions));
}

StepResult scheduled_step(TrainState& t, const std::vector<Sequence>& batch, const TrainingRun& run) {
  AdamWConfig c = run.adamw;
  c.lr = scheduled_lr(run.adamw.lr, run.schedule, t.adam.step + 1);
  return train_step(t, batch, c);
}

StepResult training_step(TrainState& t, const TrainingRun& run) {
  return scheduled_step(t, task_batch(run.task, run.batch, run.seed, static_cast<std::uint64_t>(t.adam.step)), run);
}

int eval_sequences(int seq_len) { return std::clamp(kEvalTokens / std::max(seq_len, 1), 1, kEvalSequences); }
int probe_sequences(int seq_len) { return std::clamp(kProbeTokens / std::max(seq_len, 1), 1, kProbeSequences); }

Evaluation evaluate(const Model& resolved, const Task& task) {
  Evaluation e;
  score_batch(resolved, task_eval_batch(task, eval_sequences(task.seq_len)), e);
  e.heads = head_scores(resolved, probe_batch(task, probe_sequences(task.seq_len)));
  return e;
}

}  // namespace attn
