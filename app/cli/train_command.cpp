// attention-lab train --model FILE --batches FILE: AdamW steps on given batches, each step's loss printed. The
// command the PyTorch cross-check drives (tests/crosscheck/train_crosscheck.py).
#include <chrono>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "core/adamw.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/model_gradient.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kTrainHelp =
    "attention-lab train --model FILE --batches FILE --steps S [--lr LR] [--weight-decay WD] [--clip C]\n"
    "                    [--beta1 B] [--beta2 B] [--eps E] [--save OUT.json] [--json]\n"
    "  Trains the model's weights (missing ones drawn from its seed) with AdamW on the batches (step s, from 1, uses\n"
    "  batch (s - 1) % count), next-token cross-entropy, in double. Supported so far: every norm and feed-forward\n"
    "  kind, no or learned positions, mha layers with W_O (causal or no mask).\n"
    "  --batches FILE    {\"batches\": [[[token ids of a sequence], ...], ...]}: ids index the vocabulary\n"
    "  --lr LR           learning rate (default 1e-3); --weight-decay WD decoupled decay (default 0)\n"
    "  --clip C          clip the gradient's global norm to C first (default: no clipping)\n"
    "  --save OUT.json   write the trained model, every weight given (atomically)\n"
    "  --json            {\"steps\": [{\"step\", \"loss\", \"grad_norm\"}], \"seconds\"}: the loss before each step\n";

namespace {

struct TrainOptions {
  std::string model, batches, save;
  int steps = 0;
  AdamWConfig adamw;
  bool json = false, help = false;
};

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
    else if (word == "--steps") o.steps = static_cast<int>(args.integer(word, 1, 1000000));
    else if (word == "--lr") o.adamw.lr = args.number(word, 0.0, 10.0);
    else if (word == "--weight-decay") o.adamw.weight_decay = args.number(word, 0.0, 10.0);
    else if (word == "--clip") o.adamw.clip = args.number(word, 0.0, 1e12);
    else if (word == "--beta1") o.adamw.beta1 = args.number(word, 0.0, 0.999999);
    else if (word == "--beta2") o.adamw.beta2 = args.number(word, 0.0, 0.999999999);
    else if (word == "--eps") o.adamw.eps = args.number(word, 0.0, 1.0);
    else throw UsageError("train: unknown option '" + word + "' (see attention-lab train --help)");
  }
  if (o.help) return o;
  if (o.model.empty()) throw UsageError("train: missing --model FILE");
  if (o.batches.empty()) throw UsageError("train: missing --batches FILE");
  if (o.steps == 0) throw UsageError("train: missing --steps S");
  return o;
}

// Each sequence's ids, with next-token targets; every id checked against the vocabulary.
std::vector<std::vector<Sequence>> load_batches(const std::string& path, const Model& m) {
  const nlohmann::json j = parse_json_document(read_document_file(path, kMaxModelFileBytes));
  const JsonFields f(j, "", {"batches"}, "batches file");
  const nlohmann::json& list = f.require("batches");
  if (!list.is_array() || list.empty()) throw InputError("batches", "expected a non-empty list of batches");
  std::vector<std::vector<Sequence>> batches;
  for (std::size_t b = 0; b < list.size(); ++b) {
    const std::string at = "batches[" + std::to_string(b) + "]";
    if (!list[b].is_array() || list[b].empty()) throw InputError(at, "expected a non-empty list of sequences");
    std::vector<Sequence>& batch = batches.emplace_back();
    for (std::size_t s = 0; s < list[b].size(); ++s) {
      const std::string seq = at + "[" + std::to_string(s) + "]";
      const nlohmann::json& ids = list[b][s];
      if (!ids.is_array() || ids.size() < 2) throw InputError(seq, "expected a list of at least two token ids");
      Sequence& q = batch.emplace_back();
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (!ids[i].is_number_integer()) throw InputError(seq + "[" + std::to_string(i) + "]", "expected a token id");
        q.ids.push_back(ids[i].get<int>());
        check_range(q.ids.back(), 0, static_cast<int>(m.vocab.size()) - 1, seq + "[" + std::to_string(i) + "]");
      }
      check_range(static_cast<std::int64_t>(q.ids.size()), 2, m.max_positions, seq + " (its length)");
      q.targets = next_token_targets(q.ids);
    }
  }
  return batches;
}

}  // namespace

int train_command(std::span<const std::string> words, std::ostream& out, std::ostream& err) {
  const TrainOptions o = parse_train(words);
  if (o.help) {
    out << "Usage:\n" << kTrainHelp;
    return kExitOk;
  }
  std::string file = o.model;
  try {
    TrainState t = start_training(resolve_model(load_model_file(o.model)));
    const Model& m = t.model;
    check_trainable(m);
    file = o.batches;
    const std::vector<std::vector<Sequence>> batches = load_batches(o.batches, m);
    const auto start = std::chrono::steady_clock::now();
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    std::string diverged;
    for (int step = 0; step < o.steps && diverged.empty(); ++step) {
      const StepResult r = train_step(t, batches[static_cast<std::size_t>(step) % batches.size()], o.adamw);
      diverged = r.diverged;
      if (!diverged.empty()) break;
      if (o.json) steps.push_back({{"step", step + 1}, {"loss", r.loss}, {"grad_norm", r.grad_norm}});
      else out << "step " << step + 1 << ": loss " << format_number(r.loss, 6) << '\n';
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.json) out << nlohmann::ordered_json{{"steps", steps}, {"seconds", seconds}}.dump() << '\n';
    file = o.save;
    if (!o.save.empty()) save_model_file(m, o.save);  // after a divergence, the last good weights
    if (!diverged.empty()) {
      err << "attention-lab: " << o.model << ": " << diverged << '\n';
      return kExitBadInput;
    }
  } catch (const InputError& e) {
    err << "attention-lab: " << file << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
