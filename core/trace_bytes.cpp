#include "core/trace_bytes.h"

namespace attn {
namespace {

std::int64_t bytes(const Matrix& m) { return static_cast<std::int64_t>(m.size()) * std::int64_t(sizeof(double)); }
std::int64_t bytes(const Vector& v) { return static_cast<std::int64_t>(v.size()) * std::int64_t(sizeof(double)); }
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

}  // namespace

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
    sum += bytes(h.q) + bytes(h.k) + bytes(h.v) + bytes(h.scores) + bytes(h.weights) + bytes(h.output) +
           bytes(h.contribution);
    sum += bytes(h.row_max) + bytes(h.row_sum) + bytes(h.entropy) + bytes(h.row_status);
  }
  sum += bytes(t.concat) + bytes(t.output);
  if (t.absorbed) {
    const AbsorbedMla& m = *t.absorbed;
    sum += bytes(m.W_UQK) + bytes(m.scores) + bytes(m.latent_scores) + bytes(m.latent_output) + bytes(m.W_LO) +
           bytes(m.output);
  }
  return sum;
}

}  // namespace attn
