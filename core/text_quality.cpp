#include "core/text_quality.h"

#include <algorithm>
#include <cmath>

namespace attn {

void PredictionSums::add(const PredictionSums& o) {
  predicted += o.predicted;
  loss += o.loss;
  converted_loss += o.converted_loss;
  agreed += o.agreed;
  kl += o.kl;
}

namespace {

double per_position(double sum, std::int64_t n) { return n == 0 ? 0.0 : sum / static_cast<double>(n); }

// Each row's log-softmax, shifted by the row's largest value.
Matrix log_softmax_rows(const Matrix& logits) {
  Matrix shifted = logits.colwise() - logits.rowwise().maxCoeff();
  const Vector log_z = shifted.array().exp().rowwise().sum().log().matrix();
  shifted.colwise() -= log_z;
  return shifted;
}

// The likeliest column of a row, the lower one on a tie.
Eigen::Index likeliest(const Matrix& rows, Eigen::Index r) {
  Eigen::Index best = 0;
  rows.row(r).maxCoeff(&best);
  return best;
}

constexpr Eigen::Index kRowsPerBlock = 64;

// What the unembedding reads: the pass stops before the logits (read a block of rows at a time after). A window of
// one token predicts nothing: no pass.
Matrix final_stream(const EvalModel& m, const std::vector<int>& ids, const std::vector<std::string>& pieces) {
  if (ids.size() < 2) return Matrix(0, m.config.d_model);
  return run_model(m.config, pieces, ids, m.weights, {.kept = std::vector<int>{}, .logits = false}).final;
}

}  // namespace

double PredictionSums::mean_loss() const { return per_position(loss, predicted); }
double PredictionSums::mean_converted_loss() const { return per_position(converted_loss, predicted); }
double PredictionSums::top1_agreement() const { return per_position(static_cast<double>(agreed), predicted); }
double PredictionSums::mean_kl() const { return per_position(kl, predicted); }

PredictionSums prediction_sums(const ModelWeights& original, const Matrix& final_original,
                               const ModelWeights* converted, const Matrix* final_converted,
                               const std::vector<int>& ids) {
  PredictionSums s;
  const auto n = static_cast<Eigen::Index>(ids.size()) - 1;  // positions that predict a next token
  for (Eigen::Index r = 0; r < n; r += kRowsPerBlock) {
    const Eigen::Index rows = std::min(kRowsPerBlock, n - r);
    const Matrix log_p = log_softmax_rows(original.logits(final_original.middleRows(r, rows)));  // (rows, vocab)
    Matrix log_q;
    if (converted) log_q = log_softmax_rows(converted->logits(final_converted->middleRows(r, rows)));
    for (Eigen::Index i = 0; i < rows; ++i) {
      const int next = ids[static_cast<std::size_t>(r + i + 1)];
      s.loss -= log_p(i, next);
      if (!converted) continue;
      s.converted_loss -= log_q(i, next);
      s.agreed += likeliest(log_p, i) == likeliest(log_q, i) ? 1 : 0;
      // Never below 0 but by rounding: -1e-17 where the two distributions are the same.
      s.kl += std::max(0.0, (log_p.row(i).array().exp() * (log_p.row(i) - log_q.row(i)).array()).sum());
    }
  }
  s.predicted = std::max<Eigen::Index>(n, 0);
  return s;
}

std::int64_t piece_bytes(const std::string& piece) {
  // Past the buffer inside the string, malloc's block: the characters, the terminator and an 8-byte header, rounded
  // up to 16.
  const auto heap = static_cast<std::int64_t>(piece.capacity()) + 1 + 8;
  return static_cast<std::int64_t>(sizeof(std::string)) + (piece.capacity() > 15 ? (heap + 15) / 16 * 16 : 0);
}

namespace {

// A window's own vectors (ids, pieces, final) and malloc's header on each.
constexpr std::int64_t kWindowBytes = 3 * (32 + 16);

}  // namespace

std::int64_t windowed_run_bytes(const std::vector<std::string>& pieces, int window, int d_model) {
  const auto tokens = static_cast<std::int64_t>(pieces.size());
  const int windows = window_count(tokens, window);
  std::int64_t bytes = windows * kWindowBytes;
  for (std::int64_t i = 0; i < tokens; ++i) {
    // A boundary token (the last of every window but the last) is in two windows.
    const int copies = i > 0 && i < tokens - 1 && i % (window - 1) == 0 ? 2 : 1;
    bytes += copies * (8 * std::int64_t{d_model} + 4 + piece_bytes(pieces[static_cast<std::size_t>(i)]));
  }
  return bytes;
}

int window_count(std::int64_t tokens, int window) {
  if (tokens <= 1) return 1;
  return static_cast<int>((tokens - 2) / (window - 1) + 1);
}

WindowedRun run_windows(const EvalModel& m, const std::vector<int>& ids, const std::vector<std::string>& pieces,
                        int window, const std::function<void(int, int)>& on_window) {
  WindowedRun run;
  const auto n = static_cast<std::int64_t>(ids.size());
  const int windows = window_count(n, window);
  for (int k = 0; k < windows; ++k) {
    // Window k starts at the last token of window k-1, which predicts nothing there.
    const std::int64_t start = std::int64_t{k} * (window - 1);
    const auto first = static_cast<std::ptrdiff_t>(start);
    const auto last = static_cast<std::ptrdiff_t>(std::min(n, start + window));
    run.ids.emplace_back(ids.begin() + first, ids.begin() + last);
    run.pieces.emplace_back(pieces.begin() + first, pieces.begin() + last);
    run.finals.push_back(final_stream(m, run.ids.back(), run.pieces.back()));
    if (on_window) on_window(k + 1, windows);
  }
  return run;
}

PredictionSums compare_windows(const WindowedRun& run, const ModelWeights& original, const EvalModel* converted,
                               const std::function<void(int, int)>& on_window) {
  PredictionSums total;
  const int windows = static_cast<int>(run.ids.size());
  for (int k = 0; k < windows; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (!converted) {
      total.add(prediction_sums(original, run.finals[i], nullptr, nullptr, run.ids[i]));
    } else {
      const Matrix final = final_stream(*converted, run.ids[i], run.pieces[i]);
      total.add(prediction_sums(original, run.finals[i], &converted->weights, &final, run.ids[i]));
    }
    if (on_window) on_window(k + 1, windows);
  }
  return total;
}

PredictionSums evaluate_text(const EvalModel& original, const EvalModel* converted, const std::vector<int>& ids,
                             const std::vector<std::string>& pieces, int window) {
  return compare_windows(run_windows(original, ids, pieces, window), original.weights, converted);
}

}  // namespace attn
