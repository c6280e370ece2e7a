#include "core/same_bits.h"

#include <cstring>

namespace attn {

bool same_bits(ConstRowsRef a, ConstRowsRef b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  if (a.cols() == 0) return true;  // memcmp may not be given a null row, even for 0 bytes
  const auto bytes = static_cast<std::size_t>(a.cols()) * sizeof(double);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    if (std::memcmp(a.row(i).data(), b.row(i).data(), bytes) != 0) return false;
  return true;
}

Eigen::Index first_changed_row(const Matrix& a, const Matrix& b) {
  if (a.cols() == 0) return a.rows();
  const auto bytes = static_cast<std::size_t>(a.cols()) * sizeof(double);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    if (std::memcmp(a.row(i).data(), b.row(i).data(), bytes) != 0) return i;
  return a.rows();
}

}  // namespace attn
