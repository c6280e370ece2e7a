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

RopeSpec rope_spec(const AttentionConfig& a) {
  return {.width = rope_width(a), .base = a.rope_base, .scaling = a.rope_scaling, .pairing = a.rope_pairing};
}

double rope_frequency(const RopeSpec& s, int pair) {
  const double f = std::pow(s.base, -2.0 * pair / s.width);
  if (!s.scaling) return f;
  const RopeScaling& c = *s.scaling;
  const double wavelength = 2 * M_PI / f, l0 = c.original_max_positions;
  if (wavelength < l0 / c.high_freq_factor) return f;
  if (wavelength > l0 / c.low_freq_factor) return f / c.factor;
  const double blend = (l0 / wavelength - c.low_freq_factor) / (c.high_freq_factor - c.low_freq_factor);
  return (1 - blend) * f / c.factor + blend * f;
}

double rope_angle(const RopeSpec& s, int p, int pair) { return p * rope_frequency(s, pair); }

std::pair<int, int> rope_dims(const RopeSpec& s, int pair) {
  if (s.pairing == RopePairing::RotateHalf) return {pair, pair + s.width / 2};
  return {2 * pair, 2 * pair + 1};
}

int rope_pair_of(const RopeSpec& s, int dim) {
  return s.pairing == RopePairing::RotateHalf ? dim % (s.width / 2) : dim / 2;
}

Matrix rope_angles(const RopeSpec& s, int first, int n) {
  return Matrix::NullaryExpr(n, s.width / 2, [&](Eigen::Index r, Eigen::Index i) {
    return rope_angle(s, first + static_cast<int>(r), static_cast<int>(i));
  });
}

RopeTable rope_table(const RopeSpec& s, int first, int n, int shift) {
  RopeTable t{Matrix(n, s.width / 2), Matrix(n, s.width / 2), s.pairing};
  for (int i = 0; i < s.width / 2; ++i) {
    // cos and sin of shift·θ + (first + r)·θ by the sum formulas: every row shares the one rounding of the shift's
    // angle, so a score (which only sees the difference of two rows' angles) does not see the shift at all. At
    // shift 0 this is cos 0 = 1 and sin 0 = 0: exactly the unshifted table.
    const double shifted = rope_angle(s, shift, i), cs = std::cos(shifted), ss = std::sin(shifted);
    for (int r = 0; r < n; ++r) {
      const double angle = rope_angle(s, first + r, i), c = std::cos(angle), sn = std::sin(angle);
      t.cos(r, i) = cs * c - ss * sn;
      t.sin(r, i) = ss * c + cs * sn;
    }
  }
  return t;
}

Matrix rotate(const Matrix& x, const RopeTable& table) {
  Matrix out(x.rows(), x.cols());
  const RopeSpec spec{.width = static_cast<int>(2 * table.cos.cols()), .pairing = table.pairing};
  for (Eigen::Index r = 0; r < x.rows(); ++r)
    for (int i = 0; i < spec.width / 2; ++i) {
      const auto [ia, ib] = rope_dims(spec, i);
      const double c = table.cos(r, i), s = table.sin(r, i), a = x(r, ia), b = x(r, ib);
      out(r, ia) = a * c - b * s;
      out(r, ib) = a * s + b * c;
    }
  return out;
}

Matrix rotate(const Matrix& x, int first, const AttentionConfig& a) {
  RopeSpec s = rope_spec(a);
  s.width = static_cast<int>(x.cols());
  return rotate(x, rope_table(s, first, static_cast<int>(x.rows()), first_position(a)));
}

}  // namespace attn
