#include "ui/logic/model_document.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/text_format.h"
#include "core/validate.h"

namespace attn::ui {
namespace {

std::int64_t bytes_of(const std::optional<Matrix>& m) { return m ? std::int64_t(m->size()) * 8 : 0; }

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

ModelDocument::ModelDocument(std::int64_t history_bytes) : history_(model_input_bytes, history_bytes) {}

std::optional<std::string> ModelDocument::adopt(std::shared_ptr<const ModelInput> next, std::uint64_t revision,
                                                std::shared_ptr<const Model> resolved) {
  const auto start = std::chrono::steady_clock::now();
  // A view may still read the state this one replaces until the frame ends (release_retired).
  retired_.push_back({input_, resolved_, trace_});
  try {
    check_model(next->model);
    if (next->tokens.empty()) throw InputError("tokens", "expected at least one token but found none");
    if (resolved) check_model(next->model);
    else resolved = std::make_shared<const Model>(resolve_model(next->model));
    auto trace = std::make_shared<const ModelTrace>(run_model(*resolved, next->tokens));
    parameters_ = parameter_count(next->model);
    resolved_ = std::move(resolved);
    trace_ = std::move(trace);
  } catch (const InputError& e) {
    return std::string(e.what());
  } catch (const std::bad_alloc&) {
    return std::string("the model does not fit in memory");
  }
  input_ = std::move(next);
  revision_ = revision;
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::nullopt;
}

std::optional<std::string> ModelDocument::open(ModelInput input, std::filesystem::path path) {
  const std::uint64_t revision = history_.next_revision();
  std::optional<std::string> failed = adopt(std::make_shared<const ModelInput>(std::move(input)), revision);
  if (failed) return failed;
  history_.clear();
  path_ = std::move(path);
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

std::optional<std::string> ModelDocument::edit_weight(const WeightSlot& slot, const Matrix& value, unsigned gesture) {
  auto next = std::make_shared<ModelInput>(*input_);
  auto resolved = std::make_shared<Model>(*resolved_);
  slot(next->model) = value;
  slot(*resolved) = value;  // every other weight as drawn before: the seed and the shapes are unchanged
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
  if (r) adopt(r->document, r->revision);  // a state that was computed once computes again
  return r.has_value();
}

bool ModelDocument::redo() {
  std::optional<BasicRevision<ModelInput>> r = history_.redo({input_, revision_});
  if (r) adopt(r->document, r->revision);
  return r.has_value();
}

void ModelDocument::mark_saved(std::filesystem::path path) {
  path_ = std::move(path);
  saved_revision_ = revision_;
}

}  // namespace attn::ui
