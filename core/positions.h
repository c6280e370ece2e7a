#pragma once
// Where a token's position enters attention. Absolute positions (sinusoidal, learned) are rows added to the
// embeddings before the projections; RoPE turns each pair of a head's query and key dimensions by an angle
// proportional to the position, after the projections, so that a score depends on positions only through i - j.
#include "core/config.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

// PE[p, 2i] = sin(p / base^(2i/d_model)), PE[p, 2i+1] = cos(p / base^(2i/d_model)) for p in [first, first + n).
Matrix sinusoidal_positions(int first, int n, int d_model, double base);  // (n, d_model)

// The rows absolute positions add for p in [first, first + n): the sinusoidal table or W_P's rows. Empty for
// none and rope. w holds the weights the configuration uses (W_P for learned).
Matrix position_rows(const AttentionConfig& a, const Weights& w, int first, int n, int d_model);  // (n, d_model)

// The angle RoPE turns dims (2i, 2i+1) of a width-d vector at position p by: p * base^(-2i/d).
double rope_angle(int p, int pair, int d, double base);

// Every angle RoPE turns by for positions [first, first + n) and width d: (n, d/2), row p, column i = pair i.
Matrix rope_angles(int first, int n, int d, double base);

// cos and sin of every angle RoPE uses for positions [shift + first, shift + first + n) and width d, computed once
// and shared by every head (the same positions turn every head alike). The shift (position_offset) is turned
// separately and composed, so shifted rows differ only through first + r (see positions.cpp).
struct RopeTable {
  Matrix cos;  // (n, d/2)
  Matrix sin;  // (n, d/2)
};
RopeTable rope_table(int first, int n, int d, double base, int shift = 0);

// Each row r of x (n, d) turned as the vector at row r of the table: for each pair (a, b) of dims
// (2i, 2i+1), (a cos - b sin, a sin + b cos). d is even (validate refuses odd widths with rope).
Matrix rotate(const Matrix& x, const RopeTable& table);
// Row r at position shift + first + r.
Matrix rotate(const Matrix& x, int first, double base, int shift = 0);

}  // namespace attn
