#include "core/kv_tradeoff.h"

#include <algorithm>

#include "core/validate.h"

namespace attn {

std::vector<int> latent_ladder(int rank) {
  std::vector<int> widths;
  for (const auto& [num, den] : {std::pair{1, 1}, {3, 4}, {1, 2}, {3, 8}, {1, 4}, {1, 8}, {1, 16}, {1, 32}}) {
    const int c = std::max(1, static_cast<int>(std::int64_t{rank} * num / den));
    if (std::find(widths.begin(), widths.end(), c) == widths.end()) widths.push_back(c);
  }
  return widths;
}

std::vector<KvConversion> tradeoff_conversions(const Model& m, std::vector<int> layers) {
  if (layers.empty())
    for (int l = 0; l < static_cast<int>(m.layers.size()); ++l) layers.push_back(l);
  const AttentionConfig& first = m.layers[static_cast<std::size_t>(layers.front())].attention;
  const int g0 = kv_head_count(first);
  int rank = kv_rank_bound(first, m.d_model);
  for (const int l : layers) {
    const AttentionConfig& a = m.layers[static_cast<std::size_t>(l)].attention;
    check_not_mla(m, l);
    if (kv_head_count(a) != g0)
      throw InputError("--layers", "layer " + std::to_string(l) + " has " + std::to_string(kv_head_count(a)) +
                                       " key/value heads and layer " + std::to_string(layers.front()) + " " +
                                       std::to_string(g0) + ": convert them apart");
    rank = std::min(rank, kv_rank_bound(a, m.d_model));
  }
  std::vector<KvConversion> out;
  for (int g = g0 - 1; g >= 1; --g)
    if (g0 % g == 0) out.push_back({.to = KvTarget::Gqa, .kv_heads = g, .layers = layers});
  for (const int c : latent_ladder(rank)) out.push_back({.to = KvTarget::Mla, .latent_dim = c, .layers = layers});
  return out;
}

std::int64_t tradeoff_svd_bytes(const Model& m, const std::vector<KvConversion>& conversions) {
  // Every mla point shares the same layers' SVDs: the first one's layers count.
  const auto mla =
      std::find_if(conversions.begin(), conversions.end(), [](const KvConversion& c) { return c.to == KvTarget::Mla; });
  if (mla == conversions.end()) return 0;
  std::int64_t numbers = 0;
  for (const int l : mla->layers) {
    const AttentionConfig& a = m.layers[static_cast<std::size_t>(l)].attention;
    const std::int64_t kv = 2 * std::int64_t{kv_head_count(a)} * a.head_dim, r = kv_rank_bound(a, m.d_model);
    numbers += (m.d_model + kv + 1) * r;  // U, V and Σ
  }
  return 8 * numbers;
}

std::vector<TradeoffPoint> measure_tradeoff(const EvalModel& original, const WindowedRun& run,
                                            const std::vector<KvConversion>& conversions,
                                            const std::function<void(int, int)>& on_point) {
  const int points = static_cast<int>(conversions.size()) + 1;
  std::vector<TradeoffPoint> out;
  out.push_back({std::nullopt, kv_bytes_per_token(original.config, kKvCacheBytesPerNumber),
                 compare_windows(run, original.weights, nullptr), std::vector<KvError>(original.config.layers.size())});
  if (on_point) on_point(1, points);
  std::vector<std::optional<KvSvd>> svds(original.config.layers.size());
  for (const KvConversion& c : conversions) {
    if (c.to == KvTarget::Mla)
      for (const int l : c.layers)
        if (!svds[static_cast<std::size_t>(l)]) svds[static_cast<std::size_t>(l)] = kv_svd(original.weights.layer(l));
    const Model after = converted_model(original.config, c);
    const ConvertedAttention attention = convert_attention(original.weights, original.config, c, &svds);
    const ConvertedWeights w(original.weights, after, attention);
    const EvalModel converted{after, w};
    out.push_back({c, kv_bytes_per_token(after, kKvCacheBytesPerNumber),
                   compare_windows(run, original.weights, &converted), attention.errors});
    if (on_point) on_point(static_cast<int>(out.size()), points);
  }
  return out;
}

std::int64_t tradeoff_conversion_bytes(const Model& m, const std::vector<KvConversion>& conversions) {
  std::int64_t widest = 0;
  for (const KvConversion& c : conversions)
    widest = std::max(widest, converted_attention_bytes(converted_model(m, c), c));
  return widest + tradeoff_svd_bytes(m, conversions);
}

std::string tradeoff_point_name(const std::optional<KvConversion>& c) {
  if (!c) return "as shipped";
  if (c->to == KvTarget::Mla) return "mla " + std::to_string(c->latent_dim);
  return c->kv_heads == 1 ? "mqa" : "gqa " + std::to_string(c->kv_heads);
}

std::int64_t key_reexpansion_flops(const Model& m, std::int64_t cached) {
  std::int64_t per_token = 0;
  for (const ModelLayer& layer : m.layers) {
    const AttentionConfig& a = layer.attention;
    if (a.variant == Variant::Mla && rope_turns_heads(a))
      per_token += 2 * std::int64_t{a.latent_dim} * a.heads * a.head_dim;
  }
  return per_token * cached;
}

double tradeoff_point_loss(const TradeoffPoint& p) {
  return p.conversion ? p.sums.mean_converted_loss() : p.sums.mean_loss();
}

}  // namespace attn
