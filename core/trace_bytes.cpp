#include "core/trace_bytes.h"

#include <algorithm>

#include "core/decode.h"

namespace attn {
namespace {

template <class Derived>
std::int64_t bytes(const Eigen::DenseBase<Derived>& m) {
  return static_cast<std::int64_t>(m.size()) * std::int64_t(sizeof(double));
}
std::int64_t bytes(const std::vector<RowStatus>& s) {
  return static_cast<std::int64_t>(s.size()) * std::int64_t(sizeof(RowStatus));
}
std::int64_t bytes(const std::vector<Matrix>& ms) {
  std::int64_t sum = 0;
  for (const Matrix& m : ms) sum += bytes(m);
  return sum;
}

std::int64_t bytes(const Weights& weights) {
  std::int64_t sum = 0;
  for (WeightId id : kAllWeights)
    if (const auto& w = weight_slot(weights, id)) sum += bytes(*w);
  return sum;
}

// Bytes of an r x c matrix of doubles.
std::int64_t cells(std::int64_t r, std::int64_t c) { return r * c * std::int64_t(sizeof(double)); }

// What each query head keeps: its projections (and RoPE's turned ones), scores, weights, output, W_O contribution
// and row statistics.
std::int64_t per_head_bytes(const AttentionConfig& a, std::int64_t nq, std::int64_t nkv, std::int64_t d_model) {
  const std::int64_t d = a.head_dim, ds = score_dim(a), dr = a.rope_dim;
  std::int64_t sum = cells(nq, d) + 2 * cells(nkv, d) + 2 * cells(nq, nkv) + cells(nq, d);
  if (a.output_projection) sum += cells(d, d_model);  // W_O^(h)
  if (a.positions == Positions::Rope) sum += cells(nq, ds) + cells(nkv, ds);
  if (decoupled_rope(a)) sum += cells(nq, dr) + cells(nkv, dr);
  return sum + 3 * cells(nq, 1) + nq * std::int64_t(sizeof(RowStatus));
}

// blockdiag(W_UV^(h)), (H*d_c, H*d): absorbing W_UV into W_O holds it while W_LO is made.
std::int64_t block_uv_bytes(const AttentionConfig& a) {
  return cells(std::int64_t(a.heads) * a.latent_dim, std::int64_t(a.heads) * a.head_dim);
}

// MLA's absorbed form: W_UQK, the queries and the scores per head (and the latent's part of them apart, with a key
// bias or decoupled RoPE),
// the latent output, W_LO and the output.
std::int64_t absorbed_bytes(const AttentionConfig& a, std::int64_t nq, std::int64_t nkv, std::int64_t d_model) {
  const std::int64_t H = a.heads, dc = a.latent_dim, d_q = a.query_latent_dim > 0 ? a.query_latent_dim : d_model,
                     d_out = a.output_projection ? d_model : H * a.head_dim;
  return H * (cells(d_q, dc) + cells(nq, dc) + cells(nq, nkv) * (latent_part_apart(a) ? 2 : 1)) + cells(nq, H * dc) +
         cells(H * dc, d_out) + cells(nq, d_out);
}

}  // namespace

std::int64_t computing_bytes(const Scenario& s) {
  return s.attention.variant == Variant::Mla ? block_uv_bytes(s.attention) : 0;
}

std::int64_t predicted_trace_bytes(const Scenario& s) { return predicted_trace_bytes(s, s.n_q(), s.n_kv()); }

std::int64_t predicted_trace_bytes(const Scenario& s, std::int64_t nq, std::int64_t nkv) {
  const AttentionConfig& a = s.attention;
  const std::int64_t dm = s.d_model(), H = a.heads, d = a.head_dim;
  const std::int64_t kv = kv_head_count(a);
  std::int64_t sum = bytes(a.custom_mask) + cells(nq, dm) + cells(nkv, dm);
  for (WeightId id : kAllWeights)
    if (weight_used(id, a)) {
      const WeightShape w = weight_shape(id, a, s.d_model());
      sum += cells(w.rows, w.cols);
    }
  if (a.positions == Positions::Sinusoidal || a.positions == Positions::Learned)
    sum += cells(std::max(nq, nkv), dm) + cells(nq, dm) + cells(nkv, dm);
  if (a.sparse) {
    const SparseConfig& c = *a.sparse;
    sum += cells(nq, c.indexer_heads * c.indexer_dim) + cells(nkv, c.indexer_dim) + cells(nq, c.indexer_heads) +
           2 * cells(nq, nkv);
  }
  if (a.variant == Variant::Mla) sum += cells(nkv, a.latent_dim) + cells(nq, a.query_latent_dim);
  sum += cells(nq, H * d) + 2 * cells(nkv, kv * d) + 2 * kv * cells(nkv, d);  // Q, K, V; each KV head's k and v
  sum += cells(nq, nkv) + H * per_head_bytes(a, nq, nkv, dm);                 // the mask they share; the heads
  sum += cells(nq, H * d) + cells(nq, a.output_projection ? dm : H * d);      // concat, output
  if (a.variant == Variant::Mla) sum += absorbed_bytes(a, nq, nkv, dm);
  return sum;
}

namespace {

// One row of text: every number of the longest row (at most 17 decimals, a sign, the exponent's digits and two
// spaces: 32 bytes) and its labels, shortened or not (what a file may hold: 1 KiB each).
std::int64_t row_text_bytes(std::int64_t numbers) { return (numbers + 1) * (32 + 1024); }

// The weights the variant uses, as resolve_weights makes them.
std::int64_t used_weight_bytes(const Scenario& s) {
  std::int64_t sum = 0;
  for (WeightId id : kAllWeights)
    if (weight_used(id, s.attention)) {
      const WeightShape w = weight_shape(id, s.attention, s.d_model());
      sum += cells(w.rows, w.cols);
    }
  return sum;
}

// What a Matrix or a vector's element costs beside its numbers: the heap block's header and rounding.
constexpr std::int64_t kAllocationBytes = 64;

}  // namespace

std::int64_t predicted_print_bytes(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  const std::int64_t nq = s.n_q(), nkv = s.n_kv(), dm = s.d_model(), ds = score_dim(a);
  const std::int64_t head_copy =
      cells(nq, a.head_dim) * 2 + cells(nkv, a.head_dim) * 2 + cells(nq, ds) + cells(nkv, ds) + cells(nq, 3);
  const std::int64_t widest =
      std::max({nkv, dm, std::int64_t(a.heads) * a.head_dim, std::int64_t(a.latent_dim) * a.heads});
  return 4 * cells(nq, nkv) + cells(nq, dm) + head_copy + row_text_bytes(widest) + (std::int64_t(1) << 20);
}

std::int64_t predicted_decode_bytes(const Scenario& s) { return predicted_decode_bytes(s, s.n_q(), s.n_kv()); }

std::int64_t predicted_decode_bytes(const Scenario& s, std::int64_t nq, std::int64_t nkv) {
  const AttentionConfig& a = s.attention;
  const std::int64_t dm = s.d_model(), H = a.heads;
  const std::int64_t d_out = a.output_projection ? dm : H * a.head_dim;
  // The cells every step's rows add up to: t + 1 for step t, or all N_KV with a context.
  const std::int64_t seen = s.context ? nq * nkv : nq * (nq + 1) / 2;
  std::int64_t sum = used_weight_bytes(s) + cells(nq, nkv) + cells(nkv, cache_elements_per_token(a));
  if (a.variant == Variant::Mla) {
    const std::int64_t dc = a.latent_dim, d_q = a.query_latent_dim > 0 ? a.query_latent_dim : dm;
    sum += H * cells(d_q, dc) + cells(H * dc, d_out) + block_uv_bytes(a);
  }
  sum += cells(seen, H + (a.sparse ? 2 : 0)) + cells(nq, d_out);
  // The heap keeps some of each step's freed rows, too short for the next step's longer ones: at most half a number
  // per cell seen (measured: 22 MiB of the 32 MiB this allows at 4,096 tokens).
  sum += cells(seen, 1) / 2;
  sum += nq * (2 * std::int64_t(sizeof(DecodeStep)) + (H + 4) * kAllocationBytes + 64);  // each step's own parts
  return sum + row_text_bytes(std::max({nkv * 2, dm, d_out})) + (std::int64_t(1) << 20);
}

std::int64_t scenario_bytes(const Scenario& s) {
  return bytes(s.input.embeddings) + (s.context ? bytes(s.context->embeddings) : 0) + bytes(s.attention.custom_mask) +
         bytes(s.weights);
}

std::int64_t trace_bytes(const Trace& t) {
  std::int64_t sum = bytes(t.attention.custom_mask) + bytes(t.x) + bytes(t.x_kv) + bytes(t.weights);
  sum += bytes(t.positions) + bytes(t.x_in) + bytes(t.x_kv_in);
  if (t.indexer)
    sum += bytes(t.indexer->q) + bytes(t.indexer->k) + bytes(t.indexer->w) + bytes(t.indexer->scores) +
           bytes(t.indexer->selected);
  sum += bytes(t.query_latent) + bytes(t.latent) + bytes(t.Q) + bytes(t.K) + bytes(t.V);
  for (const KvHeadTrace& kv : t.kv_heads) sum += bytes(kv.k) + bytes(kv.v);
  if (!t.heads.empty()) sum += bytes(*t.heads.front().mask);  // one for every head
  for (const HeadTrace& h : t.heads) {
    sum += bytes(h.q_rope) + bytes(h.k_rope) + bytes(h.q_r) + bytes(h.k_r);
    sum += bytes(h.q) + bytes(h.k) + bytes(h.v) + 2 * bytes(*h.mask) /* scores and weights, of its shape */ +
           bytes(h.output) + (h.W_O_h ? bytes(*h.W_O_h) : 0);
    sum += bytes(h.row_max) + bytes(h.row_sum) + bytes(h.entropy) + bytes(h.row_status);
  }
  sum += bytes(t.concat) + bytes(t.output);
  if (t.absorbed) {
    const AbsorbedMla& m = *t.absorbed;
    sum += bytes(m.W_UQK) + bytes(m.queries) + bytes(m.scores) + bytes(m.latent_scores) + bytes(m.latent_output) +
           bytes(m.W_LO) + bytes(m.output);
  }
  return sum;
}

}  // namespace attn
