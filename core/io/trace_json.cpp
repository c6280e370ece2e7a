#include "core/io/trace_json.h"

#include <cmath>

namespace attn {
namespace {

using nlohmann::ordered_json;

ordered_json number(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(nullptr); }

ordered_json vector_to_json(const Vector& v) {
  ordered_json out = ordered_json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(number(v(i)));
  return out;
}

ordered_json head_to_json(const HeadTrace& h) {
  ordered_json j;
  j["head"] = h.head;
  j["kv_head"] = h.kv_head;
  j["q"] = matrix_to_json(h.q);
  j["k"] = matrix_to_json(h.k);
  j["v"] = matrix_to_json(h.v);
  j["scores"] = matrix_to_json(h.scores);
  j["scaled"] = matrix_to_json(h.scaled);
  j["mask"] = matrix_to_json(h.mask);
  j["masked"] = matrix_to_json(h.masked);
  j["weights"] = matrix_to_json(h.weights);
  j["output"] = matrix_to_json(h.output);
  if (h.contribution.size() > 0) j["contribution"] = matrix_to_json(h.contribution);
  j["row_max"] = vector_to_json(h.row_max);
  j["row_sum"] = vector_to_json(h.row_sum);
  j["entropy"] = vector_to_json(h.entropy);
  ordered_json status = ordered_json::array();
  for (RowStatus s : h.row_status) status.push_back(to_string(s));
  j["row_status"] = status;
  return j;
}

}  // namespace

std::string_view to_string(RowStatus s) {
  switch (s) {
    case RowStatus::Ok: return "ok";
    case RowStatus::AllMasked: return "all_masked";
    case RowStatus::ZeroSum: return "zero_sum";
  }
  return "?";
}

ordered_json matrix_to_json(const Matrix& m) {
  ordered_json rows = ordered_json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    ordered_json row = ordered_json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(number(m(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

ordered_json trace_to_json(const Trace& t) {
  ordered_json j;
  j["name"] = t.name;
  j["tokens"] = t.tokens;
  j["context_tokens"] = t.context_tokens;
  j["attention"] = {{"variant", to_string(t.attention.variant)},
                    {"heads", t.attention.heads},
                    {"head_dim", t.attention.head_dim},
                    {"mask", to_string(t.attention.mask)},
                    {"window", t.attention.window},
                    {"scale", t.attention.scale},
                    {"kernel", to_string(t.attention.kernel)},
                    {"output_projection", t.has_output_projection()}};
  j["scale_factor"] = t.scale_factor;
  j["weights"] = {{"W_Q", matrix_to_json(t.weights.W_Q)},
                  {"W_K", matrix_to_json(t.weights.W_K)},
                  {"W_V", matrix_to_json(t.weights.W_V)}};
  if (t.weights.W_O) j["weights"]["W_O"] = matrix_to_json(*t.weights.W_O);
  j["x"] = matrix_to_json(t.x);
  j["x_kv"] = matrix_to_json(t.x_kv);
  ordered_json heads = ordered_json::array();
  for (const HeadTrace& h : t.heads) heads.push_back(head_to_json(h));
  j["heads"] = heads;
  j["concat"] = matrix_to_json(t.concat);
  j["output"] = matrix_to_json(t.output);
  return j;
}

}  // namespace attn
