#include "core/io/checkpoint_text.h"

#include <algorithm>

#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/text_quality.h"
#include "core/validate.h"

namespace attn {
namespace {

std::string positions_key(const CheckpointModel& m) {
  return m.config().family == ModelFamily::Gpt2 ? "n_positions" : "max_position_embeddings";
}

}  // namespace

void check_text_size(const std::string& text, const std::string& field) {
  if (text.empty()) throw InputError(field, "empty: give the text the model reads");
  if (text.size() > kMaxTextBytes)
    throw InputError(field, "at most " + thousands(kMaxTextBytes) + " bytes (found " + thousands(text.size()) + ")");
}

namespace {

// The text's tokens, each one the model has an embedding row for.
Encoding encode_for(const CheckpointModel& m, const std::string& text, const std::string& field) {
  check_text_size(text, field);
  Encoding e = encode(m.tokenizer(), text);
  if (e.ids.empty()) throw InputError(field, "makes no tokens with this model's tokenizer");
  for (std::size_t i = 0; i < e.ids.size(); ++i)
    if (e.ids[i] >= m.config().vocab)
      throw InputError(field, "token " + std::to_string(i) + " has id " + std::to_string(e.ids[i]) +
                                  ", past the model's " + thousands(std::uint64_t(m.config().vocab)) +
                                  " embedding rows (config.json's vocab_size)");
  return e;
}

}  // namespace

Encoding checkpoint_long_text(const CheckpointModel& m, const std::string& text, const std::string& field) {
  Encoding e = encode_for(m, text, field);
  if (e.ids.size() < 2) throw InputError(field, "makes one token: a loss needs a next token to predict");
  return e;
}

int checkpoint_window(const CheckpointModel& m) {
  int n = std::min(m.model().max_positions, kMaxEvalWindow);
  while (std::int64_t(m.config().heads) * n * n > limits::kMaxAttentionCells) n /= 2;
  return std::max(n, 2);
}

std::int64_t encoding_bytes(const Encoding& e) {
  // The vectors' room to grow counts too: it is resident when carved from memory freed before.
  std::int64_t bytes = 4 * static_cast<std::int64_t>(e.ids.capacity() + e.words.capacity()) +
                       static_cast<std::int64_t>(sizeof(std::string) * (e.pieces.capacity() - e.pieces.size()));
  for (const std::string& p : e.pieces) bytes += piece_bytes(p);
  return bytes;
}

Encoding checkpoint_text(const CheckpointModel& m, const std::string& text, const std::string& field) {
  Encoding e = encode_for(m, text, field);
  const auto n = static_cast<std::int64_t>(e.ids.size());
  const int positions = m.model().max_positions;
  if (n > positions)
    throw InputError(field, thousands(static_cast<std::uint64_t>(n)) + " tokens, more than the model's " +
                                thousands(static_cast<std::uint64_t>(positions)) + " positions (config.json's " +
                                positions_key(m) + ")");
  // Past the model's positions, the engine's own bounds: 4,096 tokens, and every layer's heads x n x n cells.
  if (n > limits::kMaxTokens)
    throw InputError(field, thousands(static_cast<std::uint64_t>(n)) + " tokens, more than the " +
                                thousands(static_cast<std::uint64_t>(limits::kMaxTokens)) + " the lab computes");
  if (const std::int64_t cells = std::int64_t(m.config().heads) * n * n; cells > limits::kMaxAttentionCells)
    throw InputError(field,
                     thousands(static_cast<std::uint64_t>(n)) + " tokens make heads x n x n = " +
                         thousands(static_cast<std::uint64_t>(cells)) + " attention cells a layer, more than the " +
                         thousands(static_cast<std::uint64_t>(limits::kMaxAttentionCells)) + " a trace may hold");
  return e;
}

std::int64_t checkpoint_run_bytes(const CheckpointModel& m, std::int64_t n, bool keep_heads, bool logits) {
  const CheckpointConfig& c = m.config();
  const std::int64_t D = c.d_model, H = c.heads, d = c.head_dim, V = c.vocab, L = c.layers;
  const std::int64_t stream = 8 * n * (8 * D + c.d_ff);  // a layer's residuals, norms, FFN output and hidden
  // A kept layer: every head's q, k, v, weights and output, the attention weights its trace shares and each head's
  // copy of its rows of W_O.
  const std::int64_t heads = 8 * H * (4 * n * d + 2 * n * n) + 8 * D * 2 * (H + c.kv_heads) * d + 8 * D * H * d;
  // The logits, the probabilities and the unembedding's blocks being read.
  const std::int64_t vocab = logits ? 8 * 2 * n * V + CheckpointModel::unembedding_bytes(D) : 0;
  return limits::kProgramBytes + m.held_bytes() + m.layer_bytes() + L * stream + (keep_heads ? L * heads : heads) +
         vocab;
}

std::int64_t checkpoint_eval_bytes(const CheckpointModel& m, int window, bool converted) {
  const CheckpointConfig& c = m.config();
  const std::int64_t D = c.d_model, V = c.vocab, kv = 2 * std::int64_t{c.kv_heads} * c.head_dim;
  // Each model's pass without its logits, and a block of 64 rows of log-probabilities (and a temporary) per model.
  const std::int64_t pass = checkpoint_run_bytes(m, window, false, false) - limits::kProgramBytes;
  const std::int64_t block = 8 * 64 * V * 2 + CheckpointModel::unembedding_bytes(D);
  // A converted layer: its [W_K | W_V], their SVD (U, V and the stacked copy) and its new weights.
  const std::int64_t layer = 8 * (3 * D * kv + kv * kv + 2 * D * std::int64_t{c.heads} * c.head_dim);
  return limits::kProgramBytes + (converted ? 2 * (pass + block) + layer : pass + block);
}

std::int64_t text_eval_bytes(const CheckpointModel& m, const Encoding& text, int window, bool converted) {
  return checkpoint_eval_bytes(m, window, converted) + encoding_bytes(text) +
         windowed_run_bytes(text.pieces, window, m.model().d_model);
}

}  // namespace attn
