#include "core/model_bytes.h"

#include <algorithm>

#include "core/text_format.h"
#include "core/trace_bytes.h"

namespace attn {
namespace {

constexpr std::int64_t kDouble = sizeof(double);

// Bytes of an r x c matrix of doubles.
std::int64_t doubles(std::int64_t r, std::int64_t c) { return r * c * kDouble; }

// A layer's attention trace on n tokens without any head's scores or weights (what compute_trace holds when it does
// not keep them), and the token labels each trace copies.
std::int64_t light_trace_bytes(const Model& m, const ModelLayer& layer, std::int64_t n) {
  Scenario s;
  s.input.embeddings = Matrix(0, m.d_model);  // only its width is read
  s.attention = layer.attention;
  return predicted_trace_bytes(s, n, n) - 2 * layer.attention.heads * doubles(n, n) +
         2 * n * std::int64_t(sizeof(std::string));
}

// The stream matrices every layer keeps, kept or not: residual_in, attention.x and .output, after_attention,
// residual_out, and the FFN's in and out.
std::int64_t stream_bytes(const Model& m, std::int64_t n) {
  return (m.ffn.kind == FfnKind::None ? 5 : 7) * doubles(n, m.d_model);
}

std::int64_t overview_bytes(const ModelLayer& layer, std::int64_t n, int side) {
  if (side <= 0) return 0;
  const std::int64_t s = std::min<std::int64_t>(n, side);
  return (layer.attention.heads + 1) * doubles(s, s);
}

// One layer's attention as model_gradient.cpp's forward keeps it: its input, the projections each head and KV head
// reads, RoPE's tables, the mask, every head's weights (and the linear kernel's sums), the concatenation.
std::int64_t attention_cache_bytes(const Model& m, const AttentionConfig& a, std::int64_t n) {
  const std::int64_t H = a.heads, G = kv_head_count(a), d = a.head_dim, ds = score_dim(a);
  std::int64_t sum = doubles(n, m.d_model) + H * doubles(n, ds) + G * (doubles(n, ds) + doubles(n, d));
  if (a.variant == Variant::Mla) sum += doubles(n, a.latent_dim) + doubles(n, a.query_latent_dim);
  if (a.positions == Positions::Rope) sum += 2 * doubles(n, rope_width(a));  // cos and sin, turned and back
  sum += (H + 1) * doubles(n, n) + doubles(n, H * d);
  if (a.kernel == Kernel::Linear) sum += H * doubles(n, 1);
  return sum;
}

// What the backward pass of one sequence makes at once: d logits, a few (N, N) of one head (d weights, d scores and
// the softmax Jacobian's product), each head's d q and each KV head's d k and d v, and the projections' gradients.
std::int64_t backward_scratch_bytes(const Model& m, std::int64_t n) {
  std::int64_t most = 0;
  for (const ModelLayer& l : m.layers) {
    const AttentionConfig& a = l.attention;
    const std::int64_t H = a.heads, G = kv_head_count(a), ds = score_dim(a), d = a.head_dim;
    most = std::max(most, 3 * doubles(n, n) + 2 * (H + 2 * G) * doubles(n, std::max(ds, d)) +
                              4 * doubles(n, std::max<std::int64_t>(m.d_model, m.ffn.d_ff)));
  }
  return doubles(n, static_cast<std::int64_t>(m.vocab.size())) + most;
}

}  // namespace

std::int64_t predicted_model_run_bytes(const Model& m, std::int64_t n, const ModelRunOptions& o) {
  const auto total = static_cast<int>(m.layers.size());
  const int runs = o.layers >= 0 ? std::min(o.layers, total) : total;
  std::int64_t sum = parameter_count(m) * kDouble + doubles(n, m.d_model);  // the weights, the embedded stream
  std::int64_t computing = 0;  // the trace of a layer not kept while it is computed
  for (int l = 0; l < runs; ++l) {
    const ModelLayer& layer = m.layers[static_cast<std::size_t>(l)];
    const std::int64_t light = light_trace_bytes(m, layer, n);
    sum += stream_bytes(m, n) + overview_bytes(layer, n, o.overview);
    if (o.keeps(l)) sum += light + layer.attention.heads * doubles(n, n) + doubles(n, m.ffn.d_ff);
    else  // with an overview, one head's weights at a time are made for it
      computing = std::max(computing, light + doubles(n, m.ffn.d_ff) + (o.overview > 0 ? doubles(n, n) : 0));
  }
  sum += computing + 3 * doubles(n, m.d_model);  // and the stream's copies while a layer runs
  if (runs == total) sum += doubles(n, m.d_model) + 3 * doubles(n, static_cast<std::int64_t>(m.vocab.size()));
  return sum;
}

std::int64_t predicted_activation_bytes(const Model& m, std::int64_t n) {
  const bool ffn = m.ffn.kind != FfnKind::None, norms = m.norm != Norm::None;
  const std::int64_t norm = doubles(n, m.d_model) + doubles(n, 1);  // xhat and 1/std
  std::int64_t sum = doubles(n, m.d_model);                         // the stream itself
  for (const ModelLayer& l : m.layers) {
    sum += attention_cache_bytes(m, l.attention, n) + (norms ? norm * (ffn ? 2 : 1) : 0);
    if (ffn) sum += doubles(n, m.d_model) + (m.ffn.kind == FfnKind::Swiglu ? 3 : 2) * doubles(n, m.ffn.d_ff);
  }
  sum += (m.norm == Norm::Pre ? norm : 0) + doubles(n, m.d_model) +
         2 * doubles(n, static_cast<std::int64_t>(m.vocab.size()));  // final, logits and probabilities
  return sum + backward_scratch_bytes(m, n);
}

std::int64_t predicted_attention_gradient_bytes(const Model& m, std::int64_t n, int only_layer) {
  std::int64_t heads = 0;
  for (std::size_t l = 0; l < m.layers.size(); ++l)
    if (only_layer < 0 || static_cast<int>(l) == only_layer) heads += m.layers[l].attention.heads;
  return 2 * parameter_count(m) * kDouble + predicted_activation_bytes(m, n) + 2 * heads * doubles(n, n);
}

std::int64_t predicted_training_bytes(const Model& m, std::int64_t batch, std::int64_t seq_len) {
  const std::int64_t weights = parameter_count(m) * kDouble;
  return 7 * weights + batch * (predicted_activation_bytes(m, seq_len) + weights);
}

std::string model_run_what(const Model& m, std::int64_t tokens) {
  return "running " + plural(static_cast<std::int64_t>(m.layers.size()), "layer") + " on " +
         thousands(static_cast<std::uint64_t>(tokens)) + (tokens == 1 ? " token" : " tokens");
}

std::string training_what(const Model& m, std::int64_t batch, std::int64_t seq_len) {
  return "training " + plural(static_cast<std::int64_t>(m.layers.size()), "layer") + " on batches of " +
         plural(batch, "sequence") + " of " + thousands(static_cast<std::uint64_t>(seq_len)) +
         (seq_len == 1 ? " token" : " tokens");
}

}  // namespace attn
