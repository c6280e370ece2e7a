#include "app/cli/checkpoint_input.h"

#include <malloc.h>

#include <filesystem>

#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {
namespace {

std::string positions_key(const CheckpointModel& m) {
  return m.config().family == ModelFamily::Gpt2 ? "n_positions" : "max_position_embeddings";
}

}  // namespace

void reuse_freed_layers() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // GPT-2's largest converted matrix is 19 MiB, Qwen2.5-0.5B's 33 MiB
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

bool is_model_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

CheckpointText open_checkpoint_text(const std::string& folder, const std::string& text, std::int64_t budget) {
  if (text.empty()) throw InputError("--text", "empty: give the text the model reads");
  if (text.size() > kMaxTextBytes)
    throw InputError("--text", "at most " + thousands(kMaxTextBytes) + " bytes (found " + thousands(text.size()) + ")");
  CheckpointText c{CheckpointModel::open(folder, budget), {}};
  c.text = encode(c.model->tokenizer(), text);
  const auto n = static_cast<std::int64_t>(c.text.ids.size());
  const int positions = c.model->model().max_positions;
  if (n == 0) throw InputError("--text", "makes no tokens with this model's tokenizer");
  if (n > positions)
    throw InputError("--text", thousands(static_cast<std::uint64_t>(n)) + " tokens, more than the model's " +
                                   thousands(static_cast<std::uint64_t>(positions)) + " positions (config.json's " +
                                   positions_key(*c.model) + ")");
  // Past the model's positions, the engine's own bounds: 4,096 tokens, and every layer's heads x n x n cells.
  if (n > limits::kMaxTokens)
    throw InputError("--text", thousands(static_cast<std::uint64_t>(n)) + " tokens, more than the " +
                                   thousands(static_cast<std::uint64_t>(limits::kMaxTokens)) + " the lab computes");
  if (const std::int64_t cells = std::int64_t(c.model->config().heads) * n * n; cells > limits::kMaxAttentionCells)
    throw InputError("--text",
                     thousands(static_cast<std::uint64_t>(n)) + " tokens make heads x n x n = " +
                         thousands(static_cast<std::uint64_t>(cells)) + " attention cells a layer, more than the " +
                         thousands(static_cast<std::uint64_t>(limits::kMaxAttentionCells)) + " a trace may hold");
  for (std::size_t i = 0; i < c.text.ids.size(); ++i)
    if (c.text.ids[i] >= c.model->config().vocab)
      throw InputError("--text", "token " + std::to_string(i) + " has id " + std::to_string(c.text.ids[i]) +
                                     ", past the model's " + thousands(std::uint64_t(c.model->config().vocab)) +
                                     " embedding rows (config.json's vocab_size)");
  return c;
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
  return limits::kProgramBytes + m.layer_bytes() + L * stream + (keep_heads ? L * heads : heads) + vocab;
}

Scenario checkpoint_layer_scenario(const CheckpointText& c, int layer, std::int64_t budget) {
  const CheckpointModel& m = *c.model;
  const int layers = static_cast<int>(m.model().layers.size());
  if (layer >= layers)
    throw InputError("--layer",
                     "the model has layers 0.." + std::to_string(layers - 1) + " but found " + std::to_string(layer));
  const auto n = static_cast<std::int64_t>(c.text.ids.size());
  reuse_freed_layers();
  check_memory_budget(checkpoint_run_bytes(m, n, false, layer + 1 == layers), budget,
                      "running " + m.name() + " on the text", "a shorter text");
  // The layers before it run with no heads kept; the scenario reads what layer L's attention read.
  const ModelTrace t = run_model(m.model(), c.text.pieces, c.text.ids, m,
                                 ModelRunOptions{.layers = layer + 1, .kept = std::vector<int>{}});
  return layer_scenario(m.model(), m.layer(layer), layer, c.text.pieces,
                        t.layers[static_cast<std::size_t>(layer)].attention.x);
}

}  // namespace attn::cli
