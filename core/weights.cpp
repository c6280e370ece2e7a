#include "core/weights.h"

namespace attn {
namespace {

std::string product(const char* a, int x, const char* b, int y) {
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
  }
  return "?";
}

std::optional<Matrix>& weight_slot(Weights& w, WeightId id) {
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
  }
  return w.W_Q;
}

const std::optional<Matrix>& weight_slot(const Weights& w, WeightId id) {
  return weight_slot(const_cast<Weights&>(w), id);
}

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
  }
  return false;
}

WeightShape weight_shape(WeightId id, const AttentionConfig& a, int d_model) {
  const int hd = a.heads * a.head_dim;
  const std::string heads = product("heads", a.heads, "head_dim", a.head_dim);
  const int g = kv_head_count(a);
  switch (id) {
    case WeightId::W_Q: return {d_model, "d_model", hd, heads};
    case WeightId::W_K:
    case WeightId::W_V:
      if (a.variant == Variant::Mha) return {d_model, "d_model", hd, heads};
      return {d_model, "d_model", g * a.head_dim, product("kv_heads", g, "head_dim", a.head_dim)};
    case WeightId::W_O: return {hd, heads, d_model, "d_model"};
    case WeightId::W_DKV: return {d_model, "d_model", a.latent_dim, "latent_dim"};
    case WeightId::W_UK:
    case WeightId::W_UV: return {a.latent_dim, "latent_dim", hd, heads};
    case WeightId::W_DQ: return {d_model, "d_model", a.query_latent_dim, "query_latent_dim"};
    case WeightId::W_UQ: return {a.query_latent_dim, "query_latent_dim", hd, heads};
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
