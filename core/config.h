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
};

// The number of key/value heads G the variant uses; mla expands one per query head from the latent.
int kv_head_count(const AttentionConfig& a);
// Which key/value head query head h reads: h / (H/G).
int kv_head_for(const AttentionConfig& a, int h);

std::string_view to_string(Variant v);
std::string_view to_string(MaskKind m);
std::string_view to_string(Kernel k);
std::optional<Variant> parse_variant(std::string_view s);
std::optional<MaskKind> parse_mask(std::string_view s);
std::optional<Kernel> parse_kernel(std::string_view s);

// The accepted spellings, for error messages: "none | causal | sliding_window | custom".
std::string_view variant_names();
std::string_view mask_names();
std::string_view kernel_names();

}  // namespace attn
