#include "core/kv_conversion.h"

#include <Eigen/SVD>

#include <algorithm>
#include <charconv>

#include "core/decode.h"
#include "core/edits.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {

int kv_rank_bound(const AttentionConfig& a, int d_model) {
  return std::min(d_model, 2 * kv_head_count(a) * a.head_dim);
}

namespace {

// A layer number, part of `word` (the whole layer or range, for the message).
int layer_number(std::string_view part, std::string_view word, int layers, const std::string& field) {
  int n = -1;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
  if (part.empty() || ec != std::errc() || end != part.data() + part.size() || n < 0)
    throw InputError(field, "expected a layer or a range such as 0-5 but found \"" + escaped_text(word) + "\"");
  if (n >= layers)
    throw InputError(field,
                     "the model has layers 0.." + std::to_string(layers - 1) + " but found " + std::to_string(n));
  return n;
}

std::string divisor_list(int n) {
  std::string s;
  for (const int g : divisors(n)) s += (s.empty() ? "" : ", ") + std::to_string(g);
  return s;
}

}  // namespace

std::vector<int> parse_layer_list(const std::string& text, int layers, const std::string& field) {
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    const std::size_t dash = word.find('-');
    const int first = layer_number(word.substr(0, dash), word, layers, field);
    const int last = dash == std::string_view::npos ? first : layer_number(word.substr(dash + 1), word, layers, field);
    if (last < first)
      throw InputError(field, "the range " + std::string(word) + " runs backwards (write " + std::to_string(last) +
                                  "-" + std::to_string(first) + ")");
    for (int l = first; l <= last; ++l) {
      if (std::find(out.begin(), out.end(), l) != out.end())
        throw InputError(field, "layer " + std::to_string(l) + " is given twice");
      out.push_back(l);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_not_mla(const Model& m, int layer) {
  if (m.layers[static_cast<std::size_t>(layer)].attention.variant == Variant::Mla)
    throw InputError("--layers",
                     "layer " + std::to_string(layer) + " is mla already: its keys and values come from a latent");
}

void check_kv_conversion(const Model& m, const KvConversion& c) {
  for (const int l : c.layers) {
    const AttentionConfig& a = m.layers[static_cast<std::size_t>(l)].attention;
    const std::string layer = "layer " + std::to_string(l);
    check_not_mla(m, l);
    const int g0 = kv_head_count(a);
    if (c.to == KvTarget::Gqa && g0 % c.kv_heads != 0)
      throw InputError("--kv-heads", "must divide the " + std::to_string(g0) + " key/value heads of " + layer + " (" +
                                         divisor_list(g0) + ") but found " + std::to_string(c.kv_heads));
    const int rank = kv_rank_bound(a, m.d_model);
    if (c.to == KvTarget::Mla && c.latent_dim > rank)
      throw InputError("--latent-dim", "must be at most " + std::to_string(rank) + ", the rank of " + layer +
                                           "'s [W_K | W_V] (at most min(d_model " + std::to_string(m.d_model) +
                                           ", 2 x " + std::to_string(g0) + " key/value heads x head_dim " +
                                           std::to_string(a.head_dim) + ")) but found " + std::to_string(c.latent_dim));
  }
}

AttentionConfig converted_attention(const AttentionConfig& a, const KvConversion& c) {
  AttentionConfig b = a;
  if (c.to == KvTarget::Gqa) {
    b.kv_heads = c.kv_heads;
    b.variant = c.kv_heads == a.heads ? Variant::Mha : c.kv_heads == 1 ? Variant::Mqa : Variant::Gqa;
    return b;
  }
  b.variant = Variant::Mla;
  b.kv_heads = a.heads;
  b.latent_dim = c.latent_dim;
  b.query_latent_dim = 0;
  b.rope_dim = 0;  // with rope, the expanded keys are turned: no decoupled key
  return b;
}

Model converted_model(const Model& m, const KvConversion& c) {
  Model out = m;
  for (const int l : c.layers) {
    ModelLayer& layer = out.layers[static_cast<std::size_t>(l)];
    layer.attention = converted_attention(layer.attention, c);
    layer.weights = Weights{};
  }
  return out;
}

KvSvd kv_svd(const ModelLayer& layer) {
  const Weights& w = layer.weights;
  Eigen::MatrixXd A(w.W_K->rows(), w.W_K->cols() + w.W_V->cols());  // (d_model, 2·G0·d), column-major for the SVD
  A << *w.W_K, *w.W_V;
  const Eigen::BDCSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeThinU | Eigen::ComputeThinV);
  KvSvd s{svd.matrixU(), svd.singularValues(), svd.matrixV()};
  for (Eigen::Index i = 0; i < s.U.cols(); ++i) {
    Eigen::Index largest = 0;
    s.U.col(i).cwiseAbs().maxCoeff(&largest);  // the first of equal magnitudes
    if (s.U(largest, i) < 0) {
      s.U.col(i) *= -1.0;
      s.V.col(i) *= -1.0;
    }
  }
  return s;
}

Matrix per_query_head(const AttentionConfig& a, const Matrix& kv) {
  const int d = a.head_dim;
  Matrix out(kv.rows(), a.heads * d);
  for (int h = 0; h < a.heads; ++h) out.middleCols(h * d, d) = kv.middleCols(kv_head_for(a, h) * d, d);
  return out;
}

namespace {

double relative_error(const Matrix& approx, const Matrix& exact) {
  const double n = exact.norm();
  return n == 0.0 ? 0.0 : (approx - exact).norm() / n;
}

// ||W - U Uᵀ W||_F / ||W||_F: the share of W outside the latent's columns U (orthonormal). The rank-c fit's K (or
// V) columns are U Uᵀ W exactly, so this is ||W' - W||_F / ||W||_F; computed from W rather than from W' = W_DKV W_UK,
// whose rounding is about 1e-16 of the whole ||[W_K | W_V]||, it is exact to rounding of W itself, and at most 1,
// even when W_K is a millionth of W_V or less (then W' - W measured would be rounding, not what the latent drops).
double outside_share(const Matrix& U, const Matrix& W) {
  const Matrix inside = U * (U.transpose() * W);
  return relative_error(inside, W);
}

// The mean of each group of `size` consecutive d-wide blocks, and the blocks each replaced by its group's mean.
struct Pooled {
  Matrix pooled;    // (rows, G·d)
  Matrix expanded;  // (rows, G0·d)
};
Pooled pool(const Matrix& m, int d, int size) {
  const int groups = static_cast<int>(m.cols()) / (d * size);
  Pooled p{Matrix::Zero(m.rows(), groups * d), Matrix(m.rows(), m.cols())};
  for (int g = 0; g < groups; ++g) {
    for (int i = 0; i < size; ++i) p.pooled.middleCols(g * d, d) += m.middleCols((g * size + i) * d, d);
    p.pooled.middleCols(g * d, d) /= static_cast<double>(size);
    for (int i = 0; i < size; ++i) p.expanded.middleCols((g * size + i) * d, d) = p.pooled.middleCols(g * d, d);
  }
  return p;
}

}  // namespace

ConvertedLayer pool_kv_heads(const ModelLayer& layer, int kv_heads) {
  const AttentionConfig& a = layer.attention;
  const int d = a.head_dim, size = kv_head_count(a) / kv_heads;
  ConvertedLayer out{layer, {}};
  out.layer.attention = converted_attention(a, {.to = KvTarget::Gqa, .kv_heads = kv_heads});
  Weights& w = out.layer.weights;
  const Pooled k = pool(*layer.weights.W_K, d, size), v = pool(*layer.weights.W_V, d, size);
  w.W_K = k.pooled;
  w.W_V = v.pooled;
  if (layer.weights.b_K) {
    w.b_K = pool(*layer.weights.b_K, d, size).pooled;
    w.b_V = pool(*layer.weights.b_V, d, size).pooled;
  }
  out.error = {relative_error(k.expanded, *layer.weights.W_K), relative_error(v.expanded, *layer.weights.W_V)};
  return out;
}

ConvertedLayer factorise_kv(const ModelLayer& layer, const KvSvd& svd, int latent_dim) {
  const AttentionConfig& a = layer.attention;
  const Eigen::Index c = latent_dim, kv = layer.weights.W_K->cols();
  const Matrix W_DKV = svd.U.leftCols(c) * svd.sigma.head(c).asDiagonal();  // (d_model, d_c)
  const Matrix up = svd.V.leftCols(c).transpose();                          // (d_c, 2·G0·d): [W_UK | W_UV]
  ConvertedLayer out{layer, {}};
  out.layer.attention = converted_attention(a, {.to = KvTarget::Mla, .latent_dim = latent_dim});
  Weights& w = out.layer.weights;
  w.W_K = w.W_V = SharedMatrix();
  w.W_DKV = W_DKV;
  w.W_UK = per_query_head(a, up.leftCols(kv));
  w.W_UV = per_query_head(a, up.rightCols(kv));
  if (layer.weights.b_K) {
    w.b_K = per_query_head(a, *layer.weights.b_K);
    w.b_V = per_query_head(a, *layer.weights.b_V);
  }
  const Matrix U_c = svd.U.leftCols(c);
  out.error = {outside_share(U_c, *layer.weights.W_K), outside_share(U_c, *layer.weights.W_V)};
  return out;
}

std::int64_t kv_bytes_per_token(const Model& m, int bytes_per_number) {
  std::int64_t numbers = 0;
  for (const ModelLayer& l : m.layers) numbers += cache_elements_per_token(l.attention);
  return numbers * bytes_per_number;
}

namespace {

Weights key_value_weights(const Weights& w) {
  Weights kv;
  for (const WeightId id : kKeyValueWeights) weight_slot(kv, id) = weight_slot(w, id);
  return kv;
}

// The engine's bound on a value held by the weights a conversion makes (an SVD's W_DKV = U Σ may pass it where W_K
// and W_V did not), named as the conversion made them: "layer 3's converted W_DKV[0][2]".
void check_converted_values(const Weights& w, int layer) {
  for (const WeightId id : kKeyValueWeights)
    if (const SharedMatrix& m = weight_slot(w, id))
      check_values(*m, "layer " + std::to_string(layer) + "'s converted " + std::string(weight_name(id)));
}

}  // namespace

std::int64_t converted_attention_bytes(const Model& converted, const KvConversion& c) {
  std::int64_t numbers = 0;
  for (const int l : c.layers) {
    const AttentionConfig& a = converted.layers[static_cast<std::size_t>(l)].attention;
    const std::int64_t D = converted.d_model, hd = std::int64_t{a.heads} * a.head_dim;
    const std::int64_t kv = std::int64_t{kv_head_count(a)} * a.head_dim;
    // mla: W_DKV, W_UK, W_UV and the biases; gqa: W_K, W_V and theirs. W_Q and W_O are the base's.
    numbers += a.variant == Variant::Mla ? D * a.latent_dim + 2 * a.latent_dim * hd + 2 * hd : 2 * D * kv + 2 * kv;
  }
  return 8 * numbers;
}

ConvertedAttention convert_attention(const ModelWeights& base, const Model& m, const KvConversion& c,
                                     const std::vector<std::optional<KvSvd>>* svds) {
  const auto layers = m.layers.size();
  ConvertedAttention out{std::vector<std::optional<Weights>>(layers), std::vector<KvError>(layers)};
  for (const int l : c.layers) {
    const auto i = static_cast<std::size_t>(l);
    const ModelLayer layer = base.layer(l);
    ConvertedLayer made;
    if (c.to == KvTarget::Gqa) made = pool_kv_heads(layer, c.kv_heads);
    else if (svds && i < svds->size() && (*svds)[i]) made = factorise_kv(layer, *(*svds)[i], c.latent_dim);
    else made = factorise_kv(layer, kv_svd(layer), c.latent_dim);
    check_converted_values(made.layer.weights, l);
    out.weights[i] = key_value_weights(made.layer.weights);
    out.errors[i] = made.error;
  }
  return out;
}

ModelLayer ConvertedWeights::layer(int l) const {
  ModelLayer layer = base_.layer(l);
  const auto i = static_cast<std::size_t>(l);
  if (!attention_.weights[i]) return layer;
  layer.attention = converted_.layers[i].attention;
  for (const WeightId id : kKeyValueWeights) weight_slot(layer.weights, id) = weight_slot(*attention_.weights[i], id);
  return layer;
}

}  // namespace attn
