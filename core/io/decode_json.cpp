#include "core/io/decode_json.h"

#include <sstream>

#include "core/io/json_stream.h"
#include "core/io/trace_json.h"

namespace attn {
namespace {

void write_decode_step(JsonStream& js, const DecodeStep& s) {
  js.begin_object().field("t", s.t).field("token", s.token).key("output").row(s.output.row(0));
  js.field("cache_tokens", s.cache_tokens).field("cache_elements", s.cache_elements);
  js.key("weights").begin_array();
  for (const Matrix& w : s.weights) js.row(w.row(0));
  js.end_array();
  nlohmann::ordered_json status = nlohmann::ordered_json::array();
  for (RowStatus r : s.status) status.push_back(to_string(r));
  js.field("row_status", status);
  if (s.selected.size() > 0)
    js.key("indexer_scores").row(s.indexer_scores.row(0)).key("selected").row(s.selected.row(0));
  js.end_object();
}

void write_cache(JsonStream& js, const DecodeTrace& d) {
  js.key("cache").begin_object();
  if (d.attention.variant == Variant::Mla) {
    js.matrix("latent", d.cache.latent);
    if (decoupled_rope(d.attention)) js.matrix("k_rope", d.cache.k_r);
  } else {
    js.key("kv_heads").begin_array();
    for (std::size_t g = 0; g < d.cache.k.size(); ++g)
      js.begin_object().matrix("k", d.cache.k[g]).matrix("v", d.cache.v[g]).end_object();
    js.end_array();
  }
  if (d.attention.sparse) js.matrix("indexer_k", d.cache.indexer_k);
  js.end_object();
}

}  // namespace

void write_decode_json(std::ostream& out, const DecodeTrace& d) {
  JsonStream js(out);
  js.begin_object().field("name", d.name).field("variant", to_string(d.attention.variant));
  js.field("elements_per_token", d.elements_per_token).field("cross_attention", d.cross_attention);
  js.key("steps").begin_array();
  for (const DecodeStep& s : d.steps) write_decode_step(js, s);
  js.end_array();
  write_cache(js, d);
  js.key("weights");
  write_weights_json(js, d.weights);
  js.end_object();
}

nlohmann::ordered_json decode_to_json(const DecodeTrace& d) {
  std::ostringstream text;
  write_decode_json(text, d);
  return nlohmann::ordered_json::parse(text.str());
}

}  // namespace attn
