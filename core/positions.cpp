#include "core/positions.h"

#include <cmath>

namespace attn {

Matrix sinusoidal_positions(int first, int n, int d_model, double base) {
  Matrix pe(n, d_model);
  for (int c = 0; c < d_model; ++c) {
    const double frequency = std::pow(base, -static_cast<double>(c - c % 2) / d_model);
    for (int r = 0; r < n; ++r) {
      const double angle = (first + r) * frequency;
      pe(r, c) = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return pe;
}

Matrix position_rows(const AttentionConfig& a, const Weights& w, int first, int n, int d_model) {
  switch (a.positions) {
    case Positions::Sinusoidal: return sinusoidal_positions(first, n, d_model, a.rope_base);
    case Positions::Learned: return w.W_P->middleRows(first, n);
    case Positions::None:
    case Positions::Rope: break;
  }
  return {};
}

double rope_angle(int p, int pair, int d, double base) { return p * std::pow(base, -2.0 * pair / d); }

Matrix rope_angles(int first, int n, int d, double base) {
  return Matrix::NullaryExpr(n, d / 2, [&](Eigen::Index r, Eigen::Index i) {
    return rope_angle(first + static_cast<int>(r), static_cast<int>(i), d, base);
  });
}

RopeTable rope_table(int first, int n, int d, double base, int shift) {
  RopeTable t{Matrix(n, d / 2), Matrix(n, d / 2)};
  for (int i = 0; i < d / 2; ++i) {
    // cos and sin of shift·θ + (first + r)·θ by the sum formulas: every row shares the one rounding of the shift's
    // angle, so a score (which only sees the difference of two rows' angles) does not see the shift at all. At
    // shift 0 this is cos 0 = 1 and sin 0 = 0: exactly the unshifted table.
    const double shifted = rope_angle(shift, i, d, base), cs = std::cos(shifted), ss = std::sin(shifted);
    for (int r = 0; r < n; ++r) {
      const double angle = rope_angle(first + r, i, d, base), c = std::cos(angle), s = std::sin(angle);
      t.cos(r, i) = cs * c - ss * s;
      t.sin(r, i) = ss * c + cs * s;
    }
  }
  return t;
}

Matrix rotate(const Matrix& x, const RopeTable& table) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r)
    for (Eigen::Index i = 0; i < table.cos.cols(); ++i) {
      const double c = table.cos(r, i), s = table.sin(r, i), a = x(r, 2 * i), b = x(r, 2 * i + 1);
      out(r, 2 * i) = a * c - b * s;
      out(r, 2 * i + 1) = a * s + b * c;
    }
  return out;
}

Matrix rotate(const Matrix& x, int first, double base, int shift) {
  return rotate(x, rope_table(first, static_cast<int>(x.rows()), static_cast<int>(x.cols()), base, shift));
}

}  // namespace attn
