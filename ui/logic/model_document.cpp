#include "ui/logic/model_document.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/model_bytes.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/window_memory.h"

namespace attn::ui {
namespace {

std::int64_t bytes_of(const SharedMatrix& m) { return m ? std::int64_t(m->size()) * 8 : 0; }

}  // namespace

std::vector<std::string> starting_tokens(const Model& m) {
  const std::size_t n = std::min<std::size_t>({m.vocab.size(), 8, static_cast<std::size_t>(m.max_positions)});
  return {m.vocab.begin(), m.vocab.begin() + static_cast<std::ptrdiff_t>(n)};
}

ModelInput model_input(Model m, std::string_view typed_tokens) {
  std::vector<std::string> tokens = typed_tokens.empty() ? starting_tokens(m) : split_words(typed_tokens);
  return {std::move(m), std::move(tokens)};
}

std::int64_t model_input_bytes(const ModelInput& in) {
  const Model& m = in.model;
  std::int64_t bytes = bytes_of(m.embedding) + bytes_of(m.W_P) + bytes_of(m.final_gain) + bytes_of(m.final_bias) +
                       bytes_of(m.unembedding);
  for (const ModelLayer& layer : m.layers) {
    for (const WeightId id : kAllWeights) bytes += bytes_of(weight_slot(layer.weights, id));
    for (const LayerWeightField& f : kLayerWeightFields) bytes += bytes_of(layer.own.*f.slot);
  }
  for (const std::string& t : in.tokens) bytes += static_cast<std::int64_t>(t.size());
  return bytes;
}

std::int64_t model_work(const Model& resolved, std::int64_t parameters, int tokens) {
  std::int64_t work = parameters * tokens;         // every weight meets every token once
  for (const ModelLayer& layer : resolved.layers)  // scores and weighted sums
    work += std::int64_t(2) * layer.attention.heads * layer.attention.head_dim * tokens * tokens;
  return work;
}

ModelRunOptions model_view_run(int layer) { return {.kept = std::vector<int>{layer}, .overview = kModelOverview}; }

std::int64_t model_view_bytes(const ModelInput& in, int layer) {
  return predicted_model_run_bytes(in.model, static_cast<std::int64_t>(in.tokens.size()), model_view_run(layer));
}

std::optional<std::string> model_view_refusal(const ModelInput& in, int layer, std::int64_t budget,
                                              const HeldBeside& beside, std::int64_t history_bytes) {
  return budget_refusal(model_view_bytes(in, layer) + history_bytes, budget,
                        model_run_what(in.model, static_cast<std::int64_t>(in.tokens.size())), "fewer tokens", beside);
}

namespace {

// The shown layer within the model's layers.
int layer_within(const Model& m, int layer) {
  return std::clamp(layer, 0, std::max(0, static_cast<int>(m.layers.size()) - 1));
}

ModelShown forward_pass(const ModelShown& job) {
  const auto start = std::chrono::steady_clock::now();
  ModelShown done = job;
  done.trace =
      std::make_shared<const ModelTrace>(run_model(*job.resolved, job.input->tokens, model_view_run(job.layer)));
  done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return done;
}

ModelShown failed_forward_pass(const ModelShown& job, const std::exception& e) {
  ModelShown failed;  // nothing to keep but which state and why
  failed.ticket = job.ticket;
  failed.error = dynamic_cast<const std::bad_alloc*>(&e) ? "the model does not fit in memory" : e.what();
  return failed;
}

// The Model view draws more than the others (docs/PERFORMANCE.md, the Model view): while a weight is dragged, the
// worker rests as long as it worked, so that the frames keep their targets.
constexpr double kRestAfterForwardPass = 1.0;

// What run_model would refuse about the tokens, found before it runs.
void check_tokens(const Model& m, const std::vector<std::string>& tokens) {
  if (tokens.empty()) throw InputError("tokens", "expected at least one token but found none");
  check_token_count(m, static_cast<std::int64_t>(tokens.size()), "tokens");
  token_ids(m, tokens);
}

}  // namespace

ModelDocument::ModelDocument(std::int64_t history_bytes, std::int64_t memory_budget)
    : budget_(memory_budget),
      history_bytes_(history_bytes),
      history_(model_input_bytes, std::min(history_bytes, history_share(memory_budget))),
      results_(forward_pass, failed_forward_pass, kRestAfterForwardPass, &ModelShown::error) {}

void ModelDocument::set_memory_budget(std::int64_t budget) {
  budget_ = budget;
  history_.set_bytes(std::min(history_bytes_, history_share(budget)));
}

std::int64_t ModelDocument::held_bytes() const {
  return input_ ? model_view_bytes(*input_, layer_within(input_->model, layer_)) + history_.bytes() : 0;
}

std::optional<std::string> ModelDocument::adopt(std::shared_ptr<const ModelInput> next, std::uint64_t revision,
                                                std::shared_ptr<const Model> resolved, bool in_frame) {
  ModelShown job;
  job.input = next;
  job.resolved = std::move(resolved);
  job.layer = layer_within(next->model, layer_);
  std::int64_t parameters = parameters_;
  try {
    check_tokens(next->model, next->tokens);  // before the budget, which counts them
    if (std::optional<std::string> refused =
            model_view_refusal(*next, job.layer, budget_, held_beside(), history_.bytes()))
      return refused;
    if (!job.resolved) {  // a new shape or seed: checked, counted and drawn again
      job.resolved = std::make_shared<const Model>(resolve_model(next->model));
      parameters = parameter_count(next->model);
    }
    if (in_frame || model_work(*job.resolved, parameters, static_cast<int>(next->tokens.size())) < kModelBackgroundWork)
      job = forward_pass(job);  // here, so that a refusal changes nothing
  } catch (const InputError& e) {
    return std::string(e.what());
  } catch (const std::bad_alloc&) {
    return std::string("the model does not fit in memory");
  }
  // A view may still read the state this one replaces until the next poll().
  ModelShown replaced;
  replaced.input = input_;
  replaced.resolved = resolved_;
  results_.retire(std::move(replaced));
  input_ = std::move(next);
  resolved_ = job.resolved;
  parameters_ = parameters;
  revision_ = revision;
  job.ticket = results_.next_ticket();
  if (job.trace) results_.show(std::move(job));
  else results_.submit(std::move(job));
  return std::nullopt;
}

std::optional<std::string> ModelDocument::open(ModelInput input, std::filesystem::path path) {
  const std::uint64_t revision = history_.next_revision();
  // In the frame: the views never show a forward pass of the model open before.
  std::optional<std::string> failed =
      adopt(std::make_shared<const ModelInput>(std::move(input)), revision, nullptr, true);
  if (failed) return failed;
  history_.clear();
  stamp_ = file_stamp(path);
  path_ = std::move(path);
  recovered_from_.clear();
  saved_revision_ = revision;
  return std::nullopt;
}

std::optional<std::string> ModelDocument::edit(const std::function<void(ModelInput&)>& change, unsigned gesture) {
  auto next = std::make_shared<ModelInput>(*input_);
  try {
    change(*next);  // a shape edit checks its own values (set_layer_count)
  } catch (const InputError& e) {
    return "Not applied: " + std::string(e.what());
  }
  return replace(std::move(next), nullptr, gesture);
}

std::optional<std::string> ModelDocument::edit_tokens(std::vector<std::string> tokens, unsigned gesture) {
  auto next = std::make_shared<ModelInput>(ModelInput{input_->model, std::move(tokens)});
  return replace(std::move(next), resolved_, gesture);
}

std::optional<std::string> ModelDocument::edit_weight(const WeightSlot& slot, const Matrix& value, unsigned gesture) {
  auto next = std::make_shared<ModelInput>(*input_);
  auto resolved = std::make_shared<Model>(*resolved_);
  SharedMatrix& drawn = slot(*resolved);
  if (!drawn || drawn->rows() != value.rows() || drawn->cols() != value.cols())
    return std::string("Not applied: the weight's shape is not the model's");  // an editor of an older shape
  try {
    check_values(value, weight_field(*resolved, &drawn));
  } catch (const InputError& e) {
    return "Not applied: " + std::string(e.what());
  }
  slot(next->model) = value;
  drawn = value;  // every other weight as drawn before: the seed and the shapes are unchanged
  return replace(std::move(next), std::move(resolved), gesture);
}

std::optional<std::string> ModelDocument::replace(std::shared_ptr<const ModelInput> next,
                                                  std::shared_ptr<const Model> resolved, unsigned gesture) {
  std::shared_ptr<const ModelInput> replaced = input_;
  const std::uint64_t was = revision_;
  std::optional<std::string> failed = adopt(std::move(next), history_.next_revision(), std::move(resolved));
  if (failed) return "Not applied: " + *failed;
  history_.record({std::move(replaced), was}, gesture);
  return std::nullopt;
}

bool ModelDocument::undo() {
  std::optional<BasicRevision<ModelInput>> r = history_.undo({input_, revision_});
  if (!r) return false;
  // A state that was valid once is valid again, unless memory ran out: then the history steps back too.
  if (!adopt(r->document, r->revision)) return true;
  history_.redo(std::move(*r));
  return false;
}

bool ModelDocument::redo() {
  std::optional<BasicRevision<ModelInput>> r = history_.redo({input_, revision_});
  if (!r) return false;
  if (!adopt(r->document, r->revision)) return true;
  history_.undo(std::move(*r));
  return false;
}

std::optional<std::string> ModelDocument::show_layer(int layer) {
  if (!loaded()) return std::nullopt;
  layer = layer_within(model(), layer);
  if (layer == layer_within(model(), layer_)) return std::nullopt;
  // Layers may differ in their heads: the budget is counted again for this one.
  if (std::optional<std::string> refused = model_view_refusal(*input_, layer, budget_, held_beside(), history_.bytes()))
    return refused;
  layer_ = layer;
  ModelShown job;
  job.input = input_;
  job.resolved = resolved_;
  job.layer = layer;
  job.ticket = results_.next_ticket();
  if (model_work(*resolved_, parameters_, static_cast<int>(input_->tokens.size())) >= kModelBackgroundWork) {
    results_.submit(std::move(job));
    return std::nullopt;
  }
  try {
    results_.show(forward_pass(job));
  } catch (const std::bad_alloc&) {
    return std::string("the model does not fit in memory");
  }
  return std::nullopt;
}

void ModelDocument::mark_saved(std::filesystem::path path) {
  stamp_ = file_stamp(path);
  path_ = std::move(path);
  recovered_from_.clear();
  saved_revision_ = revision_;
}

}  // namespace attn::ui
