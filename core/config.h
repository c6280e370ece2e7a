#pragma once
// The attention configuration of a scenario and the names its fields take in files and on the command line.
#include <optional>
#include <string>
#include <string_view>

#include "core/matrix.h"

namespace attn {

enum class Variant {
  Mha,  // multi-head: every query head has its own key/value head (G = H)
  Gqa,  // grouped-query: G key/value heads, each shared by H/G query heads
  Mqa,  // multi-query: one key/value head shared by all (G = 1)
  Mla,  // multi-head latent: keys and values are expanded from a cached latent of d_c numbers per token
};

enum class MaskKind {
  None,           // every query sees every key
  Causal,         // query i sees keys j <= i
  SlidingWindow,  // query i sees keys i-window+1 .. i
  Custom,         // an explicit 0/1 matrix (N_Q x N_KV), 1 = may attend
};

// Where a token's position enters attention.
enum class Positions {
  None,        // attention knows no order: permute the tokens and every row permutes with them
  Sinusoidal,  // X + PE before the projections (Vaswani et al. 2017)
  Learned,     // X + W_P rows before the projections
  Rope,        // q and k rotated pair by pair after the projections (RoFormer); mla: decoupled RoPE key
};

// DeepSeek Sparse Attention: a lightning indexer scores every visible key; each query keeps its top_k.
struct SparseConfig {
  int top_k = 1;          // keys each query attends to (fewer visible: all of them)
  int indexer_heads = 1;  // H_I
  int indexer_dim = 1;    // d_I
};

// Which dims of a head RoPE turns together.
enum class RopePairing {
  Interleaved,  // (2i, 2i+1): RoFormer's and the lab's own
  RotateHalf,   // (i, i + w/2): Hugging Face's rotate_half, as Llama, Qwen2 and Mistral checkpoints expect
};

// Llama 3's rope_scaling of RoPE's frequencies: a wavelength 2π/f longer than original_max_positions / low_freq_factor
// has its frequency divided by `factor`, one shorter than original_max_positions / high_freq_factor keeps it, and
// those between are blended linearly in original_max_positions / wavelength.
struct RopeScaling {
  double factor = 8, low_freq_factor = 1, high_freq_factor = 4;
  int original_max_positions = 8192;
  bool operator==(const RopeScaling&) const = default;
};

enum class Kernel {
  Softmax,  // kappa = exp, masked scores are -inf before the kernel
  Linear,   // kappa(x) = x, masked entries are zeroed after the kernel
};

struct AttentionConfig {
  Variant variant = Variant::Mha;
  int heads = 1;             // H
  int head_dim = 1;          // d (d_k = d_v)
  int kv_heads = 1;          // G: gqa only (mha uses H, mqa uses 1)
  int latent_dim = 0;        // d_c: mla only, the width of the cached latent
  int query_latent_dim = 0;  // d_c': mla only, > 0 compresses the queries too
  MaskKind mask = MaskKind::None;
  int window = 1;      // sliding_window only
  Matrix custom_mask;  // custom only: (N_Q, N_KV) of 0/1
  bool scale = true;   // divide scores by sqrt(d)
  Kernel kernel = Kernel::Softmax;
  bool output_projection = false;  // apply W_O after the concatenation
  Positions positions = Positions::None;
  double rope_base = 10000.0;  // sinusoidal and rope: the base of the frequencies
  int max_positions = 0;       // learned: rows of W_P (>= the longer side's token count)
  int rope_dim = 0;            // d_R: mla with rope only, the width of the decoupled RoPE key and queries
  int position_offset = 0;     // any positions: row p sits at position position_offset + p (the shift experiment)
  RopePairing rope_pairing = RopePairing::Interleaved;  // rope only
  std::optional<RopeScaling> rope_scaling;              // rope only
  bool qkv_bias = false;     // b_Q, b_K, b_V added to the projections (Qwen2; mla: to the keys and values it expands)
  bool output_bias = false;  // with output_projection: b_O added after W_O
  std::optional<SparseConfig> sparse;
};

// The position of row 0 (of either side): every row is shifted by the same constant, which RoPE's scores ignore
// (only i - j enters them) and absolute positions do not.
inline int first_position(const AttentionConfig& a) { return a.positions == Positions::None ? 0 : a.position_offset; }

// The decoupled RoPE of DeepSeek-V2: mla rotates separate query and key parts (rope_dim wide), never the latent. mla
// with rope and no rope_dim turns the keys expanded from the latent instead, as a RoPE model converted to mla must:
// its cache is the latent, but W_UK cannot be absorbed into the queries.
inline bool mla_with_rope(const AttentionConfig& a) {
  return a.variant == Variant::Mla && a.positions == Positions::Rope;
}
inline bool decoupled_rope(const AttentionConfig& a) { return mla_with_rope(a) && a.rope_dim > 0; }
// RoPE turning whole heads' queries and keys (every variant but mla, which turns only its decoupled part).
inline bool rope_turns_heads(const AttentionConfig& a) { return a.positions == Positions::Rope && !decoupled_rope(a); }
// The width RoPE turns: mla's decoupled part d_R, or a whole head d.
inline int rope_width(const AttentionConfig& a) { return decoupled_rope(a) ? a.rope_dim : a.head_dim; }
// The width of each head's query and key as the scores see them: d, or d + d_R with decoupled RoPE.
inline int score_dim(const AttentionConfig& a) { return a.head_dim + (decoupled_rope(a) ? a.rope_dim : 0); }

// The number of key/value heads G the variant uses; mla expands one per query head from the latent.
int kv_head_count(const AttentionConfig& a);
// Which key/value head query head h reads: h / (H/G).
int kv_head_for(const AttentionConfig& a, int h);

std::string_view to_string(Variant v);
std::string_view to_string(MaskKind m);
std::string_view to_string(Kernel k);
std::string_view to_string(Positions p);
std::optional<Variant> parse_variant(std::string_view s);
std::optional<MaskKind> parse_mask(std::string_view s);
std::optional<Kernel> parse_kernel(std::string_view s);
std::optional<Positions> parse_positions(std::string_view s);
std::string_view to_string(RopePairing p);
std::optional<RopePairing> parse_rope_pairing(std::string_view s);
std::string_view rope_pairing_names();  // "interleaved | rotate_half"

// The accepted spellings, for error messages: "none | causal | sliding_window | custom".
std::string_view variant_names();
std::string_view mask_names();
std::string_view kernel_names();
std::string_view positions_names();

}  // namespace attn
