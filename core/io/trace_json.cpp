#include "core/io/trace_json.h"

#include <cmath>

namespace attn {
namespace {

using nlohmann::ordered_json;

ordered_json vector_to_json(const Vector& v) {
  ordered_json out = ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(number_to_json(v(i)));
  return out;
}

ordered_json head_to_json(const HeadTrace& h) {
  ordered_json j;
  j["head"] = h.head;
  j["kv_head"] = h.kv_head;
  j["q"] = matrix_to_json(h.q);
  j["k"] = matrix_to_json(h.k);
  j["v"] = matrix_to_json(h.v);
  if (h.q_rope.size() > 0) {
    j["q_rope"] = matrix_to_json(h.q_rope);
    j["k_rope"] = matrix_to_json(h.k_rope);
  }
  if (h.q_r.size() > 0) {
    j["q_r"] = matrix_to_json(h.q_r);
    j["k_r"] = matrix_to_json(h.k_r);
  }
  j["scores"] = matrix_to_json(h.scores());
  j["scaled"] = matrix_to_json(h.scaled());
  j["mask"] = matrix_to_json(*h.mask);
  j["masked"] = matrix_to_json(h.masked());
  j["weights"] = matrix_to_json(h.weights());
  j["output"] = matrix_to_json(h.output);
  if (h.W_O_h) j["contribution"] = matrix_to_json(h.contribution());
  j["row_max"] = vector_to_json(h.row_max);
  j["row_sum"] = vector_to_json(h.row_sum);
  j["entropy"] = vector_to_json(h.entropy);
  ordered_json status = ordered_json::array();
  for (RowStatus s : h.row_status) status.push_back(to_string(s));
  j["row_status"] = status;
  return j;
}

}  // namespace

ordered_json number_to_json(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }

void add_positions_config(ordered_json& attention, const AttentionConfig& a) {
  if (a.positions != Positions::None) attention["positions"] = to_string(a.positions);
  if (a.positions == Positions::Sinusoidal || a.positions == Positions::Rope) attention["rope_base"] = a.rope_base;
  if (a.positions == Positions::Learned) attention["max_positions"] = a.max_positions;
  if (decoupled_rope(a)) attention["rope_dim"] = a.rope_dim;
  if (first_position(a) != 0) attention["position_offset"] = a.position_offset;
  if (a.sparse)
    attention["sparse"] = {
        {"top_k", a.sparse->top_k}, {"indexer_heads", a.sparse->indexer_heads}, {"indexer_dim", a.sparse->indexer_dim}};
}

ordered_json indexer_to_json(const IndexerTrace& x) {
  return {{"q", matrix_to_json(x.q)},
          {"k", matrix_to_json(x.k)},
          {"w", matrix_to_json(x.w)},
          {"scores", matrix_to_json(x.scores)},
          {"selected", matrix_to_json(x.selected)}};
}

std::string_view to_string(RowStatus s) {
  switch (s) {
    case RowStatus::Ok: return "ok";
    case RowStatus::AllMasked: return "all_masked";
    case RowStatus::ZeroSum: return "zero_sum";
    case RowStatus::Signed: return "signed";
  }
  return "?";
}

ordered_json matrix_to_json(const Matrix& m) {
  ordered_json rows = ordered_json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    ordered_json row = ordered_json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(number_to_json(m(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

ordered_json weights_to_json(const Weights& w) {
  ordered_json j = ordered_json::object();
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(w, id)) j[weight_name(id)] = matrix_to_json(*m);
  return j;
}

ordered_json trace_to_json(const Trace& t) {
  const AttentionConfig& a = t.attention;
  ordered_json j;
  j["name"] = t.name;
  j["tokens"] = t.tokens;
  j["context_tokens"] = t.context_tokens;
  j["attention"] = {{"variant", to_string(a.variant)}, {"heads", a.heads},
                    {"kv_heads", kv_head_count(a)},    {"head_dim", a.head_dim},
                    {"mask", to_string(a.mask)},       {"scale", a.scale},
                    {"kernel", to_string(a.kernel)},   {"output_projection", t.has_output_projection()}};
  if (a.mask == MaskKind::SlidingWindow) j["attention"]["window"] = a.window;
  if (a.variant == Variant::Mla) {
    j["attention"]["latent_dim"] = a.latent_dim;
    j["attention"]["query_latent_dim"] = a.query_latent_dim;
  }
  add_positions_config(j["attention"], a);
  j["scale_factor"] = t.scale_factor;
  j["weights"] = weights_to_json(t.weights);
  j["x"] = matrix_to_json(t.x);
  j["x_kv"] = matrix_to_json(t.x_kv);
  if (t.positions.size() > 0) j["positions"] = matrix_to_json(t.positions);
  if (t.indexer) j["indexer"] = indexer_to_json(*t.indexer);
  if (t.query_latent.size() > 0) j["query_latent"] = matrix_to_json(t.query_latent);
  if (t.latent.size() > 0) j["latent"] = matrix_to_json(t.latent);
  ordered_json kv = ordered_json::array();
  for (const KvHeadTrace& g : t.kv_heads) kv.push_back({{"k", matrix_to_json(g.k)}, {"v", matrix_to_json(g.v)}});
  j["kv_heads"] = kv;
  ordered_json heads = ordered_json::array();
  for (const HeadTrace& h : t.heads) heads.push_back(head_to_json(h));
  j["heads"] = heads;
  j["concat"] = matrix_to_json(t.concat);
  j["output"] = matrix_to_json(t.output);
  if (t.absorbed) {
    ordered_json ab;
    ordered_json per_head = ordered_json::array();
    for (std::size_t h = 0; h < t.absorbed->W_UQK.size(); ++h)
      per_head.push_back(
          {{"W_UQK", matrix_to_json(t.absorbed->W_UQK[h])}, {"scores", matrix_to_json(t.absorbed->scores[h])}});
    ab["heads"] = per_head;
    ab["latent_output"] = matrix_to_json(t.absorbed->latent_output);
    ab["W_LO"] = matrix_to_json(t.absorbed->W_LO);
    ab["output"] = matrix_to_json(t.absorbed->output);
    j["absorbed"] = ab;
  }
  return j;
}

}  // namespace attn
