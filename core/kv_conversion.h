#pragma once
// The same model with a smaller KV cache. GQA and MQA: the key/value heads are split into G consecutive groups and
// each new head's W_K and W_V columns (and biases) are its group's mean, as Ainslie et al. (2023) build GQA
// checkpoints before uptraining. MLA: per layer, the truncated SVD of the stacked projections [W_K | W_V] = U Σ Vᵀ
// gives W_DKV = U_c Σ_c and [W_UK | W_UV] = V_cᵀ, the best rank-d_c fit in the Frobenius norm (Eckart-Young); the
// key and value biases stay outside the latent. G = G0 and d_c = rank give the model back.
#include <optional>
#include <string>
#include <vector>

#include "core/matrix.h"
#include "core/model.h"

namespace attn {

enum class KvTarget { Gqa, Mla };

struct KvConversion {
  KvTarget to = KvTarget::Gqa;
  int kv_heads = 1;           // gqa: G, a divisor of every converted layer's key/value heads (1 is mqa)
  int latent_dim = 1;         // mla: d_c, 1 .. kv_rank_bound
  std::vector<int> layers{};  // the layers converted, ascending; the others are left as they are
  bool operator==(const KvConversion&) const = default;
};

// The widest latent [W_K | W_V] (d_model, 2·G0·d) can use: min(d_model, 2·G0·d), its rank at most.
int kv_rank_bound(const AttentionConfig& a, int d_model);
// Layers as typed: "0-5", "0,2,4", "3" or a mix ("0-2,7"), each in 0..layers-1, none twice. InputError naming
// `field` and the word at fault.
std::vector<int> parse_layer_list(const std::string& text, int layers, const std::string& field);
// InputError (field "--layers") when the layer is mla already: its keys and values come from a latent.
void check_not_mla(const Model& m, int layer);
// Every layer's G0 divisible by G (gqa), d_c within every converted layer's rank bound (mla); InputError naming
// "--kv-heads" or "--latent-dim", what was found and what would do.
void check_kv_conversion(const Model& m, const KvConversion& c);

// A converted layer's attention: gqa (mqa for G = 1, mha for G = H) with G heads, or mla with latent d_c (its keys
// turned by RoPE after the up-projection when the model has rope; no decoupled key).
AttentionConfig converted_attention(const AttentionConfig& a, const KvConversion& c);
// The model's configuration with the converted layers' attention (no weights are touched).
Model converted_model(const Model& m, const KvConversion& c);

// Columns of `kv` (rows, G0·d) for every query head (rows, H·d): head h's block is key/value head kv_head_for(a, h)'s,
// as MHA would have them.
Matrix per_query_head(const AttentionConfig& a, const Matrix& kv);

// The thin SVD of a layer's [W_K | W_V] (d_model, 2·G0·d), r = kv_rank_bound singular values, largest first. Each
// left singular vector is signed so that its entry of largest magnitude (the first of equal ones) is positive, its
// right one flipped with it: the factors are then one answer, not one of 2^r.
struct KvSvd {
  Matrix U;      // (d_model, r)
  Vector sigma;  // (r)
  Matrix V;      // (2·G0·d, r)
};
KvSvd kv_svd(const ModelLayer& layer);

// How far a converted layer's key and value projections are from the original's: ||W' - W||_F / ||W||_F over the
// stacked W_K (and W_V) of the original's G0 heads (0 for an unconverted layer, and for a zero W), at most 1. For
// mla it is computed as ||W - U_c U_cᵀ W||_F / ||W||_F, the same in exact arithmetic (W' = U_c U_cᵀ W), so that it
// is exact to W's own rounding: W' made as W_DKV W_UK carries rounding of about 1e-16 x ||[W_K | W_V]||, which
// beside a W_K 1e-30 of W_V would read as an error of 1e14.
struct KvError {
  double k_error = 0, v_error = 0;
};

struct ConvertedLayer {
  ModelLayer layer;
  KvError error;
};
// The layer with G key/value heads, each the mean of its group of G0/G.
ConvertedLayer pool_kv_heads(const ModelLayer& layer, int kv_heads);
// The layer as mla with latent d_c from its SVD (kv_svd of the same layer).
ConvertedLayer factorise_kv(const ModelLayer& layer, const KvSvd& svd, int latent_dim);

// The weights a conversion makes: the keys' and values' (W_Q and W_O stay the base's, read with its layer).
inline constexpr WeightId kKeyValueWeights[] = {WeightId::W_K,   WeightId::W_V,  WeightId::b_K, WeightId::b_V,
                                                WeightId::W_DKV, WeightId::W_UK, WeightId::W_UV};

// The bytes every layer's KV cache takes per token, at `bytes_per_number`: 2·G·d numbers a layer, or mla's d_c.
std::int64_t kv_bytes_per_token(const Model& m, int bytes_per_number);
// The conversions' caches are counted at the 16-bit numbers models are served in.
inline constexpr int kKvCacheBytesPerNumber = 2;

// Every converted layer's attention weights and errors, made once from the base weights (a layer at a time) and
// held: a forward pass over several windows reads them again without another SVD. `svds`: each converted layer's
// kv_svd when already at hand (a ladder of latent widths shares them); missing ones are computed and let go.
struct ConvertedAttention {
  // per layer: the converted key/value weights (W_K, W_V or W_DKV, W_UK, W_UV, and b_K, b_V), none for a layer left
  // as is; W_Q and W_O are the base's
  std::vector<std::optional<Weights>> weights;
  std::vector<KvError> errors;  // per layer (0 for a layer left as is)
};
// The bytes convert_attention holds, from the shapes: every converted layer's new key/value weights.
std::int64_t converted_attention_bytes(const Model& converted, const KvConversion& c);
ConvertedAttention convert_attention(const ModelWeights& base, const Model& m, const KvConversion& c,
                                     const std::vector<std::optional<KvSvd>>* svds = nullptr);

// A model's weights read through a conversion: each layer as the base gives it, a converted one with its attention
// configuration from `converted` (converted_model) and its weights from `attention`.
class ConvertedWeights final : public ModelWeights {
 public:
  ConvertedWeights(const ModelWeights& base, const Model& converted, const ConvertedAttention& attention)
      : base_(base), converted_(converted), attention_(attention) {}
  ModelLayer layer(int l) const override;
  Matrix embedding_rows(const std::vector<int>& ids) const override { return base_.embedding_rows(ids); }
  Matrix learned_positions(int n) const override { return base_.learned_positions(n); }
  SharedMatrix final_gain() const override { return base_.final_gain(); }
  SharedMatrix final_bias() const override { return base_.final_bias(); }
  Matrix logits(const Matrix& final) const override { return base_.logits(final); }

 private:
  const ModelWeights& base_;
  const Model& converted_;
  const ConvertedAttention& attention_;
};

}  // namespace attn
