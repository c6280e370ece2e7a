#include "core/io/checkpoint_model.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <numeric>
#include <type_traits>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/io/converted_folder.h"
#include "core/io/hub_cache.h"
#include "core/io/tokenizer_json.h"
#include "core/kv_tradeoff.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

// Rows of the unembedding converted at a time: 4,096 x 896 numbers are 28 MiB beside the logits, one block on each
// of at most kUnembeddingThreads threads.
constexpr int kUnembeddingRows = 4096;
constexpr int kUnembeddingThreads = 4;

// Each tensor the model reads, with the shape the config gives it.
struct ExpectedTensor {
  std::string name;
  std::vector<std::uint64_t> shape;
};
using Expected = std::vector<ExpectedTensor>;
using U = std::uint64_t;

// A tensor of a layer: its name and shape, whether it is an nn.Linear weight (stored (out, in), the lab's x W wants it
// transposed), and where its float64 copy goes. One table serves both the check at open and the read of a layer.
struct LayerTensor {
  std::string name;
  std::vector<U> shape;
  bool linear;
  std::function<void(ModelLayer&, Matrix)> put;
};

// Sets one weight of a layer.
template <typename Part>
std::function<void(ModelLayer&, Matrix)> into(SharedMatrix Part::*slot) {
  return [slot](ModelLayer& layer, Matrix m) {
    if constexpr (std::is_same_v<Part, Weights>) layer.weights.*slot = std::move(m);
    else layer.own.*slot = std::move(m);
  };
}

// Conv1D's c_attn (in, 3E) or its bias (1, 3E): q | k | v side by side, into the three slots.
std::function<void(ModelLayer&, Matrix)> split_qkv(SharedMatrix Weights::*q, SharedMatrix Weights::*k,
                                                   SharedMatrix Weights::*v) {
  return [q, k, v](ModelLayer& layer, Matrix m) {
    const Eigen::Index E = m.cols() / 3;
    layer.weights.*q = Matrix(m.leftCols(E));
    layer.weights.*k = Matrix(m.middleCols(E, E));
    layer.weights.*v = Matrix(m.rightCols(E));
  };
}

std::vector<LayerTensor> gpt2_layer_tensors(const CheckpointConfig& c, const std::string& prefix, int l) {
  const U E = U(c.d_model), F = U(c.d_ff);
  const std::string h = prefix + "h." + std::to_string(l) + ".";
  return {{h + "ln_1.weight", {E}, false, into(&LayerWeights::ln1_gain)},
          {h + "ln_1.bias", {E}, false, into(&LayerWeights::ln1_bias)},
          {h + "ln_2.weight", {E}, false, into(&LayerWeights::ln2_gain)},
          {h + "ln_2.bias", {E}, false, into(&LayerWeights::ln2_bias)},
          {h + "attn.c_attn.weight", {E, 3 * E}, false, split_qkv(&Weights::W_Q, &Weights::W_K, &Weights::W_V)},
          {h + "attn.c_attn.bias", {3 * E}, false, split_qkv(&Weights::b_Q, &Weights::b_K, &Weights::b_V)},
          {h + "attn.c_proj.weight", {E, E}, false, into(&Weights::W_O)},
          {h + "attn.c_proj.bias", {E}, false, into(&Weights::b_O)},
          {h + "mlp.c_fc.weight", {E, F}, false, into(&LayerWeights::W_1)},
          {h + "mlp.c_fc.bias", {F}, false, into(&LayerWeights::b_1)},
          {h + "mlp.c_proj.weight", {F, E}, false, into(&LayerWeights::W_2)},
          {h + "mlp.c_proj.bias", {E}, false, into(&LayerWeights::b_2)}};
}

bool has_qkv_bias(const CheckpointConfig& c) { return c.family == ModelFamily::Qwen2 || c.attention_bias; }

std::vector<LayerTensor> llama_layer_tensors(const CheckpointConfig& c, int l) {
  const U D = U(c.d_model), F = U(c.d_ff), Q = U(c.heads) * U(c.head_dim), KV = U(c.kv_heads) * U(c.head_dim);
  const std::string at = "model.layers." + std::to_string(l) + ".", attn = at + "self_attn.";
  std::vector<LayerTensor> t{{at + "input_layernorm.weight", {D}, false, into(&LayerWeights::ln1_gain)},
                             {at + "post_attention_layernorm.weight", {D}, false, into(&LayerWeights::ln2_gain)},
                             {attn + "q_proj.weight", {Q, D}, true, into(&Weights::W_Q)},
                             {attn + "k_proj.weight", {KV, D}, true, into(&Weights::W_K)},
                             {attn + "v_proj.weight", {KV, D}, true, into(&Weights::W_V)},
                             {attn + "o_proj.weight", {D, Q}, true, into(&Weights::W_O)},
                             {at + "mlp.gate_proj.weight", {F, D}, true, into(&LayerWeights::W_1)},
                             {at + "mlp.up_proj.weight", {F, D}, true, into(&LayerWeights::W_3)},
                             {at + "mlp.down_proj.weight", {D, F}, true, into(&LayerWeights::W_2)}};
  if (has_qkv_bias(c)) {
    t.push_back({attn + "q_proj.bias", {Q}, false, into(&Weights::b_Q)});
    t.push_back({attn + "k_proj.bias", {KV}, false, into(&Weights::b_K)});
    t.push_back({attn + "v_proj.bias", {KV}, false, into(&Weights::b_V)});
  }
  if (c.attention_bias) t.push_back({attn + "o_proj.bias", {D}, false, into(&Weights::b_O)});
  return t;
}

std::vector<LayerTensor> layer_tensors(const CheckpointConfig& c, const std::string& prefix, int l) {
  return c.family == ModelFamily::Gpt2 ? gpt2_layer_tensors(c, prefix, l) : llama_layer_tensors(c, l);
}

// Every tensor the model reads: the embedding, positions and final norm, each layer's, and lm_head when untied.
Expected model_tensors(const CheckpointConfig& c, const CheckpointNames& n) {
  const U E = U(c.d_model);
  Expected e{{n.embedding, {U(c.vocab), E}}};
  if (c.family == ModelFamily::Gpt2)
    e.insert(e.end(), {{n.prefix + "wpe.weight", {U(c.max_positions), E}},
                       {n.prefix + "ln_f.weight", {E}},
                       {n.prefix + "ln_f.bias", {E}}});
  else e.push_back({"model.norm.weight", {E}});
  for (int l = 0; l < c.layers; ++l)
    for (const LayerTensor& t : layer_tensors(c, n.prefix, l)) e.push_back({t.name, t.shape});
  if (!n.lm_head.empty()) e.push_back({n.lm_head, {U(c.vocab), E}});
  return e;
}

// GPT-2's names come with or without "transformer." (GPT2Model's files and GPT2LMHeadModel's).
CheckpointNames find_names(const CheckpointConfig& c, const CheckpointWeights& w) {
  CheckpointNames n;
  if (c.family == ModelFamily::Gpt2)
    n.prefix = !w.find("wte.weight") && w.find("transformer.wte.weight") ? "transformer." : "";
  else n.prefix = "model.";
  n.embedding = n.prefix + (c.family == ModelFamily::Gpt2 ? "wte.weight" : "embed_tokens.weight");
  if (!c.tie_word_embeddings) n.lm_head = "lm_head.weight";  // required then, as transformers ties otherwise
  return n;
}

// Where a missing tensor was looked for: the index when there is one.
std::string weights_label(const CheckpointWeights& w) {
  return w.files().size() == 1 ? w.files().front()->label() : std::string(kWeightsIndexFile);
}

// `source`: where the shapes come from, as messages name it (config.json, or model.json for a converted folder).
void check_tensors(const CheckpointWeights& w, const Expected& expected, const std::string& source) {
  for (const ExpectedTensor& x : expected) {
    const FoundTensor f = w.find(x.name);
    if (!f)
      throw InputError(tensor_place(weights_label(w), x.name),
                       "missing (the config's model reads it, shape " + shape_text(x.shape) + ")");
    const StoredTensor& t = *f.tensor;
    if (t.shape != x.shape)
      throw InputError(tensor_place(f.file->label(), x.name), "expected shape " + shape_text(x.shape) + " from " +
                                                                  source + " but found " + shape_text(t.shape));
    if (!is_readable_dtype(t.dtype))
      throw InputError(tensor_place(f.file->label(), x.name),
                       "dtype " + escaped_text(t.dtype) + " is not one the lab reads (F64, F32, F16 or BF16)");
  }
}

// One layer's attention, as a scenario would configure it.
AttentionConfig layer_attention(const CheckpointConfig& c, int l) {
  AttentionConfig a;
  a.heads = c.heads;
  a.head_dim = c.head_dim;
  a.kv_heads = c.kv_heads;
  a.variant = c.kv_heads == c.heads ? Variant::Mha : c.kv_heads == 1 ? Variant::Mqa : Variant::Gqa;
  a.mask = MaskKind::Causal;
  if (c.sliding_window && l >= c.first_window_layer) {
    a.mask = MaskKind::SlidingWindow;
    // A window past the longest text the lab runs sees every earlier key of it: causal, whatever its width.
    a.window = std::min(*c.sliding_window, limits::kMaxTokens);
  }
  a.output_projection = true;
  a.scale = c.scale_attention;
  if (c.family == ModelFamily::Gpt2) {
    a.qkv_bias = a.output_bias = true;
    return a;
  }
  a.qkv_bias = has_qkv_bias(c);
  a.output_bias = c.attention_bias;
  a.positions = Positions::Rope;
  a.rope_base = c.rope_theta;
  a.rope_pairing = RopePairing::RotateHalf;
  a.rope_scaling = c.llama3;
  return a;
}

// A converted layer's key and value weights as stored: each the attention uses, biases one-dimensional.
std::vector<std::pair<WeightId, std::vector<U>>> converted_shapes(const AttentionConfig& a, int d_model) {
  std::vector<std::pair<WeightId, std::vector<U>>> shapes;
  for (const WeightId id : kKeyValueWeights) {
    if (!weight_used(id, a)) continue;
    const WeightShape w = weight_shape(id, a, d_model);
    if (is_bias(id)) shapes.push_back({id, {U(w.cols)}});
    else shapes.push_back({id, {U(w.rows), U(w.cols)}});
  }
  return shapes;
}

std::string_view layers_key(const CheckpointConfig& c) {
  return c.family == ModelFamily::Gpt2 ? "n_layer" : "num_hidden_layers";
}

// The sizes the config gives, within what the engine computes, before a tensor name is made from them: a 100-byte
// config could otherwise ask for the names of a billion layers. Messages name config.json's keys.
void check_engine_limits(const CheckpointConfig& c, const CheckpointWeights& w) {
  const std::size_t tensors = w.names().size();
  if (static_cast<std::size_t>(c.layers) > tensors)
    throw InputError(std::string(layers_key(c)), thousands(std::uint64_t(c.layers)) +
                                                     " layers, but the weights hold only " +
                                                     thousands(std::uint64_t(tensors)) + " tensors");
  if (c.d_model > limits::kMaxModelDim)
    throw InputError(c.family == ModelFamily::Gpt2 ? "n_embd" : "hidden_size",
                     thousands(std::uint64_t(c.d_model)) + " is wider than the " +
                         thousands(std::uint64_t(limits::kMaxModelDim)) + " the lab computes");
  for (const int l : {0, c.layers - 1}) {  // every layer is one of these two (the window starts at one of them)
    try {
      check_config(layer_attention(c, l));
    } catch (const InputError& e) {
      throw InputError("", "layer " + std::to_string(l) + "'s attention as it describes it: " + e.what());
    }
  }
}

Model model_of(const CheckpointConfig& c, std::string name) {
  Model m;
  m.name = std::move(name);
  m.d_model = c.d_model;
  m.max_positions = c.max_positions;
  m.norm = Norm::Pre;
  m.norm_eps = c.norm_eps;
  if (c.family == ModelFamily::Gpt2) {
    m.positions = Positions::Learned;
    m.ffn = {FfnKind::GeluTanh, c.d_ff};
  } else {
    const AttentionConfig a = layer_attention(c, 0);  // every layer turns as the first
    m.positions = a.positions;
    m.rope_base = a.rope_base;
    m.rope_pairing = a.rope_pairing;
    m.rope_scaling = a.rope_scaling;
    m.norm_function = NormFunction::RmsNorm;
    m.ffn = {FfnKind::Swiglu, c.d_ff};
  }
  for (int l = 0; l < c.layers; ++l) m.layers.push_back({layer_attention(c, l), {}, {}});
  return m;
}

}  // namespace

void check_checkpoint_limits(const CheckpointConfig& c, const CheckpointWeights& w) {
  try {
    check_engine_limits(c, w);
  } catch (const InputError& e) {
    throw in_file("config.json", e);
  }
}

std::shared_ptr<const CheckpointModel> CheckpointModel::open(const std::filesystem::path& folder, std::int64_t budget) {
  std::shared_ptr<CheckpointModel> m(new CheckpointModel());
  const bool converted = is_converted_folder(folder);
  // Where the configuration's messages point: config.json, or the source's config inside model.json.
  const auto config_problem = [converted](const InputError& e) {
    return converted ? in_file(std::string(kConvertedModelFile), e, "source.config") : in_file("config.json", e);
  };
  std::vector<KvConversion> conversions;
  if (converted) {
    ConvertedDescription d = read_converted_description(folder, budget);
    m->config_ = d.config;
    m->config_text_ = std::move(d.config_text);
    m->source_name_ = std::move(d.source_name);
    conversions = std::move(d.layers);
  } else {
    m->config_text_ = read_checkpoint_config_text(folder, budget);
    try {
      m->config_ = parse_checkpoint_config(m->config_text_);
    } catch (const InputError& e) {
      throw config_problem(e);
    }
  }
  if (m->config_.mlp_bias)
    throw config_problem(
        InputError("mlp_bias", "true, but the lab's SwiGLU has no biases (no model it reads has them)"));
  m->weights_ = CheckpointWeights::open(folder, budget);
  try {
    check_engine_limits(m->config_, m->weights_);
  } catch (const InputError& e) {
    throw config_problem(e);
  }
  m->names_ = find_names(m->config_, m->weights_);
  check_tensors(m->weights_, model_tensors(m->config_, m->names_), converted ? "model.json" : "config.json");
  m->tokenizer_ = read_tokenizer(folder, budget);
  m->model_ = model_of(m->config_, model_folder_name(folder));
  m->model_.tied_unembedding = m->names_.lm_head.empty();
  if (!converted) m->source_name_ = m->model_.name;
  m->apply_conversions(conversions);
  return m;
}

void CheckpointModel::apply_conversions(const std::vector<KvConversion>& conversions) {
  conversions_.assign(model_.layers.size(), std::nullopt);
  for (std::size_t i = 0; i < conversions.size(); ++i) {
    const KvConversion& c = conversions[i];
    try {
      check_kv_conversion(model_, c);
    } catch (const InputError& e) {
      // Said of the file's key, not the command line's option (--kv-heads, --latent-dim).
      const std::string what = e.what(), key = c.to == KvTarget::Mla ? "latent_dim" : "kv_heads";
      throw in_file(std::string(kConvertedModelFile),
                    InputError("converted_layers[" + std::to_string(i) + "]." + key,
                               e.field().empty() ? what : what.substr(e.field().size() + 2)));
    }
    const auto l = static_cast<std::size_t>(c.layers.front());
    model_.layers[l].attention = converted_attention(model_.layers[l].attention, c);
    conversions_[l] = c;
  }
  Expected expected;
  for (std::size_t l = 0; l < conversions_.size(); ++l)
    if (conversions_[l])
      for (const auto& [id, shape] : converted_shapes(model_.layers[l].attention, model_.d_model))
        expected.push_back({converted_tensor_name(static_cast<int>(l), id), shape});
  check_tensors(weights_, expected, "model.json");
  // A converted weight model.json does not account for (its layer's entry removed, a weight another form would use)
  // would be left unread: the model run would not be the one converted.
  for (const std::string& name : weights_.names())
    if (is_converted_tensor_name(name) &&
        std::ranges::none_of(expected, [&](const ExpectedTensor& x) { return x.name == name; }))
      throw InputError(tensor_place(weights_label(weights_), name),
                       "a converted layer's weight that model.json's converted_layers does not account for");
}

std::shared_ptr<const CheckpointModel> CheckpointModel::converted(const CheckpointModel& source, const KvConversion& c,
                                                                  std::int64_t budget, const HeldBeside& beside) {
  const auto layers = std::ssize(source.model_.layers);
  if (c.layers.empty()) throw InputError("layers", "expected at least one layer");
  for (const int l : c.layers)
    if (l < 0 || l >= layers)
      throw InputError("layers", "layer " + std::to_string(l) + " is not one of " + source.name() + "'s " +
                                     plural(layers, "layer") + " (0-" + std::to_string(layers - 1) + ")");
  try {
    check_kv_conversion(source.model_, c);
  } catch (const InputError& e) {
    // Said of the conversion's key (as a Real model file writes it), not the command line's option.
    const std::string what = e.what(), key = c.to == KvTarget::Mla ? "latent_dim" : "kv_heads";
    throw InputError(e.field() == "--layers" ? "layers" : key,
                     e.field().empty() ? what : what.substr(e.field().size() + 2));
  }
  const Model target = converted_model(source.model_, c);
  // The weights made, and while a layer is converted its source weights and (mla) its SVD.
  const KvConversion first = layer_conversion(c, c.layers.front());
  check_memory_budget(
      converted_attention_bytes(target, c) + source.layer_bytes() + tradeoff_svd_bytes(source.model_, {first}), budget,
      "converting " + source.name() + " to " + tradeoff_point_name(c),
      c.to == KvTarget::Mla ? "a narrower latent or fewer layers" : "fewer layers", beside);
  std::shared_ptr<CheckpointModel> m(new CheckpointModel(source));
  m->held_ = std::make_shared<const ConvertedAttention>(convert_attention(source, source.model_, c));
  m->model_ = target;
  m->model_.name = source.name() + " as " + tradeoff_point_name(c);
  // A converted folder converted again was made from that folder's model, not from its source.
  if (source.converted()) m->source_name_ = source.name();
  if (std::ssize(c.layers) < layers) m->model_.name += " on " + plural(std::ssize(c.layers), "layer");
  for (const int l : c.layers) m->conversions_[static_cast<std::size_t>(l)] = layer_conversion(c, l);
  return m;
}

std::int64_t CheckpointModel::held_bytes() const {
  std::int64_t bytes = 0;
  if (held_)
    for (const std::optional<Weights>& w : held_->weights)
      if (w)
        for (const WeightId id : kKeyValueWeights)
          if (const SharedMatrix& m = weight_slot(*w, id)) bytes += 8 * static_cast<std::int64_t>(m->size());
  return bytes;
}

bool CheckpointModel::converted() const {
  return std::ranges::any_of(conversions_, [](const auto& c) { return c.has_value(); });
}

ModelShape CheckpointModel::cache_shape(std::string name, std::string source) const {
  ModelShape shape = kv_shape(config_, std::move(name), std::move(source));
  if (!converted()) return shape;
  if (!std::ranges::all_of(conversions_, [&](const auto& c) {
        return c && c->to == conversions_[0]->to && c->kv_heads == conversions_[0]->kv_heads &&
               c->latent_dim == conversions_[0]->latent_dim;
      }))
    throw InputError("",
                     "some layers converted and some not, or converted differently: the cache views draw one "
                     "kind of layer");
  const AttentionConfig& a = model_.layers.front().attention;
  shape.variant = a.variant;
  shape.kv_heads = a.variant == Variant::Mla ? a.heads : a.kv_heads;
  shape.latent_dim = a.variant == Variant::Mla ? a.latent_dim : 0;
  return shape;
}

std::int64_t CheckpointModel::unembedding_bytes(std::int64_t d_model) {
  return std::int64_t(8) * kUnembeddingRows * kUnembeddingThreads * d_model;
}

std::string CheckpointModel::piece(int id) const {
  return id < tokenizer_.vocab_size() ? shown_piece(tokenizer_, id) : "<id " + std::to_string(id) + ">";
}

std::int64_t CheckpointModel::layer_bytes() const {
  const std::int64_t D = config_.d_model, F = config_.d_ff, Q = std::int64_t(config_.heads) * config_.head_dim,
                     KV = std::int64_t(config_.kv_heads) * config_.head_dim;
  // The projections and the FFN, and the one matrix a transpose or split copies at a time.
  const std::int64_t numbers = D * (2 * Q + 2 * KV) + 3 * D * F + 4 * D + Q + 2 * KV;
  // A converted layer's own key and value weights, read beside the source's.
  std::int64_t converted = 0;
  for (std::size_t l = 0; l < conversions_.size(); ++l) {
    if (!conversions_[l]) continue;
    std::int64_t layer = 0;
    for (const auto& [id, shape] : converted_shapes(model_.layers[l].attention, model_.d_model))
      layer += std::accumulate(shape.begin(), shape.end(), std::int64_t{1},
                               [](std::int64_t n, U d) { return n * static_cast<std::int64_t>(d); });
    converted = std::max(converted, layer);
  }
  return 8 * (numbers + converted + std::max(D * F, D * 3 * D));
}

const SafetensorsFile& CheckpointModel::file_of(const std::string& name) const { return *weights_.find(name).file; }
const StoredTensor& CheckpointModel::tensor(const std::string& name) const { return *weights_.find(name).tensor; }

Matrix CheckpointModel::read(const std::string& name) const {
  const StoredTensor& t = tensor(name);
  Matrix m(t.shape.size() == 1 ? 1 : static_cast<Eigen::Index>(t.shape[0]), static_cast<Eigen::Index>(t.shape.back()));
  file_of(name).read(t, {m.data(), static_cast<std::size_t>(m.size())});
  // The engine's bound on a value, named as the file names the tensor (not as the engine's W_K): a float32 reads up
  // to 3.4e38.
  check_values(m, tensor_place(file_of(name).label(), name));
  return m;
}

Matrix CheckpointModel::read_linear(const std::string& name) const {
  const Matrix stored = read(name);  // (out, in)
  Matrix w(stored.cols(), stored.rows());
  // Tile by tile: a row of the result is a column of the stored matrix, and a whole column at a time would read
  // a new cache line for every number (a third of Qwen2.5-0.5B's run went to the plain transpose).
  constexpr Eigen::Index kTile = 64;
  for (Eigen::Index r = 0; r < stored.rows(); r += kTile)
    for (Eigen::Index c = 0; c < stored.cols(); c += kTile) {
      const Eigen::Index rows = std::min(kTile, stored.rows() - r), cols = std::min(kTile, stored.cols() - c);
      w.block(c, r, cols, rows) = stored.block(r, c, rows, cols).transpose();
    }
  return w;
}

ModelLayer CheckpointModel::layer(int l) const {
  ModelLayer layer{model_.layers[static_cast<std::size_t>(l)].attention, {}, {}};
  for (LayerTensor& t : layer_tensors(config_, names_.prefix, l))
    t.put(layer, t.linear ? read_linear(t.name) : read(t.name));
  const auto i = static_cast<std::size_t>(l);
  if (!conversions_[i]) return layer;
  // A converted layer's keys and values are its own; the source's are left out (mla has no W_K, W_V).
  for (const WeightId id : kKeyValueWeights) weight_slot(layer.weights, id) = SharedMatrix{};
  if (held_ && held_->weights[i]) {
    for (const WeightId id : kKeyValueWeights) weight_slot(layer.weights, id) = weight_slot(*held_->weights[i], id);
    return layer;
  }
  for (const auto& [id, shape] : converted_shapes(layer.attention, model_.d_model)) {
    Matrix m = read(converted_tensor_name(l, id));
    weight_slot(layer.weights, id) = std::move(m);
  }
  return layer;
}

Matrix CheckpointModel::embedding_rows(const std::vector<int>& ids) const {
  const std::string& name = names_.embedding;
  const StoredTensor& t = tensor(name);
  Matrix rows(static_cast<Eigen::Index>(ids.size()), config_.d_model);
  for (std::size_t i = 0; i < ids.size(); ++i)
    file_of(name).read_rows(t, static_cast<std::uint64_t>(ids[i]), 1,
                            {rows.row(static_cast<Eigen::Index>(i)).data(), static_cast<std::size_t>(rows.cols())});
  return rows;
}

Matrix CheckpointModel::learned_positions(int n) const {
  const std::string name = names_.prefix + "wpe.weight";
  Matrix rows(n, config_.d_model);
  file_of(name).read_rows(tensor(name), 0, static_cast<std::uint64_t>(n),
                          {rows.data(), static_cast<std::size_t>(rows.size())});
  return rows;
}

SharedMatrix CheckpointModel::final_gain() const {
  return read(config_.family == ModelFamily::Gpt2 ? names_.prefix + "ln_f.weight" : "model.norm.weight");
}

SharedMatrix CheckpointModel::final_bias() const {
  if (config_.family != ModelFamily::Gpt2) return {};
  return read(names_.prefix + "ln_f.bias");
}

Matrix CheckpointModel::logits(const Matrix& final) const {
  const std::string& name = names_.lm_head.empty() ? names_.embedding : names_.lm_head;
  const StoredTensor& t = tensor(name);
  const Eigen::Index vocab = config_.vocab, blocks = (vocab + kUnembeddingRows - 1) / kUnembeddingRows;
  Matrix logits(final.rows(), vocab);  // (N, vocab)
  std::exception_ptr failed;
  // The largest product of a run at sentence length, on kUnembeddingThreads threads at most: each reads, converts
  // and multiplies its own blocks of the vocabulary's rows.
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) num_threads(std::min(omp_get_max_threads(), kUnembeddingThreads))
#endif
  for (Eigen::Index b = 0; b < blocks; ++b) {
    try {
      const Eigen::Index r = b * kUnembeddingRows, n = std::min<Eigen::Index>(kUnembeddingRows, vocab - r);
      Matrix rows(n, config_.d_model);  // the unembedding's rows r .. r + n - 1
      file_of(name).read_rows(t, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(n),
                              {rows.data(), static_cast<std::size_t>(rows.size())});
      logits.middleCols(r, n).noalias() = final * rows.transpose();
    } catch (...) {  // an exception may not leave a parallel loop: the first is thrown after it
#if defined(_OPENMP)
#pragma omp critical(checkpoint_logits)
#endif
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return logits;
}

}  // namespace attn
