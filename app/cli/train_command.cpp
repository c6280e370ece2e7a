// attention-lab train: AdamW on a classroom task (tasks.h) or on given batches, each step's loss printed, then what
// was learned. The command the PyTorch cross-check drives (tests/crosscheck/train_crosscheck.py).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>

#include "app/cli/args.h"
#include "app/cli/assets.h"
#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "app/cli/output_files.h"
#include "app/cli/units.h"
#include "core/io/atomic_file.h"
#include "core/io/batches_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/memory_budget.h"
#include "core/model_bytes.h"
#include "core/text_format.h"
#include "core/training.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kTrainHelp =
    "attention-lab train --task T [--model FILE | shape options] --steps S [options]\n"
    "attention-lab train --model FILE --batches FILE --steps S [options]\n"
    "  Trains a model with AdamW on next-token cross-entropy, in double, and says what it learned.\n"
    "  --task T          induction | previous_token | copy | reverse | sort | text\n"
    "  --model FILE      start from this model (missing weights drawn from its seed); with --task its vocabulary\n"
    "                    must be the task's. Without it the model is made from the shape options:\n"
    "    --layers L (2) --heads H (4) --d-model D (64) --norm none|pre|post (pre)\n"
    "    --positions none|sinusoidal|learned|rope (learned) --ffn none|relu|gelu|swiglu (none) --d-ff F (4 x d-model)\n"
    "    --variant mha|gqa|mqa|mla (mha) --kv-heads G (gqa: heads / 2) --latent-dim C (mla: d-model / 2)\n"
    "  --vocab V (64)    the symbol tasks' vocabulary, <s> and | included; --seq-len N (32) tokens per sequence\n"
    "  --text FILE       the text task's text (default: assets/texts/sonnets.txt)\n"
    "                    (--vocab, --seq-len, --batch and --text are the tasks' own: refused where unused)\n"
    "  --batches FILE    instead of a task: {\"batches\": [[[token ids], ...], ...]}; step s uses batch (s-1) % count\n"
    "  --batch B (32)    sequences per step; --seed SEED (1) draws the weights and the batches\n"
    "  --lr LR (1e-3)    peak learning rate; --warmup W linear warm-up steps (a warm-up longer than S ends the run\n"
    "                    below LR, at LR x S / W); --cosine decays to --min-lr (0, at most LR) at S\n"
    "  --weight-decay WD decoupled decay (0); --clip C clips the gradient's global norm to C; --beta1 --beta2 --eps\n"
    "                    (0.9, 0.999, 1e-8; eps > 0)\n"
    "  --save OUT.json   write the trained model, every weight given (atomically; checked before the first step,\n"
    "                    and never one of the files the run reads)\n"
    "  --json            {\"task\", \"steps\": [{\"step\", \"loss\", \"grad_norm\"}], \"eval\": {\"loss\", "
    "\"accuracy\",\n"
    "                    \"heads\": [{\"layer\", \"head\", \"previous_token\", \"induction\", \"duplicate_token\",\n"
    "                    \"first_token\"}], \"inputs\": {\"batch\": [{\"ids\", \"targets\"}], \"probe\": [[ids]]}},\n"
    "                    \"seconds\"}: the loss before each step, the evaluation after the last (targets -1: none)\n"
    "  A run whose step would hold more than the memory budget (the model, AdamW's state, and every sequence's\n"
    "  activations for the backward pass) is refused before the first step (exit 2) with what it needs.\n";

namespace {

struct TrainOptions {
  std::string model, batches, text;
  std::optional<std::string> save;
  std::optional<TaskKind> task;
  Task task_config;
  TaskModelShape shape;
  std::string shape_option;  // the first shape option given, refused beside --model
  int steps = 0;
  TrainingRun run;
  bool cosine = false, json = false, help = false;
  // Given, to refuse them where the run would not use them.
  bool vocab_given = false, seq_len_given = false, batch_given = false, min_lr_given = false;
};

template <typename E>
E named(Args& args, const std::string& option, std::optional<E> (*parse)(std::string_view), std::string_view names) {
  const std::string v = args.value(option);
  if (const std::optional<E> e = parse(v)) return *e;
  throw UsageError("train: " + option + " expects " + std::string(names) + " but found '" + v + "'");
}

// The options that shape a new model; false if `word` is none of them.
bool parse_task_shape_option(const std::string& word, Args& args, TaskModelShape& s) {
  if (word == "--layers") s.layers = static_cast<int>(args.integer(word, 1, limits::kMaxLayers));
  else if (word == "--heads") s.heads = static_cast<int>(args.integer(word, 1, limits::kMaxHeads));
  else if (word == "--d-model") s.d_model = static_cast<int>(args.integer(word, 1, limits::kMaxModelDim));
  else if (word == "--d-ff") s.d_ff = static_cast<int>(args.integer(word, 1, limits::kMaxModelDim * 4));
  else if (word == "--variant") s.variant = named(args, word, parse_variant, variant_names());
  else if (word == "--kv-heads") s.kv_heads = static_cast<int>(args.integer(word, 1, limits::kMaxHeads));
  else if (word == "--latent-dim") s.latent_dim = static_cast<int>(args.integer(word, 1, limits::kMaxModelDim));
  else if (word == "--positions") s.positions = named(args, word, parse_positions, positions_names());
  else if (word == "--norm") s.norm = named(args, word, parse_norm, norm_names());
  else if (word == "--ffn") s.ffn = named(args, word, parse_ffn_kind, ffn_kind_names());
  else return false;
  return true;
}

// The options of the optimiser and its schedule; false if `word` is none of them.
bool parse_optimiser_option(const std::string& word, Args& args, TrainOptions& o) {
  AdamWConfig& a = o.run.adamw;
  if (word == "--lr") a.lr = args.number(word, 0.0, 10.0);
  else if (word == "--weight-decay") a.weight_decay = args.number(word, 0.0, 10.0);
  else if (word == "--clip") a.clip = args.number(word, 0.0, 1e12);
  else if (word == "--beta1") a.beta1 = args.number(word, 0.0, 0.999999);
  else if (word == "--beta2") a.beta2 = args.number(word, 0.0, 0.999999999);
  else if (word == "--eps") {
    a.eps = args.number(word, 0.0, 1.0);
    // AdamW divides by sqrt(v) + eps: with 0 a weight whose gradient is 0 becomes 0 / 0.
    if (!(a.eps > 0)) throw UsageError(word + ": must be > 0 (found " + general_number(a.eps) + ")");
  } else if (word == "--warmup") o.run.schedule.warmup = static_cast<int>(args.integer(word, 0, 1000000));
  else if (word == "--min-lr") o.run.schedule.min_lr = args.number(word, 0.0, 10.0), o.min_lr_given = true;
  else if (word == "--cosine") o.cosine = true;
  else return false;
  return true;
}

// Options the run would not use are refused, as --kv-heads beside another variant is: they were meant to change
// something. The schedule: --min-lr only with --cosine, and below the rate it decays from.
void check_unused_options(const TrainOptions& o) {
  const std::string trains_on =
      o.task ? "the task is " + std::string(to_string(*o.task)) : std::string("this run trains on --batches");
  if (!o.task) {
    for (const auto& [given, option] : {std::pair{!o.text.empty(), "--text"}, std::pair{o.vocab_given, "--vocab"},
                                        std::pair{o.seq_len_given, "--seq-len"}, std::pair{o.batch_given, "--batch"}})
      if (given)
        throw UsageError(std::string("train: ") + option + " is for --task, but " + trains_on +
                         " (the model and the batches file give the vocabulary and the sequences)");
  }
  if (o.task && !o.text.empty() && *o.task != TaskKind::Text)
    throw UsageError("train: --text is for --task text, but " + trains_on);
  if (o.task && o.vocab_given && *o.task == TaskKind::Text)
    throw UsageError("train: --vocab is for the symbol tasks (induction, previous_token, copy, reverse, sort), but " +
                     trains_on + ": its vocabulary is its text's characters");
  const AdamWConfig& a = o.run.adamw;
  if (o.min_lr_given && !o.cosine)
    throw UsageError("train: --min-lr is for --cosine (the rate it decays to), but --cosine is not given");
  if (o.cosine && o.run.schedule.min_lr > a.lr)
    throw UsageError("train: --min-lr: must be at most --lr, " + general_number(a.lr) + " (found " +
                     general_number(o.run.schedule.min_lr) + "): --cosine decays the rate from --lr down to --min-lr");
}

void check_train_options(const TrainOptions& o) {
  if (o.steps == 0) throw UsageError("train: missing --steps S");
  if (o.task && !o.batches.empty()) throw UsageError("train: give --task or --batches, not both");
  if (!o.task && o.batches.empty()) throw UsageError("train: missing --task T (or --model FILE --batches FILE)");
  if (!o.batches.empty() && o.model.empty()) throw UsageError("train: --batches needs --model FILE");
  if (!o.model.empty() && !o.shape_option.empty())
    throw UsageError("train: " + o.shape_option + " shapes a new model; --model FILE has its own shape");
  const std::string variant(to_string(o.shape.variant));
  if (o.shape.kv_heads > 0 && o.shape.variant != Variant::Gqa)
    throw UsageError("train: --kv-heads is for --variant gqa, but the variant is " + variant);
  if (o.shape.latent_dim > 0 && o.shape.variant != Variant::Mla)
    throw UsageError("train: --latent-dim is for --variant mla, but the variant is " + variant);
  if (o.cosine && o.run.schedule.warmup >= o.steps)
    throw UsageError("train: --cosine decays after the warm-up, so --warmup must be below --steps");
  check_unused_options(o);
  // Before the first step: a run is not lost to a --save that cannot be written, nor writes over what it reads.
  // The text task reads the shipped text when --text is not given: that is an input too.
  const bool reads_shipped_text = o.task == TaskKind::Text && o.text.empty();
  if (o.save)
    check_output_option("train", "--save", *o.save,
                        {{"--model", o.model},
                         {"--batches", o.batches},
                         {"--text", o.text},
                         {"text", reads_shipped_text ? default_text().string() : ""}});
}

TrainOptions parse_train(std::span<const std::string> words) {
  TrainOptions o;
  Args args(words);
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--help" || word == "-h") o.help = true;
    else if (word == "--json") o.json = true;
    else if (word == "--model") o.model = args.value(word);
    else if (word == "--batches") o.batches = args.value(word);
    else if (word == "--save") o.save = args.value(word);
    else if (word == "--text") o.text = args.value(word);
    else if (word == "--task") o.task = named(args, word, parse_task, task_names());
    else if (word == "--steps") o.steps = static_cast<int>(args.integer(word, 1, 1000000));
    else if (word == "--batch") o.run.batch = static_cast<int>(args.integer(word, 1, 4096)), o.batch_given = true;
    else if (word == "--seed") o.run.seed = args.unsigned_integer(word);
    else if (word == "--vocab")
      o.task_config.vocab = static_cast<int>(args.integer(word, 4, limits::kMaxVocab)), o.vocab_given = true;
    else if (word == "--seq-len")
      o.task_config.seq_len = static_cast<int>(args.integer(word, kMinTaskSeqLen, limits::kMaxTokens)),
      o.seq_len_given = true;
    else if (parse_optimiser_option(word, args, o)) continue;
    else if (parse_task_shape_option(word, args, o.shape)) {
      if (o.shape_option.empty()) o.shape_option = word;
    } else throw UsageError("train: unknown option '" + word + "' (see attention-lab train --help)");
  }
  if (o.help) return o;
  check_train_options(o);
  if (o.cosine) o.run.schedule.decay_until = o.steps;
  if (o.task) o.run.task = o.task_config, o.run.task.kind = *o.task;
  return o;
}

// The sequences the evaluation read, so that another implementation can check its numbers.
nlohmann::ordered_json evaluation_inputs(const Task& task) {
  nlohmann::ordered_json batch = nlohmann::ordered_json::array(), probe = nlohmann::ordered_json::array();
  for (const Sequence& s : task_eval_batch(task, eval_sequences(task.seq_len)))
    batch.push_back({{"ids", s.ids}, {"targets", s.targets}});
  for (const std::vector<int>& ids : probe_batch(task, probe_sequences(task.seq_len)).ids) probe.push_back(ids);
  return {{"batch", batch}, {"probe", probe}};
}

nlohmann::ordered_json evaluation_json(const Evaluation& e) {
  nlohmann::ordered_json heads = nlohmann::ordered_json::array();
  for (const HeadScores& h : e.heads)
    heads.push_back({{"layer", h.layer},
                     {"head", h.head},
                     {"previous_token", h.previous_token},
                     {"induction", h.induction},
                     {"duplicate_token", h.duplicate_token},
                     {"first_token", h.first_token}});
  return {{"loss", e.loss}, {"accuracy", e.accuracy}, {"heads", heads}};
}

void print_evaluation(const Evaluation& e, std::ostream& out) {
  out << "evaluation: loss " << format_number(e.loss, 4) << ", accuracy " << percent_text(e.accuracy) << "\n";
  out << "head  previous-token  induction  duplicate-token  first-token\n";
  for (const HeadScores& h : e.heads) {
    const std::string head = std::to_string(h.layer) + "." + std::to_string(h.head);
    out << std::left << std::setw(5) << head << std::right << ' ' << std::setw(14) << format_number(h.previous_token, 3)
        << ' ' << std::setw(10) << format_number(h.induction, 3) << ' ' << std::setw(16)
        << format_number(h.duplicate_token, 3) << ' ' << std::setw(12) << format_number(h.first_token, 3) << '\n';
  }
}

// Where the run starts: the file's model, or a new one of the given shape for the task.
Model starting_model(TrainOptions& o, std::string& file, std::int64_t budget) {
  if (o.task && o.run.task.kind == TaskKind::Text) {
    file = o.text.empty() ? default_text().string() : o.text;
    o.run.task.text = read_text_file(file, 16u << 20, "a text to train on", budget);
    check_task(o.run.task);
    file = "train";
  }
  if (o.model.empty()) return task_model(o.run.task, o.shape, o.run.seed);
  file = o.model;
  Model m = load_model_file(o.model, budget);
  check_trainable(m);
  if (o.task) check_task_model(m, o.run.task);
  return m;
}

// The saved model says how it was trained, so a file found later explains itself.
Model with_training_described(Model m, const TrainOptions& o, int steps) {
  std::string what = o.task ? "the " + std::string(to_string(o.run.task.kind)) + " task (sequences of " +
                                  std::to_string(o.run.task.seq_len) + ", batches of " + std::to_string(o.run.batch) +
                                  ", seed " + std::to_string(o.run.seed) + ")"
                            : "the batches of " + shown_path(o.batches);  // JSON text: a path's bytes escaped
  m.description = "Trained on " + what + " for " + plural(steps, "step") + " of AdamW (lr " +
                  general_number(o.run.adamw.lr) + ") by attention-lab train." +
                  (m.description.empty() ? "" : " " + m.description);
  return m;
}

// The step's memory from the shapes (the largest batch and the longest sequence of --batches), held to the budget
// before the first step.
void check_training_budget(const Model& m, const TrainOptions& o, const std::vector<std::vector<Sequence>>& batches,
                           std::int64_t budget) {
  std::int64_t batch = o.run.batch, seq_len = o.run.task.seq_len;
  if (!o.task) {
    batch = seq_len = 0;
    for (const std::vector<Sequence>& b : batches) {
      batch = std::max(batch, static_cast<std::int64_t>(b.size()));
      for (const Sequence& q : b) seq_len = std::max(seq_len, static_cast<std::int64_t>(q.ids.size()));
    }
  }
  const std::int64_t needs = predicted_training_bytes(m, batch, seq_len);
  check_memory_budget(needs, budget, training_what(m, batch, seq_len),
                      "a smaller batch, shorter sequences or fewer layers");
}

struct TrainLog {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  std::string diverged;
};

// Runs the steps, printing each loss (or collecting it for --json) and, on a terminal, progress on stderr.
TrainLog run_steps(const TrainOptions& o, TrainState& t, const std::vector<std::vector<Sequence>>& batches,
                   std::ostream& out, std::ostream& err) {
  TrainLog log;
  const bool progress = o.json && ::isatty(2);
  for (int step = 0; step < o.steps; ++step) {
    const StepResult r = o.task ? training_step(t, o.run)
                                : scheduled_step(t, batches[static_cast<std::size_t>(step) % batches.size()], o.run);
    if (!r.diverged.empty()) {
      log.diverged = r.diverged;
      break;
    }
    if (o.json) log.steps.push_back({{"step", step + 1}, {"loss", r.loss}, {"grad_norm", r.grad_norm}});
    else out << "step " << step + 1 << ": loss " << format_number(r.loss, 6) << '\n';
    if (progress && ((step + 1) % 50 == 0 || step + 1 == o.steps))
      err << "\rstep " << step + 1 << "/" << o.steps << ": loss " << format_number(r.loss, 4) << std::flush;
  }
  if (progress) err << '\n';
  return log;
}

}  // namespace

int train_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  TrainOptions o = parse_train(words);
  if (o.help) {
    out << "Usage:\n" << kTrainHelp;
    return kExitOk;
  }
  std::string file = "train";
  try {
    Model initial = starting_model(o, file, budget);
    const std::string model_file = file;
    file = o.batches;
    const std::vector<std::vector<Sequence>> batches =
        o.task ? std::vector<std::vector<Sequence>>{} : load_batches_file(o.batches, initial, budget);
    file = model_file;
    check_training_budget(initial, o, batches, budget);
    TrainState t = start_training(resolve_model(initial));
    file = o.batches;
    const auto start = std::chrono::steady_clock::now();
    const TrainLog log = run_steps(o, t, batches, out, err);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::ordered_json report;
    if (o.task) report["task"] = to_string(o.run.task.kind);
    report["steps"] = log.steps;
    if (o.task) {
      const Evaluation e = evaluate(t.model, o.run.task);
      if (o.json) {
        report["eval"] = evaluation_json(e);
        report["eval"]["inputs"] = evaluation_inputs(o.run.task);
      } else print_evaluation(e, out);
    }
    report["seconds"] = seconds;
    if (o.json) out << report.dump() << '\n';
    file = "--save";
    if (o.save)  // after a divergence, the last good weights
      save_model_file(with_training_described(t.model, o, t.adam.step), *o.save);
    if (!log.diverged.empty()) {
      err << "attention-lab: " << (o.model.empty() ? std::string("train") : shown_path(o.model)) << ": " << log.diverged
          << '\n';
      return kExitBadInput;
    }
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(file) << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
