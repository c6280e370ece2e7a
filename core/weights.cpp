#include "core/weights.h"

namespace attn {
namespace {

std::string product_name(const char* a, int x, const char* b, int y) {
  return std::string(a) + " x " + b + " = " + std::to_string(x) + " x " + std::to_string(y);
}

}  // namespace

const char* weight_name(WeightId id) {
  switch (id) {
    case WeightId::W_Q: return "W_Q";
    case WeightId::W_K: return "W_K";
    case WeightId::W_V: return "W_V";
    case WeightId::W_O: return "W_O";
    case WeightId::W_DKV: return "W_DKV";
    case WeightId::W_UK: return "W_UK";
    case WeightId::W_UV: return "W_UV";
    case WeightId::W_DQ: return "W_DQ";
    case WeightId::W_UQ: return "W_UQ";
    case WeightId::W_P: return "W_P";
    case WeightId::W_QR: return "W_QR";
    case WeightId::W_KR: return "W_KR";
    case WeightId::W_QI: return "W_QI";
    case WeightId::W_KI: return "W_KI";
    case WeightId::W_wI: return "W_wI";
    case WeightId::b_Q: return "b_Q";
    case WeightId::b_K: return "b_K";
    case WeightId::b_V: return "b_V";
    case WeightId::b_O: return "b_O";
  }
  return "?";
}

SharedMatrix& weight_slot(Weights& w, WeightId id) {
  switch (id) {
    case WeightId::W_Q: return w.W_Q;
    case WeightId::W_K: return w.W_K;
    case WeightId::W_V: return w.W_V;
    case WeightId::W_O: return w.W_O;
    case WeightId::W_DKV: return w.W_DKV;
    case WeightId::W_UK: return w.W_UK;
    case WeightId::W_UV: return w.W_UV;
    case WeightId::W_DQ: return w.W_DQ;
    case WeightId::W_UQ: return w.W_UQ;
    case WeightId::W_P: return w.W_P;
    case WeightId::W_QR: return w.W_QR;
    case WeightId::W_KR: return w.W_KR;
    case WeightId::W_QI: return w.W_QI;
    case WeightId::W_KI: return w.W_KI;
    case WeightId::W_wI: return w.W_wI;
    case WeightId::b_Q: return w.b_Q;
    case WeightId::b_K: return w.b_K;
    case WeightId::b_V: return w.b_V;
    case WeightId::b_O: return w.b_O;
  }
  return w.W_Q;
}

const SharedMatrix& weight_slot(const Weights& w, WeightId id) { return weight_slot(const_cast<Weights&>(w), id); }

bool weight_used(WeightId id, const AttentionConfig& a) {
  const bool mla = a.variant == Variant::Mla;
  const bool query_latent = mla && a.query_latent_dim > 0;
  switch (id) {
    case WeightId::W_Q: return !query_latent;
    case WeightId::W_K:
    case WeightId::W_V: return !mla;
    case WeightId::W_O: return a.output_projection;
    case WeightId::W_DKV:
    case WeightId::W_UK:
    case WeightId::W_UV: return mla;
    case WeightId::W_DQ:
    case WeightId::W_UQ: return query_latent;
    case WeightId::W_P: return a.positions == Positions::Learned;
    case WeightId::W_QR:
    case WeightId::W_KR: return decoupled_rope(a);
    case WeightId::W_QI:
    case WeightId::W_KI:
    case WeightId::W_wI: return a.sparse.has_value();
    case WeightId::b_Q:
    case WeightId::b_K:
    case WeightId::b_V: return a.qkv_bias;
    case WeightId::b_O: return a.output_bias && a.output_projection;
  }
  return false;
}

WeightShape weight_shape(WeightId id, const AttentionConfig& a, int d_model) {
  const int hd = a.heads * a.head_dim;
  const std::string heads = product_name("heads", a.heads, "head_dim", a.head_dim);
  const int g = kv_head_count(a);
  switch (id) {
    case WeightId::W_Q: return {d_model, "d_model", hd, heads};
    case WeightId::W_K:
    case WeightId::W_V:
      if (a.variant == Variant::Mha) return {d_model, "d_model", hd, heads};
      return {d_model, "d_model", g * a.head_dim, product_name("kv_heads", g, "head_dim", a.head_dim)};
    case WeightId::W_O: return {hd, heads, d_model, "d_model"};
    case WeightId::W_DKV: return {d_model, "d_model", a.latent_dim, "latent_dim"};
    case WeightId::W_UK:
    case WeightId::W_UV: return {a.latent_dim, "latent_dim", hd, heads};
    case WeightId::W_DQ: return {d_model, "d_model", a.query_latent_dim, "query_latent_dim"};
    case WeightId::W_UQ: return {a.query_latent_dim, "query_latent_dim", hd, heads};
    case WeightId::W_P: return {a.max_positions, "max_positions", d_model, "d_model"};
    case WeightId::W_QR: {
      const std::string cols = product_name("heads", a.heads, "rope_dim", a.rope_dim);
      if (a.query_latent_dim > 0) return {a.query_latent_dim, "query_latent_dim", a.heads * a.rope_dim, cols};
      return {d_model, "d_model", a.heads * a.rope_dim, cols};
    }
    case WeightId::W_KR: return {d_model, "d_model", a.rope_dim, "rope_dim"};
    case WeightId::b_Q: return {1, "one row", hd, heads};
    case WeightId::b_K:
    case WeightId::b_V: return {1, "one row", g * a.head_dim, product_name("kv_heads", g, "head_dim", a.head_dim)};
    case WeightId::b_O: return {1, "one row", d_model, "d_model"};
    default: break;
  }
  const SparseConfig sparse = a.sparse.value_or(SparseConfig{});
  switch (id) {
    case WeightId::W_QI:
      return {d_model, "d_model", sparse.indexer_heads * sparse.indexer_dim,
              product_name("indexer_heads", sparse.indexer_heads, "indexer_dim", sparse.indexer_dim)};
    case WeightId::W_KI: return {d_model, "d_model", sparse.indexer_dim, "indexer_dim"};
    case WeightId::W_wI: return {d_model, "d_model", sparse.indexer_heads, "indexer_heads"};
    default: break;
  }
  return {};
}

std::string used_weight_names(const AttentionConfig& a) {
  std::string names;
  for (WeightId id : kAllWeights)
    if (weight_used(id, a)) names += (names.empty() ? "" : ", ") + std::string(weight_name(id));
  return names;
}

}  // namespace attn
