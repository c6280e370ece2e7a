#pragma once
// What a smaller KV cache costs on a text, measured on the model itself: the model as shipped, GQA at every divisor
// of its key/value heads G0 below G0 (1 is MQA), and MLA at a ladder of latent widths, each point the same model
// converted (core/kv_conversion.h) and run on the same windows as the original.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/kv_conversion.h"
#include "core/text_quality.h"

namespace attn {

// The latent widths MLA is measured at: the full rank r (the model's keys and values exactly), then 3r/4, r/2,
// 3r/8, r/4, r/8, r/16 and r/32, rounded down, at least 1, each once.
std::vector<int> latent_ladder(int rank);

// Every conversion of the trade-off over `layers` (every layer when empty): GQA at each divisor of the layers' G0
// below G0, then MLA at latent_ladder of the narrowest rank among them. InputError (field "--layers") when the
// layers differ in G0 (no one G divides them all alike) or one is mla already.
std::vector<KvConversion> tradeoff_conversions(const Model& m, std::vector<int> layers);

struct TradeoffPoint {
  std::optional<KvConversion> conversion;  // none: the model as shipped
  std::int64_t kv_bytes_per_token = 0;     // 16-bit numbers, every layer
  PredictionSums sums;                     // for the model as shipped: only loss and predicted
  std::vector<KvError> errors;             // per layer
};

// A point's name in tables: "as shipped", "gqa 4", "mqa", "mla 384".
std::string tradeoff_point_name(const std::optional<KvConversion>& c);

// A layer that cannot absorb W_UK (mla whose expanded keys RoPE turns: a RoPE model converted to mla) expands every
// cached latent into keys again at each new token, 2·d_c·H·d FLOPs a cached token (a multiply and an add each). The
// sum over the model's layers for one new token with `cached` tokens in the cache; 0 when every layer absorbs.
std::int64_t key_reexpansion_flops(const Model& m, std::int64_t cached);
// A point's loss: the converted model's, or the original's for the model as shipped.
double tradeoff_point_loss(const TradeoffPoint& p);

// The bytes measure_tradeoff holds beside one converted pass: every converted layer's SVD (U, Σ, V).
std::int64_t tradeoff_svd_bytes(const Model& m, const std::vector<KvConversion>& conversions);
// ... and with them the widest conversion's new weights: all it holds beside the passes.
std::int64_t tradeoff_conversion_bytes(const Model& m, const std::vector<KvConversion>& conversions);

// The model as shipped, then each conversion, on the windows of `run` (run_windows of the original). The SVD of each
// layer is computed once and shared by the latent widths. `on_point(done, points)` after each point.
std::vector<TradeoffPoint> measure_tradeoff(const EvalModel& original, const WindowedRun& run,
                                            const std::vector<KvConversion>& conversions,
                                            const std::function<void(int, int)>& on_point = {});

}  // namespace attn
