#pragma once
// A scenario: the document the user edits. Plain data; the engine turns it into a Trace.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

// Token labels with one embedding row each.
struct TokenRows {
  std::vector<std::string> tokens;
  Matrix embeddings;  // (N, d_model)
};

struct Scenario {
  std::string name;
  std::string description;
  TokenRows input;                   // the query side (and the key/value side for self-attention)
  std::optional<TokenRows> context;  // cross-attention: the key/value side
  AttentionConfig attention;
  Weights weights;  // as the file gives them: any missing one is drawn from the seed
  std::uint64_t seed = 1;
  // Weights drawn from the seed are multiplied by it. At 1 they are multiples of 0.1 to work by hand; a
  // model-sized layer wants about 1/sqrt(d_model) times that, or every softmax row is one-hot.
  double weight_scale = 1.0;

  int d_model() const { return static_cast<int>(input.embeddings.cols()); }
  int n_q() const { return static_cast<int>(input.tokens.size()); }
  const TokenRows& kv_side() const { return context ? *context : input; }
  int n_kv() const { return static_cast<int>(kv_side().tokens.size()); }
};

// Learned positions need a row of W_P for each of these: the shift, then one per token of the longer side.
inline int positions_needed(const Scenario& s) { return first_position(s.attention) + std::max(s.n_q(), s.n_kv()); }

// Upper bounds that keep any file, however hostile, from asking for absurd amounts of memory.
namespace limits {
inline constexpr int kMaxTokens = 4096;
inline constexpr int kMaxModelDim = 4096;
inline constexpr int kMaxHeads = 256;
inline constexpr int kMaxHeadDim = 1024;
inline constexpr int kMaxProjectedDim = 8192;                              // H * d, and the latent widths
inline constexpr std::int64_t kMaxAttentionCells = std::int64_t(1) << 27;  // heads x N_Q x N_KV: 8 heads at 4096 tokens
// What a trace may hold is the memory budget's (core/memory_budget.h), a setting, not a limit of the file.
inline constexpr std::int64_t kMaxMatrixElements = std::int64_t(1) << 22;  // any weight, given or drawn (32 MiB)
inline constexpr double kMaxAbsValue = 1e12;        // keeps every product of scores far from overflow
inline constexpr double kMaxWeightScale = 100.0;    // seeded weights stay within [-100, 100], far inside that
inline constexpr int kMaxPositionOffset = 1 << 20;  // RoPE's angles stay exact far past any classroom shift
inline constexpr int kMaxVocab = 1 << 16;           // a model's tokens
// Text the window draws and every undo step and autosave copies: far past any real name, description or token
// (a tokenizer's longest tokens are tens of bytes), far below what would weigh beside the matrices.
inline constexpr std::size_t kMaxNameBytes = 200;
inline constexpr std::size_t kMaxDescriptionBytes = 16384;
inline constexpr std::size_t kMaxLabelBytes = 256;
inline constexpr int kMaxLayers = 64;               // a model's layers
inline constexpr std::int64_t kMaxModelParameters = std::int64_t(1) << 25;  // a model's weights: 256 MiB
}  // namespace limits

}  // namespace attn
