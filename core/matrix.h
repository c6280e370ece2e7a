#pragma once
// Matrices are row-major so that what is stored is what is shown: row i is token i.
#include <Eigen/Dense>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace attn {

// A hidden score: softmax gives it exactly 0 weight.
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Worth sharing among threads: below this many multiply-adds, waking them costs more than it saves.
inline constexpr std::int64_t kParallelWork = std::int64_t(1) << 20;

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

// f(r, n) for rows [r, r + n) of `rows`, in fixed blocks of 128, shared among the threads when the whole is `work`
// operations or more than kParallelWork. A block is the same arithmetic on any thread, so the result has the same
// bits on any number of them.
template <typename F>
void for_row_blocks(Eigen::Index rows, std::int64_t work, F&& f) {
  constexpr Eigen::Index kBlock = 128;
  const Eigen::Index blocks = (rows + kBlock - 1) / kBlock;
  [[maybe_unused]] const bool big = work > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) if (big)
#endif
  for (Eigen::Index b = 0; b < blocks; ++b) f(b * kBlock, std::min(kBlock, rows - b * kBlock));
}

}  // namespace attn
