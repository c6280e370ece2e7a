#include "core/io/decode_json.h"

#include "core/io/trace_json.h"

namespace attn {

nlohmann::ordered_json decode_to_json(const DecodeTrace& d) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["name"] = d.name;
  j["variant"] = to_string(d.attention.variant);
  j["elements_per_token"] = d.elements_per_token;
  j["cross_attention"] = d.cross_attention;
  ordered_json steps = ordered_json::array();
  for (const DecodeStep& s : d.steps) {
    ordered_json step;
    step["t"] = s.t;
    step["token"] = s.token;
    step["output"] = matrix_to_json(s.output)[0];
    step["cache_tokens"] = s.cache_tokens;
    step["cache_elements"] = s.cache_elements;
    ordered_json weights = ordered_json::array();
    for (const Matrix& w : s.weights) weights.push_back(matrix_to_json(w)[0]);
    step["weights"] = weights;
    ordered_json status = ordered_json::array();
    for (RowStatus r : s.status) status.push_back(to_string(r));
    step["row_status"] = status;
    if (s.selected.size() > 0) {
      step["indexer_scores"] = matrix_to_json(s.indexer_scores)[0];
      step["selected"] = matrix_to_json(s.selected)[0];
    }
    steps.push_back(step);
  }
  j["steps"] = steps;
  ordered_json cache;
  if (d.attention.variant == Variant::Mla) {
    cache["latent"] = matrix_to_json(d.cache.latent);
    if (decoupled_rope(d.attention)) cache["k_rope"] = matrix_to_json(d.cache.k_r);
  } else {
    ordered_json kv = ordered_json::array();
    for (std::size_t g = 0; g < d.cache.k.size(); ++g)
      kv.push_back({{"k", matrix_to_json(d.cache.k[g])}, {"v", matrix_to_json(d.cache.v[g])}});
    cache["kv_heads"] = kv;
  }
  if (d.attention.sparse) cache["indexer_k"] = matrix_to_json(d.cache.indexer_k);
  j["cache"] = cache;
  j["weights"] = weights_to_json(d.weights);
  return j;
}

}  // namespace attn
