#include "core/init.h"

namespace attn {
namespace {

// SplitMix64 finaliser: a well-mixed 64-bit hash, identical on every platform.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Matrix given_or_seeded(const std::optional<Matrix>& given, std::uint64_t seed, SeedStream stream, int rows,
                       int cols) {
  return given ? *given : seeded_matrix(seed, stream, rows, cols);
}

}  // namespace

double seeded_value(std::uint64_t seed, SeedStream stream, std::int64_t row, std::int64_t col) {
  std::uint64_t h = mix(seed);
  h = mix(h ^ static_cast<std::uint64_t>(stream));
  h = mix(h ^ static_cast<std::uint64_t>(row));
  h = mix(h ^ static_cast<std::uint64_t>(col));
  return static_cast<double>(static_cast<int>(h % 21) - 10) / 10.0;
}

Matrix seeded_matrix(std::uint64_t seed, SeedStream stream, int rows, int cols) {
  return Matrix::NullaryExpr(rows, cols, [&](Eigen::Index r, Eigen::Index c) { return seeded_value(seed, stream, r, c); });
}

Weights resolve_weights(const Scenario& s) {
  const int d_model = s.d_model();
  const int hd = s.attention.heads * s.attention.head_dim;
  Weights w;
  w.W_Q = given_or_seeded(s.weights.W_Q, s.seed, SeedStream::W_Q, d_model, hd);
  w.W_K = given_or_seeded(s.weights.W_K, s.seed, SeedStream::W_K, d_model, hd);
  w.W_V = given_or_seeded(s.weights.W_V, s.seed, SeedStream::W_V, d_model, hd);
  if (s.attention.output_projection) w.W_O = given_or_seeded(s.weights.W_O, s.seed, SeedStream::W_O, hd, d_model);
  return w;
}

}  // namespace attn
