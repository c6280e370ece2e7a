#pragma once
// Matrices are row-major so that what is stored is what is shown: row i is token i.
#include <Eigen/Dense>

namespace attn {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

}  // namespace attn
