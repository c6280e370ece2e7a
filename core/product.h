#pragma once
// The large matrix products of a trace, shared among the threads.
#include "core/matrix.h"

namespace attn {

// a b, with blocks of 128 rows of a shared among the threads (Eigen's own threading is off:
// core/CMakeLists.txt). The blocks are fixed, so the result does not depend on the thread count; a block
// of 128 rows also runs faster on one thread than the whole product does (a narrow b especially).
Matrix product(const Matrix& a, const Matrix& b);

}  // namespace attn
