#pragma once
// Deterministic initialisation. Each entry depends only on (seed, matrix, row, column), so growing a
// matrix (a new head, a new token) keeps every existing entry and the same file always gives the same numbers.
#include <cstdint>

#include "core/matrix.h"
#include "core/scenario.h"

namespace attn {

// One independent stream per matrix, so that editing one never changes another.
enum class SeedStream : std::uint64_t {
  W_Q = 1,
  W_K = 2,
  W_V = 3,
  W_O = 4,
  Embeddings = 5,
  ContextEmbeddings = 6,
};

// Values are multiples of 0.1 in [-1, 1]: small enough to multiply by hand on the board.
double seeded_value(std::uint64_t seed, SeedStream stream, std::int64_t row, std::int64_t col);
Matrix seeded_matrix(std::uint64_t seed, SeedStream stream, int rows, int cols);

// The full set of weights the engine uses: the file's where given, seeded otherwise.
struct Weights {
  Matrix W_Q;                 // (d_model, H*d)
  Matrix W_K;                 // (d_model, H*d)
  Matrix W_V;                 // (d_model, H*d)
  std::optional<Matrix> W_O;  // (H*d, d_model), only with output_projection
};

Weights resolve_weights(const Scenario& s);

}  // namespace attn
