#include "core/model.h"

#include <limits>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "core/engine_entries.h"
#include "core/name_table.h"
#include "core/positions.h"
#include "core/product.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr NameTable<Norm, 3> kNorms{{{Norm::None, "none"}, {Norm::Pre, "pre"}, {Norm::Post, "post"}}};
constexpr NameTable<FfnKind, 5> kFfnKinds{{{FfnKind::None, "none"},
                                           {FfnKind::Relu, "relu"},
                                           {FfnKind::Gelu, "gelu"},
                                           {FfnKind::Swiglu, "swiglu"},
                                           {FfnKind::GeluTanh, "gelu_tanh"}}};
constexpr NameTable<NormFunction, 2> kNormFunctions{
    {{NormFunction::LayerNorm, "layer_norm"}, {NormFunction::RmsNorm, "rms_norm"}}};

// The feed-forward sublayer on x: its hidden activation and its output.
struct FfnResult {
  Matrix hidden;  // (N, d_ff)
  Matrix out;     // (N, d_model)
};
FfnResult feed_forward(FfnKind kind, const LayerWeights& w, const Matrix& x) {
  FfnResult f;
  const Matrix pre = product(x, *w.W_1);  // (N, d_ff)
  switch (kind) {
    case FfnKind::Relu: f.hidden = (pre.rowwise() + w.b_1->row(0)).cwiseMax(0.0); break;
    case FfnKind::Gelu:
      f.hidden = (pre.rowwise() + w.b_1->row(0)).unaryExpr([](double v) {
        return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      });
      break;
    case FfnKind::GeluTanh:
      f.hidden = (pre.rowwise() + w.b_1->row(0)).unaryExpr([](double v) {
        return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      });
      break;
    case FfnKind::Swiglu: {
      const Matrix silu = pre.unaryExpr([](double v) { return v / (1.0 + std::exp(-v)); });
      f.hidden = silu.cwiseProduct(product(x, *w.W_3));
      break;
    }
    case FfnKind::None: return f;
  }
  f.out = product(f.hidden, *w.W_2);
  if (kind != FfnKind::Swiglu) f.out.rowwise() += w.b_2->row(0);
  return f;
}

// The numbers a layer reads stay within what attention accepts (limits::kMaxAbsValue): weights that grow the
// stream from layer to layer without a norm are refused with where it happened, never run into Inf or NaN.
void check_stream(const Matrix& x, const std::string& where) {
  Eigen::Index r = 0, c = 0;
  double largest = HUGE_VAL;
  if (x.allFinite()) largest = x.cwiseAbs().maxCoeff(&r, &c);
  else  // where it first stops being a number
    for (r = 0; r < x.rows() && x.row(r).allFinite(); ++r) {
    }
  if (largest <= limits::kMaxAbsValue) return;
  if (largest == HUGE_VAL)
    for (c = 0; c < x.cols() && std::isfinite(x(r, c)); ++c) {
    }
  char reached[32];
  std::snprintf(reached, sizeof reached, "%.7g", largest == HUGE_VAL ? x(r, c) : largest);
  throw InputError(where, std::string("the residual stream reaches ") + reached + " (row " + std::to_string(r) +
                              ", column " + std::to_string(c) +
                              "), beyond the 1e12 attention accepts: these weights grow it without bound");
}

// Block means of an (n, n') matrix over at most side x side blocks (exactly the matrix when it is that small).
Matrix block_means(const Matrix& m, int side) {
  const Eigen::Index rows = std::min<Eigen::Index>(m.rows(), side), cols = std::min<Eigen::Index>(m.cols(), side);
  Matrix out(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    const Eigen::Index r0 = r * m.rows() / rows, r1 = (r + 1) * m.rows() / rows;
    for (Eigen::Index c = 0; c < cols; ++c) {
      const Eigen::Index c0 = c * m.cols() / cols, c1 = (c + 1) * m.cols() / cols;
      out(r, c) = m.block(r0, c0, r1 - r0, c1 - c0).mean();
    }
  }
  return out;
}

// Each head's weights as an overview, and its scores on the token ids. A head's weights not kept are made one head at
// a time and let go after.
void read_heads(LayerTrace& t, const ModelRunOptions& o, const std::vector<int>& ids) {
  if (o.overview <= 0 && !o.head_scores) return;
  if (o.overview > 0) t.mask_overview = block_means(*t.attention.heads.front().mask, o.overview);
  for (HeadTrace& h : t.attention.heads) {
    if (o.overview > 0) t.weights_overview.push_back(block_means(h.weights(), o.overview));
    if (o.head_scores) t.head_scores.push_back(text_head_scores(h.weights(), ids));
    if (!h.weights_kept) h.derived_ = std::make_shared<HeadTrace::Derived>();
  }
}

// What a layer not kept holds of its attention: what it read and what it wrote to the stream.
Trace stream_part(Trace& full) {
  Trace t;
  t.name = full.name;
  t.tokens = full.tokens;
  t.context_tokens = full.context_tokens;
  t.attention = full.attention;
  t.scale_factor = full.scale_factor;
  t.x = std::move(full.x);
  t.output = std::move(full.output);
  t.ablated_heads = full.ablated_heads;
  t.ablation_mode = full.ablation_mode;
  return t;
}

// One layer on the stream x: attention, then the FFN, each joined to the stream as the norm says.
LayerTrace run_layer(const Model& m, const ModelLayer& layer, int l, const std::vector<std::string>& tokens,
                     const std::vector<int>& ids, const Matrix& x, const ModelRunOptions& o) {
  const LayerWeights& w = layer.own;
  LayerTrace t;
  t.kept = o.keeps(l);
  t.residual_in = x;
  const Matrix attn_in = m.norm == Norm::Pre ? apply_norm(m, x, w.ln1_gain, w.ln1_bias) : x;
  check_stream(attn_in, "layers[" + std::to_string(l) + "]");
  // A kept layer keeps every head's weights: the Model view draws them all. One not kept makes them only when asked.
  t.attention = compute_trace(layer_scenario(m, layer, l, tokens, attn_in),
                              {.keep_weights = t.kept,
                               .ablated_heads = o.ablation.heads_of(l),
                               .ablation_mode = o.ablation.mode,
                               .absorbed = t.kept && absorbed_form_fits(layer.attention, m.d_model)});
  read_heads(t, o, ids);
  const Matrix sum = x + t.attention.output;
  t.after_attention = m.norm == Norm::Post ? apply_norm(m, sum, w.ln1_gain, w.ln1_bias) : sum;
  if (m.ffn.kind == FfnKind::None) {
    t.residual_out = t.after_attention;
  } else {
    t.ffn_in = m.norm == Norm::Pre ? apply_norm(m, t.after_attention, w.ln2_gain, w.ln2_bias) : t.after_attention;
    FfnResult f = feed_forward(m.ffn.kind, w, t.ffn_in);
    t.ffn_hidden = std::move(f.hidden);
    t.ffn_out = std::move(f.out);
    const Matrix out = t.after_attention + t.ffn_out;
    t.residual_out = m.norm == Norm::Post ? apply_norm(m, out, w.ln2_gain, w.ln2_bias) : out;
  }
  if (!t.kept) {  // the next layer runs without this one's heads
    t.attention = stream_part(t.attention);
    t.ffn_hidden = Matrix();
  }
  return t;
}

}  // namespace

std::optional<Norm> parse_norm(std::string_view s) { return parse_name(kNorms, s); }
std::optional<FfnKind> parse_ffn_kind(std::string_view s) { return parse_name(kFfnKinds, s); }
std::string_view to_string(Norm n) { return name_of(kNorms, n); }
std::string_view to_string(FfnKind k) { return name_of(kFfnKinds, k); }
std::string_view norm_names() { return "none | pre | post"; }
std::string_view ffn_kind_names() { return "none | relu | gelu | swiglu | gelu_tanh"; }
std::optional<NormFunction> parse_norm_function(std::string_view s) { return parse_name(kNormFunctions, s); }
std::string_view to_string(NormFunction f) { return name_of(kNormFunctions, f); }
std::string_view norm_function_names() { return "layer_norm | rms_norm"; }
bool ffn_has_biases(FfnKind k) { return k == FfnKind::Relu || k == FfnKind::Gelu || k == FfnKind::GeluTanh; }

Matrix softmax_rows(const Matrix& logits) {
  Matrix p = (logits.colwise() - logits.rowwise().maxCoeff()).array().exp().matrix();
  p.array().colwise() /= p.rowwise().sum().array();
  return p;
}

std::vector<double> next_token_losses(const Matrix& logits, const std::vector<int>& ids) {
  std::vector<double> losses;
  if (logits.rows() < static_cast<Eigen::Index>(ids.size())) return losses;  // a run that stopped before the logits
  for (Eigen::Index i = 0; i + 1 < static_cast<Eigen::Index>(ids.size()); ++i) {
    const double top = logits.row(i).maxCoeff();
    const double log_z = top + std::log((logits.row(i).array() - top).exp().sum());
    losses.push_back(log_z - logits(i, ids[static_cast<std::size_t>(i + 1)]));
  }
  return losses;
}

double mean_loss(const std::vector<double>& losses) {
  if (losses.empty()) return 0.0;
  return std::accumulate(losses.begin(), losses.end(), 0.0) / static_cast<double>(losses.size());
}

Ablation parse_ablation(std::string_view list, const Model& m, const std::string& field) {
  const auto heads_in = [&m](int l) {
    return l >= 0 && l < static_cast<int>(m.layers.size()) ? m.layers[static_cast<std::size_t>(l)].attention.heads : -1;
  };
  return parse_ablation(list, heads_in, field);
}

std::vector<int> top_tokens(const Matrix& probabilities, Eigen::Index i, int k) {
  const auto vocab = static_cast<int>(probabilities.cols());
  k = std::clamp(k, 0, vocab);
  std::vector<int> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
    const double pa = probabilities(i, a), pb = probabilities(i, b);
    return pa != pb ? pa > pb : a < b;
  });
  order.resize(static_cast<std::size_t>(k));
  return order;
}

namespace {

// The vocabulary ids of `words`, up to the first that is not valid UTF-8 or not in the vocabulary (`bad`, its
// place): the callers name it in their own words (a file's field, a command-line option).
struct VocabLookup {
  std::vector<int> ids;
  std::optional<std::size_t> bad;
  bool bad_utf8 = false;
};

VocabLookup look_up(const Model& m, const std::vector<std::string>& words) {
  VocabLookup l;
  for (std::size_t i = 0; i < words.size(); ++i) {
    // A message quotes the word: bytes of another encoding would reach the terminal raw.
    const bool utf8 = invalid_utf8_at(words[i]) == std::string::npos;
    const auto it = utf8 ? std::find(m.vocab.begin(), m.vocab.end(), words[i]) : m.vocab.end();
    if (it == m.vocab.end()) {
      l.bad = i;
      l.bad_utf8 = !utf8;
      return l;
    }
    l.ids.push_back(static_cast<int>(it - m.vocab.begin()));
  }
  return l;
}

}  // namespace

std::vector<int> token_ids(const Model& m, const std::vector<std::string>& tokens) {
  VocabLookup l = look_up(m, tokens);
  if (!l.bad) return std::move(l.ids);
  const std::string field = "tokens[" + std::to_string(*l.bad) + "]";
  if (l.bad_utf8) throw InputError(field, "not valid UTF-8 text");
  throw InputError(
      field, "\"" + tokens[*l.bad] + "\" is not in the vocabulary of " + plural(std::int64_t(m.vocab.size()), "token"));
}

std::vector<int> option_token_ids(const Model& m, const std::vector<std::string>& words, const std::string& option) {
  if (words.empty())
    throw InputError(option, "no tokens given (write them separated by spaces, each from the model's vocabulary)");
  check_token_count(m, static_cast<std::int64_t>(words.size()), option + " (its number of words)");
  VocabLookup l = look_up(m, words);
  if (!l.bad) return std::move(l.ids);
  const std::string place = "word " + std::to_string(*l.bad + 1);
  if (l.bad_utf8) throw InputError(option, place + " is not valid UTF-8 text");
  throw InputError(option, place + ", \"" + words[*l.bad] + "\", is not in the model's vocabulary of " +
                               plural(std::int64_t(m.vocab.size()), "token"));
}

Matrix layer_norm(const Matrix& x, const Matrix& gain, const Matrix& bias, double eps) {
  const Vector mean = x.rowwise().mean();
  Matrix centred = x.colwise() - mean;
  const Vector var = centred.array().square().rowwise().mean();
  centred.array().colwise() /= (var.array() + eps).sqrt();
  return (centred.array().rowwise() * gain.row(0).array()).rowwise() + bias.row(0).array();
}

Matrix rms_norm(const Matrix& x, const Matrix& gain, double eps) {
  const Eigen::ArrayXd rms = (x.array().square().rowwise().mean() + eps).sqrt();
  return (x.array().colwise() / rms).rowwise() * gain.row(0).array();
}

Matrix apply_norm(const Model& m, const Matrix& x, const SharedMatrix& gain, const SharedMatrix& bias) {
  if (m.norm_function == NormFunction::RmsNorm) return rms_norm(x, *gain, m.norm_eps);
  return layer_norm(x, *gain, *bias, m.norm_eps);
}

Scenario layer_scenario(const Model& m, int layer, const ModelTrace& t) {
  return layer_scenario(m, layer, t.tokens, t.layers[static_cast<std::size_t>(layer)].attention.x);
}

Scenario layer_scenario(const Model& m, int layer, const std::vector<std::string>& tokens, const Matrix& x) {
  return layer_scenario(m, m.layers[static_cast<std::size_t>(layer)], layer, tokens, x);
}

Scenario layer_scenario(const Model& m, const ModelLayer& l, int layer, const std::vector<std::string>& tokens,
                        const Matrix& x) {
  Scenario s;
  s.name = m.name + ", layer " + std::to_string(layer);
  s.description = "Layer " + std::to_string(layer) + " of " + m.name + ": its attention over the residual stream " +
                  (m.norm == Norm::Pre ? (m.norm_function == NormFunction::RmsNorm ? "after RMSNorm 1" : "after LN1")
                                       : "entering it") +
                  ".";
  s.input = {tokens, x};
  s.attention = l.attention;
  s.weights = l.weights;
  s.seed = m.seed;
  return s;
}

bool ModelRunOptions::keeps(int layer) const {
  return !kept || std::find(kept->begin(), kept->end(), layer) != kept->end();
}

ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, int layers) {
  return run_model(m, tokens, ModelRunOptions{.layers = layers});
}

void check_token_count(const Model& m, std::int64_t n, const std::string& field, std::int64_t least) {
  check_range(n, least, std::numeric_limits<std::int64_t>::max(), field);
  if (n > m.max_positions)
    throw InputError(field, "must be <= " + std::to_string(m.max_positions) + ", the model's max_positions (found " +
                                std::to_string(n) + ")");
}

ModelLayer ResolvedWeights::layer(int l) const { return m_.layers[static_cast<std::size_t>(l)]; }
Matrix ResolvedWeights::embedding_rows(const std::vector<int>& ids) const {
  Matrix rows(static_cast<Eigen::Index>(ids.size()), m_.d_model);
  for (std::size_t i = 0; i < ids.size(); ++i) rows.row(static_cast<Eigen::Index>(i)) = m_.embedding->row(ids[i]);
  return rows;
}
Matrix ResolvedWeights::learned_positions(int n) const { return m_.W_P->topRows(n); }
Matrix ResolvedWeights::logits(const Matrix& final) const {
  return m_.tied_unembedding ? product(final, m_.embedding->transpose()) : product(final, *m_.unembedding);
}

ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, const ModelRunOptions& o) {
  check_token_count(m, static_cast<std::int64_t>(tokens.size()), "tokens");
  return run_model(m, tokens, token_ids(m, tokens), ResolvedWeights(m), o);
}

ModelTrace run_model(const Model& m, const std::vector<std::string>& tokens, const std::vector<int>& ids,
                     const ModelWeights& w, const ModelRunOptions& o) {
  note_engine_entry();
  const int layers = o.layers;
  const int n = static_cast<int>(tokens.size());
  ModelTrace t;
  t.tokens = tokens;
  t.ids = ids;
  t.embedded = w.embedding_rows(ids);
  if (m.positions == Positions::Sinusoidal) t.embedded += sinusoidal_positions(0, n, m.d_model, m.rope_base);
  if (m.positions == Positions::Learned) t.embedded += w.learned_positions(n);
  const Matrix* x = &t.embedded;
  const int shown =
      layers >= 0 ? std::min(layers, static_cast<int>(m.layers.size())) : static_cast<int>(m.layers.size());
  t.layers.reserve(static_cast<std::size_t>(shown));
  for (int l = 0; l < shown; ++l) {
    t.layers.push_back(run_layer(m, w.layer(l), l, tokens, ids, *x, o));  // the layer's weights go when it is done
    x = &t.layers.back().residual_out;
    if (o.on_layer) o.on_layer(l);
  }
  if (layers >= 0 && layers < static_cast<int>(m.layers.size())) return t;
  t.final = m.norm == Norm::Pre ? apply_norm(m, *x, w.final_gain(), w.final_bias()) : *x;
  if (!o.logits) return t;
  t.logits = w.logits(t.final);
  t.probabilities = softmax_rows(t.logits);
  return t;
}

}  // namespace attn
