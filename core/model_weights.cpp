// A model's weights: which it uses, their shapes, the checks of a file's and the draws from the seed.
#include <cmath>
#include <set>

#include "core/init.h"
#include "core/model.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

// A weight of the model or of a layer: where it lives, its shape and what it starts as when the file lacks it.
struct Part {
  std::string field;  // "layers[1].W_1", "embedding"
  SharedMatrix* slot;
  bool used;
  int rows, cols;
  std::string rows_meaning, cols_meaning;
  enum class Start { Seeded, Ones, Zeros } start = Start::Seeded;
  std::uint64_t seed = 0;
  SeedStream stream = SeedStream::Embeddings;
  double scale = 1.0;  // seeded values times this: 1/sqrt(the input width)
};

std::uint64_t layer_seed(std::uint64_t seed, int layer) {
  return seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(layer + 1));
}

double fan_in(int width) { return 1.0 / std::sqrt(static_cast<double>(width)); }

std::vector<Part> model_parts(Model& m) {
  const int d = m.d_model, v = static_cast<int>(m.vocab.size());
  const std::string vocab = "vocab", dm = "d_model";
  const bool pre = m.norm == Norm::Pre, layer_norm = m.norm_function == NormFunction::LayerNorm;
  return {{"embedding", &m.embedding, true, v, d, vocab, dm, Part::Start::Seeded, m.seed, SeedStream::Embeddings},
          {"W_P", &m.W_P, m.positions == Positions::Learned, m.max_positions, d, "max_positions", dm,
           Part::Start::Seeded, m.seed, SeedStream::W_P},
          {"final_gain", &m.final_gain, pre, 1, d, "one row", dm, Part::Start::Ones},
          {"final_bias", &m.final_bias, pre && layer_norm, 1, d, "one row", dm, Part::Start::Zeros},
          {"unembedding", &m.unembedding, !m.tied_unembedding, d, v, dm, vocab, Part::Start::Seeded, m.seed,
           SeedStream::Unembedding, fan_in(d)}};
}

std::vector<Part> layer_parts(Model& m, int l) {
  LayerWeights& w = m.layers[static_cast<std::size_t>(l)].own;
  const std::string at = "layers[" + std::to_string(l) + "].weights.", dm = "d_model", ff = "d_ff", row = "one row";
  const int d = m.d_model, f = m.ffn.d_ff;
  const bool norm = m.norm != Norm::None, ffn = m.ffn.kind != FfnKind::None;
  const bool norm_bias = norm && m.norm_function == NormFunction::LayerNorm, biased = ffn_has_biases(m.ffn.kind);
  const std::uint64_t seed = layer_seed(m.seed, l);
  using S = Part::Start;
  return {{at + "ln1_gain", &w.ln1_gain, norm, 1, d, row, dm, S::Ones},
          {at + "ln1_bias", &w.ln1_bias, norm_bias, 1, d, row, dm, S::Zeros},
          {at + "ln2_gain", &w.ln2_gain, norm && ffn, 1, d, row, dm, S::Ones},
          {at + "ln2_bias", &w.ln2_bias, norm_bias && ffn, 1, d, row, dm, S::Zeros},
          {at + "W_1", &w.W_1, ffn, d, f, dm, ff, S::Seeded, seed, SeedStream::Ffn_W_1, fan_in(d)},
          {at + "b_1", &w.b_1, biased, 1, f, row, ff, S::Zeros},
          {at + "W_2", &w.W_2, ffn, f, d, ff, dm, S::Seeded, seed, SeedStream::Ffn_W_2, fan_in(std::max(f, 1))},
          {at + "b_2", &w.b_2, biased, 1, d, row, dm, S::Zeros},
          {at + "W_3", &w.W_3, m.ffn.kind == FfnKind::Swiglu, d, f, dm, ff, S::Seeded, seed, SeedStream::Ffn_W_3,
           fan_in(d)}};
}

std::vector<Part> all_parts(Model& m) {
  std::vector<Part> parts = model_parts(m);
  for (int l = 0; l < static_cast<int>(m.layers.size()); ++l)
    for (Part& p : layer_parts(m, l)) parts.push_back(std::move(p));
  return parts;
}

// The parts of a model that is only read through them (a check, a count): no copy of its weights.
std::vector<Part> read_parts(const Model& m) { return all_parts(const_cast<Model&>(m)); }

Matrix initial(const Part& p) {
  switch (p.start) {
    case Part::Start::Ones: return Matrix::Ones(p.rows, p.cols);
    case Part::Start::Zeros: return Matrix::Zero(p.rows, p.cols);
    case Part::Start::Seeded: break;
  }
  return seeded_matrix(p.seed, p.stream, p.rows, p.cols, p.scale);
}

// The layer's attention alone, as validate sees a scenario: n tokens of zeros.
Scenario attention_probe(const Model& m, int l, int n) {
  std::vector<std::string> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i));
  Scenario s = layer_scenario(m, l, tokens, Matrix::Zero(n, m.d_model));
  s.seed = layer_seed(m.seed, l);
  s.weight_scale = fan_in(m.d_model);
  return s;
}

void check_sizes(const Model& m) {
  check_vocab(m.vocab);
  check_range(m.d_model, 1, limits::kMaxModelDim, "d_model");
  check_range(m.max_positions, 1, limits::kMaxTokens, "max_positions");
  if (std::int64_t(m.max_positions) * m.d_model > limits::kMaxMatrixElements)
    throw InputError("max_positions", "max_positions x d_model = " + std::to_string(m.max_positions) + " x " +
                                          std::to_string(m.d_model) + " is more than the " +
                                          thousands(std::uint64_t(limits::kMaxMatrixElements)) +
                                          " numbers a stream may hold");
  if (std::int64_t(m.max_positions) * std::int64_t(m.vocab.size()) > limits::kMaxMatrixElements)
    throw InputError("max_positions", "max_positions x vocab = " + std::to_string(m.max_positions) + " x " +
                                          std::to_string(m.vocab.size()) + " logits is more than the " +
                                          thousands(std::uint64_t(limits::kMaxMatrixElements)) +
                                          " numbers a matrix may hold");
  check_range(static_cast<std::int64_t>(m.layers.size()), 1, limits::kMaxLayers, "layers");
  if (m.ffn.kind != FfnKind::None) check_range(m.ffn.d_ff, 1, limits::kMaxProjectedDim, "ffn.d_ff");
  if (!(m.norm_eps > 0.0 && m.norm_eps <= 1.0))  // also refuses NaN
    throw InputError("norm_eps", "expected a number in (0, 1] but found " + general_number(m.norm_eps));
}

// A weight drawn from the seed costs as much memory as a given one: the bound holds for both.
void check_part(const Part& p) {
  if (*p.slot && !p.used) throw InputError(p.field, "given, but this model does not use it");
  if (p.used && std::int64_t(p.rows) * p.cols > limits::kMaxMatrixElements)
    throw InputError(p.field, "would be " + std::to_string(p.rows) + " x " + std::to_string(p.cols) + " (" +
                                  p.rows_meaning + " by " + p.cols_meaning +
                                  ") = " + thousands(std::uint64_t(p.rows) * p.cols) + " numbers, more than the " +
                                  thousands(std::uint64_t(limits::kMaxMatrixElements)) + " a matrix may hold");
  if (!*p.slot) return;
  check_shape(**p.slot, p.field, p.rows, p.rows_meaning, p.cols, p.cols_meaning);
  check_values(**p.slot, p.field);
}

}  // namespace

void check_vocab(const std::vector<std::string>& vocab) {
  if (vocab.empty()) throw InputError("vocab", "expected at least one token but found none");
  check_range(static_cast<std::int64_t>(vocab.size()), 1, limits::kMaxVocab, "vocab");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const std::string field = "vocab[" + std::to_string(i) + "]";
    // Tokens are typed separated by spaces: one with a space (or none at all) could never be typed.
    if (vocab[i].empty() || vocab[i].find_first_of(" \t\n\r") != std::string::npos)
      throw InputError(field, "\"" + vocab[i] + "\" cannot be typed: a token is a non-empty word without spaces");
    check_label(vocab[i], field);  // run_model labels its tables with these
    if (!seen.insert(vocab[i]).second) throw InputError(field, "\"" + vocab[i] + "\" is already in the vocabulary");
  }
}

void check_model(const Model& m) {
  check_name(m.name, "name");
  check_description(m.description, "description");
  check_sizes(m);
  for (const Part& p : read_parts(m)) check_part(p);
  if (const std::int64_t n = parameter_count(m); n > limits::kMaxModelParameters)
    throw InputError("model", "its weights, given or drawn from the seed, would hold " + thousands(std::uint64_t(n)) +
                                  " numbers, more than the " + thousands(std::uint64_t(limits::kMaxModelParameters)) +
                                  " a model may hold");
  for (int l = 0; l < static_cast<int>(m.layers.size()); ++l) {
    try {
      validate(attention_probe(m, l, m.max_positions));
    } catch (const InputError& e) {
      throw within("layers[" + std::to_string(l) + "].", e);
    }
  }
}

std::string weight_field(const Model& m, const SharedMatrix* slot) {
  for (const Part& p : read_parts(m))
    if (p.slot == slot) return p.field;
  for (std::size_t l = 0; l < m.layers.size(); ++l)
    for (WeightId id : kAllWeights)
      if (&weight_slot(m.layers[l].weights, id) == slot)
        return "layers[" + std::to_string(l) + "].weights." + weight_name(id);
  return {};
}

std::int64_t parameter_count(const Model& m) {
  std::int64_t n = 0;
  for (const Part& p : read_parts(m))
    if (p.used) n += std::int64_t(p.rows) * p.cols;
  for (const ModelLayer& l : m.layers)
    for (WeightId id : kAllWeights)
      if (weight_used(id, l.attention)) {
        const WeightShape shape = weight_shape(id, l.attention, m.d_model);
        n += std::int64_t(shape.rows) * shape.cols;
      }
  return n;
}

std::vector<std::string> drop_unfit_model_weights(Model& m) {
  std::vector<std::string> notes;
  for (const Part& p : all_parts(m)) {
    if (!*p.slot) continue;
    const Matrix& w = **p.slot;
    if (!p.used) {
      notes.push_back(p.field + " is not used by this model any more; left out");
    } else if (w.rows() != p.rows || w.cols() != p.cols) {
      notes.push_back(p.field + " is " + std::to_string(w.rows()) + " x " + std::to_string(w.cols()) +
                      " but now needs " + std::to_string(p.rows) + " x " + std::to_string(p.cols) + " (" +
                      p.rows_meaning + " by " + p.cols_meaning + "); drawn from the seed instead");
    } else {
      continue;
    }
    p.slot->reset();
  }
  for (int l = 0; l < static_cast<int>(m.layers.size()); ++l) {
    Scenario probe = attention_probe(m, l, 1);
    for (std::string note : drop_unfit_weights(probe)) {
      // The layer's own seed is derived from the model's: the model's words, not its number.
      if (const auto at = note.find("drawn from seed "); at != std::string::npos)
        note.replace(at, note.find(" instead", at) - at, "drawn from the seed");
      notes.push_back("layers[" + std::to_string(l) + "]." + note);
    }
    m.layers[static_cast<std::size_t>(l)].weights = probe.weights;
  }
  return notes;
}

void set_layer_count(Model& m, int count) {
  check_range(count, 1, limits::kMaxLayers, "layers");
  if (m.layers.empty()) throw InputError("layers", "a model without layers has none to repeat");
  while (static_cast<int>(m.layers.size()) > count) m.layers.pop_back();
  while (static_cast<int>(m.layers.size()) < count) {
    ModelLayer layer;
    layer.attention = m.layers.back().attention;  // the same kind of attention, its weights drawn from the seed
    m.layers.push_back(layer);
  }
}

void set_model_positions(Model& m, Positions p) {
  m.positions = p;
  if (p != Positions::Rope) {  // the pairing and scaling are rope's
    m.rope_pairing = RopePairing::Interleaved;
    m.rope_scaling.reset();
  }
  for (ModelLayer& layer : m.layers) {  // absolute positions are added once, before the layers; rope turns inside
    layer.attention.positions = p == Positions::Rope ? Positions::Rope : Positions::None;
    layer.attention.rope_base = m.rope_base;
    layer.attention.rope_pairing = m.rope_pairing;
    layer.attention.rope_scaling = m.rope_scaling;
  }
}

void reseed_model(Model& m) {
  m.seed += 1;
  for (const Part& p : all_parts(m)) p.slot->reset();  // the parts around attention
  for (ModelLayer& layer : m.layers) layer.weights = {};
}

Model resolve_model(const Model& given) {
  check_model(given);
  Model m = given;
  for (const Part& p : all_parts(m)) {
    if (!p.used) p.slot->reset();
    else if (!*p.slot) *p.slot = initial(p);
  }
  for (int l = 0; l < static_cast<int>(m.layers.size()); ++l)
    m.layers[static_cast<std::size_t>(l)].weights = resolve_weights(attention_probe(m, l, 1));
  return m;
}

}  // namespace attn
