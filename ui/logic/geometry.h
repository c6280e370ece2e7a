#pragma once
// The geometry of a score: a head's queries and keys on one pair of dimensions, as arrows in the plane. On that
// pair q·k is |q| |k| cos φ, φ the angle between them; the other dimensions add the rest of the score. With RoPE
// each arrow is the one before the turn turned by its position's angle, so the angle between a query and a key
// changes by (i - j)·θ and nothing else. Window-free: ui/panels draws it with ui::VectorPlot.
#include <string>
#include <vector>

#include "core/attention.h"

namespace attn::ui {

// A pair of columns of the vectors the scores read (q_rope / k_rope with RoPE, else q / k).
struct PlanePair {
  int a = 0, b = 1;
  int rope_pair = -1;  // the pair RoPE turns these columns as (its frequency index), or -1: not turned
  std::string label;   // "dims 0, 1", MLA "q_r dims 0, 1"
};
// The pairs a head can be seen on: (0, 1), (2, 3), ... and for an odd width the last two, (d-2, d-1); MLA with
// RoPE adds the decoupled part's pairs. Empty for a head of width 1.
std::vector<PlanePair> plane_pairs(const Trace& t);

struct PlaneVector {
  double x = 0, y = 0;                // as the scores read it
  double x_before = 0, y_before = 0;  // before RoPE's turn (the same without one)
  double turn = 0;                    // the angle it was turned by, radians (0 without RoPE)
};

struct PlaneGeometry {
  PlanePair pair;
  std::vector<PlaneVector> queries, keys;  // every row of the head, on the pair
  int row = 0, col = 0;                    // the query and the key whose score is explained
  double q_length = 0, k_length = 0;
  double angle = 0;       // φ between query row and key col, in [0, π] (0 when either is the zero vector)
  double pair_score = 0;  // q·k on the pair: |q| |k| cos φ
  double score = 0;       // the head's whole score (i, j), before scaling
};

// Head `head` on pair `pair` (an index into plane_pairs), with query `row` and key `col` explained. Indices are
// clamped into range.
PlaneGeometry plane_geometry(const Trace& t, int head, int pair, int row, int col);

// Token names, a repeated one with its row ("the 3"): two arrows, menu items or vectors must never read alike.
std::vector<std::string> distinct_names(const std::vector<std::string>& names);

// An angle as the plot labels it: "73.8°" (a tenth of a degree is as fine as an arc on screen shows).
std::string angle_degrees(double radians);

// The sentences beside the plot, with the live numbers: the score on the pair as |q| |k| cos φ, what the other
// dimensions add, and with RoPE the turn of each vector and what it does to φ.
std::string explain_geometry(const Trace& t, const PlaneGeometry& g);

}  // namespace attn::ui
