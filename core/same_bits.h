#pragma once
// Whether numbers are the same bits (0.0 and -0.0 differ, a NaN equals itself): what decides that a result computed
// earlier from one input stands for the same computation on another.
#include "core/matrix.h"

namespace attn {

// Rows of a row-major matrix, or a block of them.
using ConstRowsRef = Eigen::Ref<const Matrix, 0, Eigen::OuterStride<>>;

// The same shape and the same bits.
bool same_bits(ConstRowsRef a, ConstRowsRef b);

// The first row whose bits differ between a and b, of the same shape (a.rows() when none does).
Eigen::Index first_changed_row(ConstRowsRef a, ConstRowsRef b);

}  // namespace attn
