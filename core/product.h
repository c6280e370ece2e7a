#pragma once
// The large matrix products of a trace, shared among the threads.
#include <optional>

#include "core/matrix.h"
#include "core/shared_matrix.h"

namespace attn {

// A product computed before (a trace of the document before an edit), whose tiles stand wherever the tile's rows of
// a and columns of b are the same bits now: the same code on the same numbers gave them.
struct EarlierProduct {
  const Matrix& a;
  const Matrix& b;
  const Matrix& out;  // a b
};
// An earlier product whose b is a weight, absent when the weight was (no tile to take).
inline std::optional<EarlierProduct> earlier_product(const Matrix& a, const SharedMatrix& b, const Matrix& out) {
  if (!b) return std::nullopt;
  return EarlierProduct{a, *b, out};
}

// a b, with blocks of 128 rows of a shared among the threads (Eigen's and OpenBLAS's own threading is off:
// core/CMakeLists.txt, product.cpp). The blocks are fixed, so the result does not depend on the thread count; a block
// of 128 rows also runs faster on one thread than the whole product does (a narrow b especially). With `earlier`
// (same shapes), only the tiles whose inputs changed are computed: a drag on one token's embedding recomputes the
// 128 rows around it.
Matrix product(const Matrix& a, const Matrix& b, const std::optional<EarlierProduct>& earlier = std::nullopt);

}  // namespace attn
