#include "core/io/trace_json.h"

#include <cmath>
#include <sstream>

namespace attn {
namespace {

using nlohmann::ordered_json;

}  // namespace

ordered_json number_to_json(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }

void add_positions_config(ordered_json& attention, const AttentionConfig& a) {
  if (a.positions != Positions::None) attention["positions"] = to_string(a.positions);
  if (a.positions == Positions::Sinusoidal || a.positions == Positions::Rope) attention["rope_base"] = a.rope_base;
  if (a.positions == Positions::Learned) attention["max_positions"] = a.max_positions;
  if (decoupled_rope(a)) attention["rope_dim"] = a.rope_dim;
  if (first_position(a) != 0) attention["position_offset"] = a.position_offset;
  if (a.positions == Positions::Rope) attention["rope_pairing"] = to_string(a.rope_pairing);
  if (a.rope_scaling)
    attention["rope_scaling"] = {{"type", "llama3"},
                                 {"factor", a.rope_scaling->factor},
                                 {"low_freq_factor", a.rope_scaling->low_freq_factor},
                                 {"high_freq_factor", a.rope_scaling->high_freq_factor},
                                 {"original_max_positions", a.rope_scaling->original_max_positions}};
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
    if (const auto& m = weight_slot(w, id))
      j[weight_name(id)] = is_bias(id) ? matrix_to_json(*m)[0] : matrix_to_json(*m);
  return j;
}

namespace {

void write_vector(JsonStream& js, std::string_view name, const Vector& v) { js.key(name).row(v.transpose()); }

// One head, from a copy whose matrices made on demand are freed with it (fresh_head): scaled and masked are written a
// row at a time from scores, the bits HeadTrace::scaled and masked would hold.
void write_head(JsonStream& js, const HeadTrace& trace_head) {
  const HeadTrace h = fresh_head(trace_head);
  js.begin_object().field("head", h.head).field("kv_head", h.kv_head);
  js.matrix("q", h.q).matrix("k", h.k).matrix("v", h.v);
  if (h.q_rope.size() > 0) js.matrix("q_rope", h.q_rope).matrix("k_rope", h.k_rope);
  if (h.q_r.size() > 0) js.matrix("q_r", h.q_r).matrix("k_r", h.k_r);
  const Matrix& scores = h.scores();
  js.matrix("scores", scores);
  js.key("scaled").rows(scores.rows(),
                        [&](Eigen::Index r) -> Eigen::RowVectorXd { return scores.row(r) * h.scale_factor; });
  js.matrix("mask", *h.mask);
  js.key("masked").rows(scores.rows(), [&](Eigen::Index r) { return h.masked_row(r); });
  js.matrix("weights", h.weights());
  js.matrix("output", h.output);
  if (h.W_O_h) js.matrix("contribution", h.contribution());
  write_vector(js, "row_max", h.row_max);
  write_vector(js, "row_sum", h.row_sum);
  write_vector(js, "entropy", h.entropy);
  ordered_json status = ordered_json::array();
  for (RowStatus s : h.row_status) status.push_back(to_string(s));
  js.field("row_status", status).end_object();
}

ordered_json trace_attention_json(const Trace& t) {
  const AttentionConfig& a = t.attention;
  ordered_json j = {{"variant", to_string(a.variant)}, {"heads", a.heads},
                    {"kv_heads", kv_head_count(a)},    {"head_dim", a.head_dim},
                    {"mask", to_string(a.mask)},       {"scale", a.scale},
                    {"kernel", to_string(a.kernel)},   {"output_projection", t.has_output_projection()}};
  if (a.mask == MaskKind::SlidingWindow) j["window"] = a.window;
  if (a.qkv_bias) j["qkv_bias"] = true;
  if (a.output_bias) j["output_bias"] = true;
  if (a.variant == Variant::Mla) {
    j["latent_dim"] = a.latent_dim;
    j["query_latent_dim"] = a.query_latent_dim;
  }
  add_positions_config(j, a);
  return j;
}

void write_absorbed(JsonStream& js, const AbsorbedMla& m) {
  js.key("absorbed").begin_object().key("heads").begin_array();
  for (std::size_t h = 0; h < m.W_UQK.size(); ++h)
    js.begin_object()
        .matrix("W_UQK", m.W_UQK[h])
        .matrix("queries", m.queries[h])
        .matrix("scores", m.scores[h])
        .end_object();
  js.end_array().matrix("latent_output", m.latent_output).matrix("W_LO", m.W_LO).matrix("output", m.output);
  js.end_object();
}

}  // namespace

void write_weights_json(JsonStream& js, const Weights& w) {
  js.begin_object();
  for (WeightId id : kAllWeights)
    if (const auto& m = weight_slot(w, id)) {
      if (is_bias(id)) js.key(weight_name(id)).row(m->row(0));
      else js.matrix(weight_name(id), *m);
    }
  js.end_object();
}

void write_trace_json(std::ostream& out, const Trace& t) {
  JsonStream js(out);
  js.begin_object().field("name", t.name).field("tokens", t.tokens).field("context_tokens", t.context_tokens);
  js.field("attention", trace_attention_json(t)).field("scale_factor", t.scale_factor);
  js.key("weights");
  write_weights_json(js, t.weights);
  js.matrix("x", t.x).matrix("x_kv", t.x_kv);
  if (t.positions.size() > 0) js.matrix("positions", t.positions);
  if (t.indexer) {
    const IndexerTrace& x = *t.indexer;
    js.key("indexer").begin_object().matrix("q", x.q).matrix("k", x.k).matrix("w", x.w);
    js.matrix("scores", x.scores).matrix("selected", x.selected).end_object();
  }
  if (t.query_latent.size() > 0) js.matrix("query_latent", t.query_latent);
  if (t.latent.size() > 0) js.matrix("latent", t.latent);
  js.key("kv_heads").begin_array();
  for (const KvHeadTrace& g : t.kv_heads) js.begin_object().matrix("k", g.k).matrix("v", g.v).end_object();
  js.end_array().key("heads").begin_array();
  for (const HeadTrace& h : t.heads) write_head(js, h);
  js.end_array().matrix("concat", t.concat).matrix("output", t.output);
  if (t.absorbed) write_absorbed(js, *t.absorbed);
  js.end_object();
}

ordered_json trace_to_json(const Trace& t) {
  std::ostringstream text;
  write_trace_json(text, t);
  return ordered_json::parse(text.str());
}

}  // namespace attn
