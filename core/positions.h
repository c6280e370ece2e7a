#pragma once
// Where a token's position enters attention. Absolute positions (sinusoidal, learned) are rows added to the
// embeddings before the projections; RoPE turns each pair of a head's query and key dimensions by an angle
// proportional to the position, after the projections, so that a score depends on positions only through i - j.
#include <optional>
#include <utility>

#include "core/config.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

// PE[p, 2i] = sin(p / base^(2i/d_model)), PE[p, 2i+1] = cos(p / base^(2i/d_model)) for p in [first, first + n).
Matrix sinusoidal_positions(int first, int n, int d_model, double base);  // (n, d_model)

// The rows absolute positions add for p in [first, first + n): the sinusoidal table or W_P's rows. Empty for
// none and rope. w holds the weights the configuration uses (W_P for learned).
Matrix position_rows(const AttentionConfig& a, const Weights& w, int first, int n, int d_model);  // (n, d_model)

// How a configuration turns: the width (rope_width), base, scaling and pairing of its RoPE.
struct RopeSpec {
  int width = 2;
  double base = 10000.0;
  std::optional<RopeScaling> scaling{};
  RopePairing pairing = RopePairing::Interleaved;
};
RopeSpec rope_spec(const AttentionConfig& a);
// The frequency of pair i: base^(-2i/width), changed by the scaling when there is one (Llama 3's bands).
double rope_frequency(const RopeSpec& s, int pair);
// The angle pair i turns by at position p: p * rope_frequency.
double rope_angle(const RopeSpec& s, int p, int pair);
// The two dims pair i turns: (2i, 2i+1) interleaved, (i, i + width/2) rotate_half.
std::pair<int, int> rope_dims(const RopeSpec& s, int pair);
// The pair dim `dim` is turned in: dim / 2 interleaved, dim mod width/2 rotate_half.
int rope_pair_of(const RopeSpec& s, int dim);

// Every angle RoPE turns by for positions [first, first + n): (n, width/2), row p, column i = pair i.
Matrix rope_angles(const RopeSpec& s, int first, int n);

// cos and sin of every angle RoPE uses for positions [shift + first, shift + first + n), computed once and shared by
// every head (the same positions turn every head alike). The shift (position_offset) is turned separately and
// composed, so shifted rows differ only through first + r (see positions.cpp).
struct RopeTable {
  Matrix cos;  // (n, width/2)
  Matrix sin;  // (n, width/2)
  RopePairing pairing = RopePairing::Interleaved;
};
RopeTable rope_table(const RopeSpec& s, int first, int n, int shift = 0);

// Each row r of x (n, width) turned as the vector at row r of the table: for each pair (a, b) of dims (rope_dims),
// (a cos - b sin, a sin + b cos). The width is even (validate refuses odd widths with rope).
Matrix rotate(const Matrix& x, const RopeTable& table);
// Row r at position first_position(a) + first + r, as a turns (x as wide as a's rope_width).
Matrix rotate(const Matrix& x, int first, const AttentionConfig& a);

}  // namespace attn
