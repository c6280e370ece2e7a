#pragma once
// How much memory a KV cache takes, from a model's attention shape alone, and the stored-float totals of
// Tables 1 and 2 of "Understanding Transformers and Attention Mechanisms" (arXiv 2604.00965).
// Pure arithmetic in exact 64-bit integers: overflow is an OverflowError, never a wrapped number.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/checked_math.h"
#include "core/config.h"

namespace attn {

enum class Dtype { FP32, FP16, BF16, FP8, INT8, INT4 };

std::string_view to_string(Dtype t);
std::optional<Dtype> parse_dtype(std::string_view s);
std::string_view dtype_names();  // "fp32 | fp16 | bf16 | fp8 | int8 | int4"
int bits_per_element(Dtype t);   // 32, 16, 16, 8, 8, 4

// Bounds that reject typos and absurd values before any arithmetic; far above every real model.
namespace kv_limits {
inline constexpr int kMaxLayers = 65536;
inline constexpr int kMaxDModel = 1 << 20;
inline constexpr int kMaxHeads = 65536;
inline constexpr int kMaxHeadDim = 65536;
inline constexpr int kMaxLatentDim = 1 << 20;
inline constexpr int kMaxRopeDim = 65536;
inline constexpr std::int64_t kMaxTokens = std::int64_t{1} << 30;  // --seq and window
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 20;
}  // namespace kv_limits

// The attention-relevant shape of a model (one entry of assets/presets/models.json).
struct ModelShape {
  std::string name;
  std::string source;  // where the numbers come from
  Variant variant = Variant::Mha;
  int layers = 1;
  int d_model = 0;     // 0 = not stated (a shape typed on the command line); needed only for Tables 1-2 and FLOPs
  int heads = 1;       // H, query heads
  int kv_heads = 1;    // G: mha has H, mqa 1, mla H (each query head expands its own from the latent)
  int head_dim = 1;    // d: its own number, not always d_model / H (Gemma 3 27B: 128, not 168); 0: not stated (mla)
  int latent_dim = 0;  // d_c, mla only: the cached latent
  // d_rope: mla's decoupled RoPE key, cached beside the latent. Files and options give it for mla only; the MHA,
  // GQA and MQA forms of such a model (variant_forms) keep it in every key head, so their keys are head_dim + d_rope
  // wide (DeepSeek: 128 + 64 = 192) and their values head_dim.
  int rope_dim = 0;
  // Sliding-window layers keep only the last `window` tokens. The layers repeat in groups of
  // local_layers + global_layers with the global ones last (Gemma 3: 5 + 1, so layer i is global iff
  // (i+1) % 6 == 0); global_layers = 0 makes every layer local (Mistral 7B's rolling buffer).
  int window = 0;  // 0 = no sliding window: every layer is global
  int local_layers = 0;
  int global_layers = 0;

  friend bool operator==(const ModelShape&, const ModelShape&) = default;
};

// What an mla model caches per token and layer, as words: "latent 512 + RoPE key 64", "latent 64" without one.
std::string cached_latent_text(const ModelShape& m);

// How validation names a field: in a file ("models[3].kv_heads: must divide heads (64) ...") or as
// command-line options ("--kv-heads: must divide --heads (64) ..."), so both report the same rule.
struct ShapeFieldNames {
  std::string prefix;                             // "models[3]." for a presets file
  bool options = false;                           // true: "--kv-heads" instead of "kv_heads"
  std::string field(std::string_view key) const;  // where the error is
  std::string ref(std::string_view key) const;    // how the message mentions another field
};

// Throws InputError naming the first field that is wrong: ranges, G dividing H, mha/mqa head counts,
// latent_dim >= 1 only for mla, the sliding-window pattern.
void validate_shape(const ModelShape& m, const ShapeFieldNames& names);

// Whether layer i (0-based) attends to every token; the others keep min(seq, window).
bool is_global_layer(const ModelShape& m, int i);
int global_layer_count(const ModelShape& m);
bool has_sliding_window(const ModelShape& m);

// The width of a query or key head outside mla: head_dim, + d_rope in the forms of a model with decoupled RoPE.
std::uint64_t key_dim(const ModelShape& m);

// Numbers cached per token in one layer, with d_k = key_dim(m): mha H·(d_k + d), gqa G·(d_k + d), mqa d_k + d
// (2·H·d, 2·G·d and 2·d without decoupled RoPE), mla d_c + d_rope.
std::uint64_t kv_elements_per_token_per_layer(const ModelShape& m);

struct KvCacheSize {
  std::uint64_t elements_per_token_per_layer = 0;
  // Each total in bits, exact, and in bytes, rounded up: int4 with an odd count of numbers ends in half a byte.
  std::uint64_t bits_per_token = 0;
  std::uint64_t total_bits = 0;
  std::uint64_t total_bits_full_attention = 0;
  std::uint64_t bytes_per_token = 0;             // every layer, one sequence
  std::uint64_t total_bytes = 0;                 // window-aware: local layers keep min(seq, window) tokens
  std::uint64_t total_bytes_full_attention = 0;  // as if every layer kept all seq tokens
  std::uint64_t local_tokens = 0;                // min(seq, window), 0 without a window
  int local_layer_count = 0;
  int global_layer_count = 0;
  bool whole_bytes = true;  // false only for int4 with an odd element count: byte totals are rounded up
};

// bytes = elements × layers × seq × batch × bits / 8, counted in bits so int4 stays exact.
KvCacheSize kv_cache_size(const ModelShape& m, std::uint64_t seq, std::uint64_t batch, Dtype dtype);

// The memory of common accelerators (24 GB, 80 GB, 141 GB: decimal gigabytes, as accelerator memory is sold).
struct Accelerator {
  std::uint64_t bytes;
  const char* label;
};
inline constexpr Accelerator kAccelerators[] = {
    {24'000'000'000, "24 GB"}, {80'000'000'000, "80 GB"}, {141'000'000'000, "141 GB"}};

// The longest context whose cache (window-aware, kv_cache_size's total_bytes) fits in `bytes`; nullopt when
// even `limit` tokens fit. A cache too large to count in 64 bits does not fit.
std::optional<std::uint64_t> longest_context(const ModelShape& m, std::uint64_t bytes, std::uint64_t batch, Dtype dtype,
                                             std::uint64_t limit);

// Floats one attention layer stores: the cache for `tokens` keys and values, and its weights.
struct StoredFloats {
  std::uint64_t cache = 0;
  std::uint64_t weights = 0;
  std::uint64_t total() const { return checked_add(cache, weights, "the stored-float total"); }
};

struct AttentionDims {
  std::uint64_t heads, kv_heads, tokens, d_qk, d_head, d_in, d_out;
};
// Table 1: N_heads·N_KV·(d_QK + d_head) + 2·N_heads·d_in·d_QK + N_heads·d_head·(d_in + d_out).
// With kv_heads G < heads H (GQA), G replaces N_heads in W_K, W_V and the cache:
// G·N_KV·(d_QK + d_head) + H·d_in·d_QK + G·d_in·d_QK + G·d_in·d_head + H·d_head·d_out.
StoredFloats table1_stored_floats(const AttentionDims& a);

struct LatentDims {
  std::uint64_t heads, tokens, d_latent, d_in, d_out;
};
// Table 2 (MLA with absorbed weights): N_KV·d_L + d_in·d_L + N_heads·d_L·(d_in + d_out).
StoredFloats table2_stored_floats(const LatentDims& a);

// The table that fits the model's variant, per layer, with d_in = d_out = d_model (needs d_model >= 1), and
// d_QK = key_dim(m), d_head = head_dim in Table 1. MLA follows Table 2, which leaves out the RoPE key.
StoredFloats stored_floats_per_layer(const ModelShape& m, std::uint64_t tokens);
// The same summed over the model's layers as it really caches: a sliding-window layer holds min(tokens, window)
// tokens (Gemma 3 27B at 32,768 tokens: 10 global layers of 32,768 and 52 local ones of 1,024), so the cache row
// agrees with kv_cache_size. Weights count once per layer.
StoredFloats stored_floats_all_layers(const ModelShape& m, std::uint64_t tokens);

}  // namespace attn
