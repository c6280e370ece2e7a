#include "core/same_bits.h"

#include <cstring>

namespace attn {

bool same_bits(ConstRowsRef a, ConstRowsRef b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && first_changed_row(a, b) == a.rows();
}

Eigen::Index first_changed_row(ConstRowsRef a, ConstRowsRef b) {
  if (a.cols() == 0) return a.rows();  // memcmp may not be given a null row, even for 0 bytes
  const auto bytes = static_cast<std::size_t>(a.cols()) * sizeof(double);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    if (std::memcmp(a.row(i).data(), b.row(i).data(), bytes) != 0) return i;
  return a.rows();
}

}  // namespace attn
