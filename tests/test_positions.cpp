// Positions: the sinusoidal table and RoPE's turn by hand, scores that with RoPE depend only on i - j, learned rows
// added before the projections, and MLA's decoupled RoPE with its absorbed form still exact.
#include <cmath>

#include "core/decode.h"
#include "core/positions.h"
#include "core/rope_absorption.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// Tokens with one embedding each, one head, no seeding left to chance: every weight given.
Scenario single_head(const Matrix& x, const Matrix& W) {
  Scenario s;
  s.name = "by hand";
  for (Eigen::Index i = 0; i < x.rows(); ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = x;
  s.attention.heads = 1;
  s.attention.head_dim = static_cast<int>(W.cols());
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = W;
  return s;
}

}  // namespace

TEST_CASE("sinusoidal positions: sin on even columns, cos on odd ones, the frequency falling with the pair") {
  const Matrix pe = sinusoidal_positions(0, 3, 4, 10000.0);
  // Column pair i turns at 10000^(-2i/4): 1 for the first pair, 0.01 for the second.
  check_matrix(pe,
               mat({{0, 1, 0, 1},
                    {std::sin(1.0), std::cos(1.0), std::sin(0.01), std::cos(0.01)},
                    {std::sin(2.0), std::cos(2.0), std::sin(0.02), std::cos(0.02)}}),
               1e-15, "PE rows 0..2");
  check_matrix(sinusoidal_positions(2, 1, 4, 10000.0), pe.row(2), 0.0, "starting at row 2");
  // An odd width ends on a sine.
  // An odd width ends on a sine; with base 8 and d_model 3 the second pair turns at 8^(-2/3) = 1/4.
  check_matrix(sinusoidal_positions(1, 1, 3, 8.0), mat({{std::sin(1.0), std::cos(1.0), std::sin(0.25)}}), 1e-15,
               "odd d_model");
}

TEST_CASE("rope turns each pair of dimensions by position x frequency") {
  CHECK(rope_angle(RopeSpec{.width = 4, .base = 10000.0}, 3, 0) == 3.0);
  CHECK(rope_angle(RopeSpec{.width = 4, .base = 10000.0}, 3, 1) == doctest::Approx(0.03).epsilon(1e-14));
  const Matrix x = mat({{1, 0, 1, 0}, {1, 0, 0, 2}});
  const RopeSpec spec{.width = 4, .base = 10000.0};
  check_matrix(rotate(x, rope_table(spec, 0, 2)).row(0), x.row(0), 0.0, "position 0 is not turned");
  check_matrix(rotate(x, rope_table(spec, 1, 2)),
               mat({{std::cos(1.0), std::sin(1.0), std::cos(0.01), std::sin(0.01)},
                    {std::cos(2.0), std::sin(2.0), -2 * std::sin(0.02), 2 * std::cos(0.02)}}),
               1e-15, "rows at positions 1 and 2");
}

TEST_CASE("rotate_half turns the pairs (i, i + d/2) by the same angles") {
  const RopeSpec spec{.width = 4, .base = 10000.0, .pairing = RopePairing::RotateHalf};
  CHECK(rope_dims(spec, 1) == std::pair{1, 3});
  CHECK(rope_dims(RopeSpec{.width = 4}, 1) == std::pair{2, 3});
  CHECK(rope_pair_of(spec, 3) == 1);
  CHECK(rope_pair_of(RopeSpec{.width = 4}, 3) == 1);
  CHECK(rope_pair_of(spec, 2) == 0);
  // The first row of the test above with its dims reordered (0, 2, 1, 3): pair 0 is dims 0 and 2, pair 1 dims 1 and 3.
  const Matrix x = mat({{1, 1, 0, 0}, {1, 0, 0, 2}});
  check_matrix(rotate(x, rope_table(spec, 1, 2)),
               mat({{std::cos(1.0), std::cos(0.01), std::sin(1.0), std::sin(0.01)},
                    {std::cos(2.0), -2 * std::sin(0.02), std::sin(2.0), 2 * std::cos(0.02)}}),
               1e-15, "rows at positions 1 and 2");
}

TEST_CASE("llama3 scaling keeps short wavelengths, divides long ones and blends those between") {
  // d = 12, base 10000: frequencies 10000^(-i/6), wavelengths 2 pi / f = 6.28, 29.2, 135, 628, 2916, 13535.
  // original_max_positions 32 with low 1 and high 4: kept below 8, divided by 8 above 32, blended between.
  const RopeSpec spec{.width = 12, .base = 10000.0, .scaling = RopeScaling{8, 1, 4, 32}};
  const double f0 = 1.0, f1 = std::pow(10000.0, -1.0 / 6), f2 = std::pow(10000.0, -2.0 / 6);
  CHECK(rope_frequency(spec, 0) == f0);
  const double s = (32 / (2 * M_PI / f1) - 1) / (4 - 1);  // 29.2 lies between 8 and 32
  CHECK(rope_frequency(spec, 1) == doctest::Approx((1 - s) * f1 / 8 + s * f1).epsilon(1e-15));
  CHECK(rope_frequency(spec, 2) == doctest::Approx(f2 / 8).epsilon(1e-15));
  CHECK(rope_angle(spec, 5, 2) == doctest::Approx(5 * f2 / 8).epsilon(1e-15));
}

TEST_CASE("with rope the scores depend on positions only through i - j, without it every row is alike") {
  // Four copies of one token: whatever the scores differ by, only the positions made it.
  Scenario s = single_head(mat({{1, 2}, {1, 2}, {1, 2}, {1, 2}}), mat({{1, 0}, {0, 1}}));
  const Trace plain = compute_trace(s);
  check_matrix(plain.heads[0].scores(), Matrix::Constant(4, 4, 5.0), 0.0, "no positions: q . k = 5 everywhere");
  s.attention.positions = Positions::Rope;
  const Trace t = compute_trace(s);
  const HeadTrace& h = t.heads[0];
  // d = 2 turns by p radians: q_i . k_j = |q| |k| cos(i - j) = 5 cos(i - j).
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(h.scores(i, j) == doctest::Approx(5 * std::cos(i - j)).epsilon(1e-14));
    }
  check_matrix(h.q, mat({{1, 2}, {1, 2}, {1, 2}, {1, 2}}), 0.0, "q stays the projection");
  check_matrix(h.q_rope.row(1), mat({{std::cos(1.0) - 2 * std::sin(1.0), std::sin(1.0) + 2 * std::cos(1.0)}}), 1e-15,
               "q_rope row 1 turned by 1 radian");
  check_matrix(h.k_rope, h.q_rope, 0.0, "keys turned by the same positions");
  CHECK(h.q_r.size() == 0);
}

TEST_CASE("sinusoidal and learned positions are added to X before the projections") {
  Scenario s = single_head(mat({{1, 0}, {0, 1}, {1, 1}}), mat({{1, 0}, {0, 1}}));
  s.attention.positions = Positions::Learned;
  s.attention.max_positions = 4;
  s.weights.W_P = mat({{0.5, 0}, {0, -1}, {2, 2}, {9, 9}});
  const Trace t = compute_trace(s);
  check_matrix(t.x, mat({{1, 0}, {0, 1}, {1, 1}}), 0.0, "x is the embeddings as given");
  check_matrix(t.positions, mat({{0.5, 0}, {0, -1}, {2, 2}}), 0.0, "the rows used");
  check_matrix(t.heads[0].q, mat({{1.5, 0}, {0, 0}, {3, 3}}), 0.0, "q = (X + W_P rows) W_Q");
  s.attention.positions = Positions::Sinusoidal;
  s.attention.max_positions = 0;
  s.weights.W_P.reset();
  s.attention.rope_base = 10000.0;
  const Trace sin = compute_trace(s);
  check_matrix(sin.heads[0].k,
               mat({{1, 1}, {std::sin(1.0), 1 + std::cos(1.0)}, {1 + std::sin(2.0), 1 + std::cos(2.0)}}), 1e-15,
               "k = (X + PE) W_K");
}

TEST_CASE("cross-attention: the context's positions start at 0 too") {
  Scenario s = single_head(mat({{1, 0}}), mat({{1, 0}, {0, 1}}));
  s.context = TokenRows{{"a", "b", "c"}, mat({{1, 0}, {1, 0}, {1, 0}})};
  s.attention.positions = Positions::Rope;
  const Trace t = compute_trace(s);
  // The query sits at position 0 (not turned); key j is turned by j radians: q . k_j = cos(j).
  check_matrix(t.heads[0].scores(), mat({{1, std::cos(1.0), std::cos(2.0)}}), 1e-15, "scores");
}

TEST_CASE("mla with decoupled rope: by hand, and the absorbed form stays exact") {
  // One head of width 1, latent 1, rope_dim 2: content score x_i x_j, rope part x_i x_j sin(i - j).
  Scenario s = single_head(mat({{1}, {2}}), mat({{1}}));
  s.weights = {};
  s.attention.variant = Variant::Mla;
  s.attention.latent_dim = 1;
  s.attention.positions = Positions::Rope;
  s.attention.rope_dim = 2;
  s.weights.W_Q = s.weights.W_DKV = s.weights.W_UK = s.weights.W_UV = mat({{1}});
  s.weights.W_QR = mat({{1, 0}});
  s.weights.W_KR = mat({{0, 1}});
  const Trace t = compute_trace(s);
  CHECK(t.scale_factor == doctest::Approx(1 / std::sqrt(3.0)).epsilon(1e-15));
  check_matrix(t.heads[0].scores(), mat({{1, 2 * (1 - std::sin(1.0))}, {2 * (1 + std::sin(1.0)), 4}}), 1e-14,
               "q_C k_C^T + q_r k_r^T");
  check_matrix(t.heads[0].k_r, mat({{0, 1}, {-2 * std::sin(1.0), 2 * std::cos(1.0)}}), 1e-15, "k_r turned by j");
  check_matrix(t.heads[0].q_rope, mat({{1, 1, 0}, {2, 2 * std::cos(1.0), 2 * std::sin(1.0)}}), 1e-15, "[q_C | q_r]");
  REQUIRE(t.absorbed);
  check_matrix(t.absorbed->scores[0], t.heads[0].scores(), 1e-9, "absorbed scores");
  check_matrix(t.absorbed->output, t.output, 1e-9, "absorbed output");
}

TEST_CASE("mla with decoupled rope and a query latent: absorbed equals explicit on seeded weights") {
  Scenario s = cat_sat();
  s.weights = {};  // drawn from the seed
  s.attention.variant = Variant::Mla;
  s.attention.heads = 2;
  s.attention.kv_heads = 2;
  s.attention.latent_dim = 3;
  s.attention.query_latent_dim = 2;
  s.attention.positions = Positions::Rope;
  s.attention.rope_dim = 4;
  s.attention.output_projection = true;
  const Trace t = compute_trace(s);
  CHECK(t.weights.W_QR->rows() == 2);
  CHECK(t.weights.W_QR->cols() == 8);
  CHECK(t.weights.W_KR->rows() == 4);
  CHECK(t.weights.W_KR->cols() == 4);
  for (int h = 0; h < 2; ++h) check_matrix(t.absorbed->scores[h], t.heads[h].scores(), 1e-9, "absorbed scores");
  check_matrix(t.absorbed->output, t.output, 1e-9, "absorbed output");
}

TEST_CASE("the cache of mla with rope holds the latent and the turned key: d_c + d_R per token") {
  AttentionConfig a;
  a.variant = Variant::Mla;
  a.heads = 4;
  a.head_dim = 8;
  a.latent_dim = 16;
  a.positions = Positions::Rope;
  a.rope_dim = 4;
  CHECK(cache_elements_per_token(a) == 20);
  a.sparse = SparseConfig{8, 2, 3};
  CHECK(cache_elements_per_token(a) == 23);
  a.variant = Variant::Gqa;
  a.kv_heads = 2;
  CHECK(cache_elements_per_token(a) == 2 * 2 * 8 + 3);
}

TEST_CASE("why mla decouples rope: turning the expanded keys breaks the absorbed form") {
  // One head of width 2, latent 2, W_Q = W_DKV = W_UK = W_UV = I: q_C = k_C = x, absorbed scores x x^T.
  Scenario s = single_head(mat({{1, 0}, {1, 0}}), mat({{1, 0}, {0, 1}}));
  s.weights = {};
  s.attention.variant = Variant::Mla;
  s.attention.latent_dim = 2;
  s.weights.W_Q = s.weights.W_DKV = s.weights.W_UK = s.weights.W_UV = mat({{1, 0}, {0, 1}});
  const NaiveRopeMla r = naive_rope_absorption(compute_trace(s), 0);
  check_matrix(r.absorbed_scores, mat({{1, 1}, {1, 1}}), 1e-15, "absorbed: x x^T, no positions");
  // Turned: (1, 0) at positions 0 and 1, so q_i . k_j = cos(i - j).
  check_matrix(r.explicit_scores, mat({{1, std::cos(1.0)}, {std::cos(1.0), 1}}), 1e-15, "explicit: cos(i - j)");
  CHECK(r.max_difference == doctest::Approx(1 - std::cos(1.0)).epsilon(1e-14));
  s.attention.head_dim = 1;  // nothing to turn in pairs
  s.weights.W_Q = s.weights.W_UK = s.weights.W_UV = mat({{1}, {0}});
  CHECK(naive_rope_absorption(compute_trace(s), 0).explicit_scores.size() == 0);
}

TEST_CASE("a shift of every position: rope scores stay, absolute positions read later rows") {
  // Four copies of one token, as above: with rope, q_i . k_j = 5 cos(i - j) wherever the rows sit.
  Scenario s = single_head(mat({{1, 2}, {1, 2}, {1, 2}, {1, 2}}), mat({{1, 0}, {0, 1}}));
  s.attention.positions = Positions::Rope;
  s.attention.position_offset = 7;
  const Trace t = compute_trace(s);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) CHECK(t.heads[0].scores(i, j) == doctest::Approx(5 * std::cos(i - j)).epsilon(1e-13));
  // Row 0 now sits at position 7: turned by 7 radians.
  check_matrix(t.heads[0].q_rope.row(0), mat({{std::cos(7.0) - 2 * std::sin(7.0), std::sin(7.0) + 2 * std::cos(7.0)}}),
               1e-14, "row 0 turned by 7 rad");

  // Learned: rows 2.. of W_P; max_positions must cover the shift.
  Scenario l = single_head(mat({{1, 0}, {0, 1}}), mat({{1, 0}, {0, 1}}));
  l.attention.positions = Positions::Learned;
  l.attention.position_offset = 2;
  l.attention.max_positions = 3;
  l.weights.W_P = mat({{9, 9}, {8, 8}, {0.5, 0}});
  CHECK_THROWS_WITH_AS(compute_trace(l),
                       "attention.max_positions: must be >= 4 (one learned position per token of the longer side, "
                       "after the shift position_offset) but found 3",
                       InputError);
  l.attention.max_positions = 4;
  l.weights.W_P = mat({{9, 9}, {8, 8}, {0.5, 0}, {0, -1}});
  const Trace learned = compute_trace(l);
  check_matrix(learned.positions, mat({{0.5, 0}, {0, -1}}), 0.0, "W_P rows 2 and 3");
  check_matrix(learned.heads[0].q, mat({{1.5, 0}, {0, 0}}), 0.0, "q = (X + W_P rows 2..3) W_Q");

  // Sinusoidal: the table from row 5.
  Scenario sn = single_head(mat({{0, 0}}), mat({{1, 0}, {0, 1}}));
  sn.attention.positions = Positions::Sinusoidal;
  sn.attention.position_offset = 5;
  check_matrix(compute_trace(sn).heads[0].q, mat({{std::sin(5.0), std::cos(5.0)}}), 1e-15, "q = PE[5]");
}

TEST_CASE("a shift is refused without positions and past its limits, naming the field") {
  Scenario s = single_head(mat({{1, 0}}), mat({{1, 0}, {0, 1}}));
  s.attention.position_offset = 3;
  CHECK_NOTHROW(compute_trace(s));  // no positions: nothing to shift (the loader refuses the field itself)
  CHECK(first_position(s.attention) == 0);
  s.attention.positions = Positions::Rope;
  s.attention.position_offset = -1;
  CHECK_THROWS_WITH_AS(compute_trace(s), "attention.position_offset: must be >= 0 (found -1)", InputError);
  s.attention.position_offset = limits::kMaxPositionOffset + 1;
  CHECK_THROWS_WITH_AS(compute_trace(s), "attention.position_offset: must be <= 1048576 (found 1048577)", InputError);
}

TEST_CASE("decoding a shifted document: step t equals row t, the cache turned at positions shift + t") {
  for (const Positions p : {Positions::Sinusoidal, Positions::Learned, Positions::Rope}) {
    CAPTURE(static_cast<int>(p));
    Scenario s = single_head(mat({{1, 0}, {0, 1}, {1, 1}}), mat({{1, 0}, {0, 1}}));
    s.attention.mask = MaskKind::Causal;
    s.attention.positions = p;
    s.attention.position_offset = 4;
    if (p == Positions::Learned) s.attention.max_positions = 7;
    const Trace t = compute_trace(s);
    const DecodeTrace d = decode(s);
    for (int step = 0; step < 3; ++step)
      check_matrix(d.steps[static_cast<std::size_t>(step)].output, t.output.row(step), 1e-12, "step t = row t");
    if (p == Positions::Rope) check_matrix(d.cache.k[0].topRows(3), t.heads[0].k_rope, 1e-14, "the turned keys");
  }
}
