#include "ui/logic/real_model.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "core/io/checkpoint_text.h"
#include "core/kv_tradeoff.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "ui/logic/model_document.h"
#include "ui/logic/window_memory.h"

namespace attn::ui {
namespace {

// Typing streams edits in: the worker rests as long as it worked, so the window keeps its frames.
constexpr double kRestAfterRun = 1.0;

std::int64_t state_bytes(const RealModelState& s) {
  return static_cast<std::int64_t>(sizeof s + s.text.size() + s.ablation.heads.size() * sizeof(HeadRef) +
                                   (s.ids ? s.ids->size() * sizeof(int) : 0));
}

// Ids the state holds, read as they are: each must be one of the model's embedding rows, all within its positions
// (ids drawn for one folder's model may be run by another's).
Encoding ids_encoding(const CheckpointModel& m, const std::vector<int>& ids) {
  const std::uint64_t positions = static_cast<std::uint64_t>(m.model().max_positions);
  if (ids.size() > positions)
    throw InputError("text",
                     thousands(ids.size()) + " tokens, more than the model's " + thousands(positions) + " positions");
  Encoding e{.ids = ids, .pieces = {}, .words = {}};  // no words: each random id a word of its own
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= m.config().vocab)
      throw InputError("text", "token " + std::to_string(i) + " has id " + std::to_string(ids[i]) +
                                   ", not one of the " + thousands(std::uint64_t(m.config().vocab)) + " the model has");
    e.pieces.push_back(m.piece(ids[i]));
  }
  return e;
}

// The ids a random draw skips, sorted: the template's, the added special tokens and the unknown token.
std::vector<int> special_ids(const Tokenizer& t) {
  std::vector<int> ids = t.prefix;
  ids.insert(ids.end(), t.suffix.begin(), t.suffix.end());
  for (const AddedToken& a : t.added)
    if (a.special) ids.push_back(a.id);
  if (t.unk) ids.push_back(*t.unk);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// One forward pass of the checkpoint on the text, the progress told layer by layer.
ModelTrace forward(const CheckpointModel& m, const Encoding& text, ModelRunOptions o, RealModelProgress& progress,
                   RealModelProgress::Phase phase, int pass = 0) {
  progress.pass = pass;
  progress.layer = 0;
  progress.layers = static_cast<int>(m.model().layers.size());
  progress.phase = phase;
  o.kept = std::vector<int>{};
  o.on_layer = [&progress](int l) { progress.layer = l + 1; };
  return run_model(m.model(), text.pieces, text.ids, m, o);
}

// The folder's model, opened; an error names the folder.
std::shared_ptr<const CheckpointModel> open_folder(const RealModelJob& job, RealModelProgress& progress) {
  progress.phase = RealModelProgress::Opening;
  try {
    std::error_code ec;
    if (!std::filesystem::is_directory(job.folder, ec))
      throw InputError("", "no such folder (a Hugging Face model's folder: config.json, weights, tokenizer)");
    return CheckpointModel::open(job.folder, job.budget);
  } catch (const InputError& e) {
    throw InputError("", shown_path(job.folder) + ": " + e.what());
  }
}

// The folder's model converted in memory; an error names the model and the conversion.
std::shared_ptr<const CheckpointModel> convert_folder(const std::shared_ptr<const CheckpointModel>& source,
                                                      const KvConversion& c, const RealModelJob& job,
                                                      RealModelProgress& progress) {
  progress.phase = RealModelProgress::Converting;
  try {
    return CheckpointModel::converted(*source, c, job.budget, {job.shown_bytes, "the model shown"});
  } catch (const BudgetError&) {
    throw;  // it names the model and the conversion
  } catch (const InputError& e) {
    throw InputError("", source->name() + " as " + tradeoff_point_name(c) + ": " + e.what());
  }
}

// Every head the ablation names is one of the model's (an ablation kept from another folder may not be).
void check_ablation(const Model& m, const Ablation& a) {
  for (const HeadRef& h : a.heads)
    if (h.layer >= static_cast<int>(m.layers.size()) ||
        h.head >= m.layers[static_cast<std::size_t>(h.layer)].attention.heads)
      throw InputError("ablation", "head " + head_name(h) + " is not one of the model's");
}

// The forward pass of the job's state, and with an ablation the unablated one beside it. Fills r.
void run_state(const RealModelJob& job, RealModelRun& r, RealModelProgress& progress) {
  const CheckpointModel& m = *r.model;
  r.text = job.state->ids ? ids_encoding(m, *job.state->ids) : checkpoint_text(m, job.state->text, "text");
  const Ablation& ablation = job.state->ablation;
  check_ablation(m.model(), ablation);
  const auto n = static_cast<std::int64_t>(r.text.ids.size());
  // The result shown stays while this one is made: two of them at once.
  check_memory_budget(2 * real_model_run_bytes(m, n, !ablation.empty()) + history_share(job.budget), job.budget,
                      "running " + m.name() + " on the text", "a shorter text");
  // Both runs keep what the view draws, so either can be shown without running again when the ablation changes.
  const ModelRunOptions o{.overview = kModelOverview, .head_scores = true, .ablation = ablation};
  std::shared_ptr<const ModelTrace> unablated = job.unablated;
  progress.passes = !ablation.empty() && !unablated ? 2 : 1;
  if (!unablated && ablation.empty())
    unablated = std::make_shared<const ModelTrace>(forward(m, r.text, o, progress, RealModelProgress::Running));
  if (ablation.empty()) {
    r.trace = unablated;
  } else {
    r.trace = std::make_shared<const ModelTrace>(forward(m, r.text, o, progress, RealModelProgress::Running));
    if (!unablated)
      unablated = std::make_shared<const ModelTrace>(forward(
          m, r.text, {.overview = kModelOverview, .head_scores = true}, progress, RealModelProgress::Baseline, 1));
    r.baseline = unablated;
    r.baseline_losses = next_token_losses(r.baseline->logits, r.text.ids);
  }
  r.losses = next_token_losses(r.trace->logits, r.text.ids);
}

// A state the model cannot run keeps the model opened for it (the next edit does not open the folder again).
RealModelRun compute(const RealModelJob& job, RealModelProgress& progress, OpenedFolder& opened) {
  const auto start = std::chrono::steady_clock::now();
  RealModelRun r;
  r.ticket = job.ticket;
  r.folder = job.folder;
  r.state = job.state;
  r.conversion = job.conversion;
  try {
    r.source = job.source ? job.source : open_folder(job, progress);
    if (job.model) r.model = job.model;
    else {
      r.model = job.conversion ? convert_folder(r.source, *job.conversion, job, progress) : r.source;
      const std::lock_guard lock(opened.mutex);
      opened.folder = job.folder;
      opened.conversion = job.conversion;
      opened.model = r.model;
      opened.source = r.source;
    }
    run_state(job, r, progress);
  } catch (const std::exception& e) {
    r.error = dynamic_cast<const std::bad_alloc*>(&e) ? "the model does not fit in memory" : e.what();
    r.trace = nullptr;
    r.baseline = nullptr;
  }
  progress.phase = RealModelProgress::Idle;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

RealModelRun failed(const RealModelJob& job, const std::exception& e, RealModelProgress& progress) {
  progress.phase = RealModelProgress::Idle;
  RealModelRun r;  // nothing to keep but which state and why
  r.ticket = job.ticket;
  r.folder = job.folder;
  r.error = e.what();
  return r;
}

}  // namespace

std::string progress_text(const RealModelProgress& p) {
  const std::string layer = "layer " + std::to_string(p.layer.load()) + " of " + std::to_string(p.layers.load());
  switch (p.phase.load()) {
    case RealModelProgress::Opening: return "reading the model folder";
    case RealModelProgress::Converting: return "converting its keys and values";
    case RealModelProgress::Running: return "computing " + layer;
    case RealModelProgress::Baseline: return "computing " + layer + " without the ablation";
    default: return "";
  }
}

double progress_fraction(const RealModelProgress& p) {
  const int layers = std::max(1, p.layers.load()), passes = std::max(1, p.passes.load());
  const double done = (p.pass.load() + static_cast<double>(p.layer.load()) / layers) / passes;
  const int phase = p.phase.load();
  return phase == RealModelProgress::Running || phase == RealModelProgress::Baseline ? std::min(1.0, done) : 0.0;
}

std::vector<int> random_repeated_ids(const Tokenizer& t, int vocab, int positions, std::uint64_t seed, int half) {
  const int n = std::min(vocab, t.vocab_size());
  const std::vector<int> skipped = special_ids(t);
  const auto special = std::count_if(skipped.begin(), skipped.end(), [n](int id) { return id >= 0 && id < n; });
  if (n - special < 1) throw InputError("random sequence", "the vocabulary has no token that is not a special one");
  const auto prefix = static_cast<int>(t.prefix.size());
  half = std::min(half, (positions - prefix) / 2);
  if (half < 1) throw InputError("random sequence", "the model's " + plural(positions, "position") + " hold no repeat");
  // mt19937_64's numbers are the same on every standard library (a distribution's are not).
  std::mt19937_64 draw(seed);
  std::vector<int> first;
  while (static_cast<int>(first.size()) < half) {
    const auto id = static_cast<int>(draw() % static_cast<std::uint64_t>(n));
    if (!std::binary_search(skipped.begin(), skipped.end(), id)) first.push_back(id);
  }
  std::vector<int> ids = t.prefix;
  ids.insert(ids.end(), first.begin(), first.end());
  ids.insert(ids.end(), first.begin(), first.end());
  return ids;
}

std::string ids_text(const CheckpointModel& m, const std::vector<int>& ids) {
  const std::vector<int>& prefix = m.tokenizer().prefix;
  const bool prefixed = ids.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
  std::string text;
  for (std::size_t i = prefixed ? prefix.size() : 0; i < ids.size(); ++i) text += m.piece(ids[i]);
  return text;
}

std::int64_t real_model_run_bytes(const CheckpointModel& m, std::int64_t n, bool ablated) {
  const CheckpointConfig& c = m.config();
  const std::int64_t side = std::min<std::int64_t>(n, kModelOverview);
  const std::int64_t overviews = 8 * std::int64_t{c.layers} * (c.heads + 1) * side * side;
  const std::int64_t run = checkpoint_run_bytes(m, n, false);
  // The unablated run beside it: its stream and logits (the program and one layer's weights counted once).
  return run + overviews + (ablated ? run - limits::kProgramBytes - m.layer_bytes() + overviews : 0);
}

RealModelDocument::RealModelDocument(std::int64_t memory_budget)
    : budget_(memory_budget),
      history_(state_bytes, history_share(memory_budget)),
      results_(
          [progress = progress_, opened = opened_](const RealModelJob& j) { return compute(j, *progress, *opened); },
          [progress = progress_](const RealModelJob& j, const std::exception& e) { return failed(j, e, *progress); },
          kRestAfterRun, &RealModelRun::error) {}

void RealModelDocument::open(std::filesystem::path folder, std::string text, Ablation ablation) {
  open(std::move(folder), RealModelState{std::move(text), std::move(ablation)});
}

void RealModelDocument::open(std::filesystem::path folder, RealModelState state, std::optional<KvConversion> conversion,
                             std::shared_ptr<const CheckpointModel> source) {
  folder_ = std::move(folder);
  conversion_ = std::move(conversion);
  model_ = nullptr;
  source_ = std::move(source);
  {
    const std::lock_guard lock(opened_->mutex);  // the same folder opened again is read again (it may have changed)
    opened_->folder.clear();
    opened_->conversion.reset();
    opened_->model = nullptr;
    opened_->source = nullptr;
  }
  failure_.clear();
  history_.clear();
  submit(std::make_shared<const RealModelState>(std::move(state)), 0, false);
}

void RealModelDocument::submit(std::shared_ptr<const RealModelState> next, unsigned gesture, bool record) {
  if (record) history_.record({state_, revision_}, gesture);
  state_ = std::move(next);
  revision_ = history_.next_revision();
  const RealModelRun& shown = results_.shown();
  const std::int64_t held = shown.model && shown.model != model_ ? shown.model->held_bytes() : 0;
  results_.submit(
      {model_, source_, conversion_, folder_, state_, results_.next_ticket(), budget_, unablated_run(), held});
}

std::shared_ptr<const ModelTrace> RealModelDocument::unablated_run() const {
  const RealModelRun& shown = results_.shown();
  if (!shown.trace || !model_ || shown.model != model_ || shown.state->text != state_->text ||
      shown.state->ids != state_->ids)
    return nullptr;
  return shown.state->ablation.empty() ? shown.trace : shown.baseline;
}

void RealModelDocument::set_text(std::string text, unsigned gesture) {
  if (text == state_->text) return;
  submit(std::make_shared<const RealModelState>(RealModelState{std::move(text), state_->ablation}), gesture, true);
}

void RealModelDocument::set_ablation(Ablation ablation) {
  std::sort(ablation.heads.begin(), ablation.heads.end());  // Ablation::ablates searches them in order
  ablation.heads.erase(std::unique(ablation.heads.begin(), ablation.heads.end()), ablation.heads.end());
  if (ablation == state_->ablation) return;
  submit(std::make_shared<const RealModelState>(RealModelState{state_->text, std::move(ablation), state_->ids}), 0,
         true);
}

bool RealModelDocument::set_random_repeat(std::uint64_t seed) {
  const std::shared_ptr<const CheckpointModel> m = model_ ? model_ : results_.shown().model;
  if (!m) {
    failure_ = "random sequence: open a model folder first";
    return false;
  }
  std::vector<int> ids;
  try {
    ids = random_repeated_ids(m->tokenizer(), m->config().vocab, m->model().max_positions, seed);
  } catch (const InputError& e) {
    failure_ = e.what();
    return false;
  }
  std::string text = ids_text(*m, ids);
  submit(std::make_shared<const RealModelState>(RealModelState{std::move(text), state_->ablation, std::move(ids)}), 0,
         true);
  return true;
}

bool RealModelDocument::undo() {
  std::optional<BasicRevision<RealModelState>> r = history_.undo({state_, revision_});
  if (!r) return false;
  submit(r->document, 0, false);
  return true;
}

bool RealModelDocument::redo() {
  std::optional<BasicRevision<RealModelState>> r = history_.redo({state_, revision_});
  if (!r) return false;
  submit(r->document, 0, false);
  return true;
}

bool RealModelDocument::poll(std::optional<std::string>& failure) {
  std::optional<std::string> why;
  const bool shown = results_.poll(why);
  // A failure of a state a newer one replaced is no longer the document's.
  if (why && !results_.computing()) {
    failure_ = *why;
    failure = why;
  }
  // A model the folder open before gave (finished after another was opened) is not this folder's.
  if (!model_) {
    const std::lock_guard lock(opened_->mutex);
    if (opened_->folder == folder_ && opened_->conversion == conversion_) {
      model_ = opened_->model;
      source_ = opened_->source;
    }
  }
  if (shown && results_.shown().ticket == results_.ticket()) failure_.clear();
  return shown;
}

}  // namespace attn::ui

namespace attn::ui {
namespace {

std::string converted_as(const KvConversion& c) {
  if (c.to == KvTarget::Mla) return "mla with a latent of " + std::to_string(c.latent_dim);
  return c.kv_heads == 1 ? "mqa" : "gqa with " + plural(c.kv_heads, "key/value head");
}

}  // namespace

std::string reexpansion_text(const Model& m, std::int64_t context) {
  const std::int64_t flops = key_reexpansion_flops(m, context);
  if (flops == 0) return "";
  return "RoPE turns its keys after the up-projection, so W_UK cannot be absorbed: each new token expands every "
         "cached latent into keys again, " +
         format_value(static_cast<double>(flops), NumberUnit::Flops) + " a token at " +
         thousands(static_cast<std::uint64_t>(context)) + " cached tokens";
}

std::string conversion_text(const CheckpointModel& m) {
  const auto& layers = m.conversions();
  std::string text;
  for (std::size_t l = 0; l < layers.size();) {
    std::size_t end = l + 1;
    const auto same = [&](std::size_t k) {
      return layers[k].has_value() == layers[l].has_value() &&
             (!layers[l] || converted_as(*layers[k]) == converted_as(*layers[l]));
    };
    while (end < layers.size() && same(end)) ++end;
    if (layers[l])
      text += std::string(text.empty() ? "" : ", ") +
              (end - l == 1 ? "layer " + std::to_string(l)
                            : "layers " + std::to_string(l) + "\u2013" + std::to_string(end - 1)) +
              " as " + converted_as(*layers[l]);
    l = end;
  }
  return text.empty() ? text : "made from " + m.source_name() + ": " + text;
}

}  // namespace attn::ui
