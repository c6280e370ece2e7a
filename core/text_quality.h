#pragma once
// How well a model predicts a text, and how far a converted model's next-token distributions are from the
// original's: the mean loss in nats over the predicted tokens 1..N-1, the share of positions whose likeliest next
// token is the same, and the mean KL(original || converted). The logits are read a block of rows at a time, so a
// vocabulary of 150,000 costs a block's worth, not the text's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model.h"

namespace attn {

// Sums over predicted positions, so that windows of a long text add up.
struct PredictionSums {
  std::int64_t predicted = 0;
  double loss = 0;            // sum of -log p_original(next token)
  double converted_loss = 0;  // sum of -log p_converted(next token)
  std::int64_t agreed = 0;    // positions whose likeliest next tokens (the lower id on a tie) are the same
  double kl = 0;              // sum of KL(p_original || p_converted) in nats
  void add(const PredictionSums& o);
  double mean_loss() const;            // loss / predicted (0 for none)
  double mean_converted_loss() const;  // converted_loss / predicted
  double top1_agreement() const;       // agreed / predicted
  double mean_kl() const;              // kl / predicted
};

// Positions 0..N-2 of final streams (N, d_model) through the unembeddings, in blocks of rows; `converted` and
// `final_converted` may be null (one model: converted_loss, agreed and kl stay 0).
PredictionSums prediction_sums(const ModelWeights& original, const Matrix& final_original,
                               const ModelWeights* converted, const Matrix* final_converted,
                               const std::vector<int>& ids);

// One model's forward pass as the evaluation runs it.
struct EvalModel {
  const Model& config;
  const ModelWeights& weights;
};

// A text cut into windows of at most `window` tokens, each read afresh (a text longer than the model's positions), and
// the original model's final stream on each: computed once, compared with any number of conversions. Consecutive
// windows share their boundary token (window k starts at the last token of window k-1): a window's first token is
// predicted by the window before, so every token 1..N-1 is predicted exactly once and no window is one token.
struct WindowedRun {
  std::vector<std::vector<int>> ids;
  std::vector<std::vector<std::string>> pieces;  // the windows' labels
  std::vector<Matrix> finals;                    // per window (n, d_model)
};
// `on_window(done, windows)` after each.
WindowedRun run_windows(const EvalModel& m, const std::vector<int>& ids, const std::vector<std::string>& pieces,
                        int window, const std::function<void(int, int)>& on_window = {});
// The original's predictions (its weights, its finals in `run`) against a converted model run on the same windows,
// or alone without one.
PredictionSums compare_windows(const WindowedRun& run, const ModelWeights& original, const EvalModel* converted,
                               const std::function<void(int, int)>& on_window = {});
// The bytes a piece holds: the string itself and, past its short-string buffer, its heap block.
std::int64_t piece_bytes(const std::string& piece);
// The bytes run_windows keeps beside the passes for a text of these pieces: every window's final stream (a row of
// d_model per token), its ids, its copies of the pieces (a boundary token's twice) and the window's own vectors.
std::int64_t windowed_run_bytes(const std::vector<std::string>& pieces, int window, int d_model);
// run_windows, then compare_windows.
PredictionSums evaluate_text(const EvalModel& original, const EvalModel* converted, const std::vector<int>& ids,
                             const std::vector<std::string>& pieces, int window);
// How many windows of at most `window` tokens (at least 2) the text is read in: ceil((N - 1) / (window - 1)), as
// consecutive windows share a token.
int window_count(std::int64_t tokens, int window);

}  // namespace attn
