#pragma once
// Matrices are row-major so that what is stored is what is shown: row i is token i.
#include <Eigen/Dense>

#include <cstdint>
#include <limits>

namespace attn {

// A hidden score: softmax gives it exactly 0 weight.
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Worth sharing among threads: below this many multiply-adds, waking them costs more than it saves.
inline constexpr std::int64_t kParallelWork = std::int64_t(1) << 20;

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

}  // namespace attn
