#pragma once
// Deterministic initialisation. Each entry depends only on (seed, matrix, row, column), so growing a
// matrix (a new head, a new token) keeps every existing entry and the same file always gives the same numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "core/matrix.h"
#include "core/scenario.h"

namespace attn {

// One independent stream per matrix, so that editing one never changes another.
enum class SeedStream : std::uint64_t {
  W_Q = 1,
  W_K = 2,
  W_V = 3,
  W_O = 4,
  Embeddings = 5,         // rows for tokens the editor adds
  ContextEmbeddings = 6,  // the same for the context side
  W_DKV = 7,
  W_UK = 8,
  W_UV = 9,
  W_DQ = 10,
  W_UQ = 11,
  W_P = 12,
  W_QR = 13,
  W_KR = 14,
  W_QI = 15,
  W_KI = 16,
  W_wI = 17,
  Unembedding = 18,  // a model's (d_model, vocab)
  Ffn_W_1 = 19,      // a model layer's feed-forward weights
  Ffn_W_2 = 20,
  Ffn_W_3 = 21,
  b_Q = 22,  // biases are zeros unless given: their streams are kept apart all the same
  b_K = 23,
  b_V = 24,
  b_O = 25,
};

SeedStream seed_stream(WeightId id);

// Values are multiples of 0.1 in [-1, 1]: small enough to multiply by hand on the board.
double seeded_value(std::uint64_t seed, SeedStream stream, std::int64_t row, std::int64_t col);
// Each value times `scale`, made in place: a scaled copy would hold the matrix twice for a moment.
Matrix seeded_matrix(std::uint64_t seed, SeedStream stream, int rows, int cols, double scale = 1.0);

// The embedding row of token `index` for a token the user adds: deterministic, like the weights.
Matrix seeded_embedding_row(std::uint64_t seed, SeedStream stream, int index, int d_model);

// Exactly the weights the scenario's variant uses: the file's where given, seeded otherwise.
Weights resolve_weights(const Scenario& s);
// Whether `w` holds every weight the scenario's configuration uses, each in the shape it needs.
bool weights_fit(const Weights& w, const Scenario& s);
// resolve_weights(s) from weights resolved before (kept across edits that leave them alone), without drawing
// any again. Throws std::invalid_argument unless weights_fit(resolved, s).
Weights resolve_weights(const Scenario& s, const Weights& resolved);

// Whether resolve_weights gives the same for both: an edit of the embeddings or the mask leaves the weights
// as they were, and the window need not draw them again.
bool same_resolved_weights(const Scenario& a, const Scenario& b);

// After the configuration changed (more heads, another variant): forgets each given weight the variant no
// longer uses or whose shape no longer fits, so it is drawn from the seed. Returns one sentence per weight.
std::vector<std::string> drop_unfit_weights(Scenario& s);

}  // namespace attn
