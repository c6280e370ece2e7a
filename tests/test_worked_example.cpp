// The worked example "the cat sat": every value of tests/data/the_cat_sat_reference.md to 1e-6.
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {
constexpr double kTol = 1e-6;
}

TEST_CASE("the cat sat: projections and scores match the reference") {
  const Trace t = compute_trace(cat_sat());
  REQUIRE(t.heads.size() == 1);
  const HeadTrace& h = t.heads[0];
  check_matrix(h.q, mat({{1, 0, 2}, {2, 2, 2}, {2, 1, 3}}), kTol, "Q");
  check_matrix(h.k, mat({{0, 2, 1}, {4, 2, 2}, {2, 3, 2}}), kTol, "K");
  check_matrix(h.v, mat({{1, 2, 3}, {2, 8, 0}, {2, 6, 3}}), kTol, "V");
  check_matrix(h.scores(), mat({{2, 8, 6}, {6, 16, 14}, {5, 16, 13}}), kTol, "scores");
  check_matrix(h.scaled(),
               mat({{1.154701, 4.618802, 3.464102}, {3.464102, 9.237604, 8.082904}, {2.886751, 9.237604, 7.505553}}),
               kTol, "scaled");
  CHECK(t.scale_factor == doctest::Approx(1.0 / std::sqrt(3.0)).epsilon(1e-15));
  CHECK(t.tokens == std::vector<std::string>{"the", "cat", "sat"});
}

TEST_CASE("the cat sat, no mask: weights and output match the reference") {
  const Trace t = compute_trace(cat_sat());
  const HeadTrace& h = t.heads[0];
  check_matrix(*h.mask, Matrix::Ones(3, 3), 0.0, "mask");
  check_matrix(h.masked(), h.scaled(), 0.0, "masked equals scaled when nothing is hidden");
  check_matrix(h.weights(),
               mat({{0.023247, 0.742692, 0.234061}, {0.002358, 0.758575, 0.239066}, {0.001481, 0.848416, 0.150103}}),
               kTol, "weights");
  check_matrix(h.output,
               mat({{1.976753, 7.392396, 0.771924}, {1.997642, 7.507717, 0.724274}, {1.998519, 7.690910, 0.454751}}),
               kTol, "output");
  // No W_O: the output is the concatenation, which for one head is the head's output.
  CHECK_FALSE(t.has_output_projection());
  check_matrix(t.concat, h.output, 0.0, "concat");
  check_matrix(t.output, h.output, 0.0, "final output");
  CHECK(h.contribution().size() == 0);
}

TEST_CASE("the cat sat, causal: weights and output match the reference") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  const HeadTrace& h = t.heads[0];
  check_matrix(*h.mask, mat({{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}), 0.0, "mask");
  const double inf = std::numeric_limits<double>::infinity();
  check_matrix(h.masked(), mat({{1.154701, -inf, -inf}, {3.464102, 9.237604, -inf}, {2.886751, 9.237604, 7.505553}}),
               kTol, "masked");
  check_matrix(h.weights(), mat({{1, 0, 0}, {0.003099, 0.996901, 0}, {0.001481, 0.848416, 0.150103}}), kTol, "weights");
  check_matrix(h.output, mat({{1, 2, 3}, {1.996901, 7.981405, 0.009298}, {1.998519, 7.690910, 0.454751}}), kTol,
               "output");
  // Hidden keys get exactly zero weight, not merely a tiny one.
  CHECK(h.weights(0, 1) == 0.0);
  CHECK(h.weights(1, 2) == 0.0);
}

TEST_CASE("the cat sat: row statistics teach the softmax") {
  const Trace t = compute_trace(cat_sat());
  const HeadTrace& h = t.heads[0];
  // Row "the": shift by the largest score 8/sqrt(3), Z = e^(1.1547-4.6188) + 1 + e^(3.4641-4.6188).
  CHECK(h.row_max(0) == doctest::Approx(8.0 / std::sqrt(3.0)).epsilon(1e-12));
  const double z0 = std::exp((2.0 - 8.0) / std::sqrt(3.0)) + 1.0 + std::exp((6.0 - 8.0) / std::sqrt(3.0));
  CHECK(h.row_sum(0) == doctest::Approx(z0).epsilon(1e-12));
  const double expected_entropy =
      -(0.023247 * std::log(0.023247) + 0.742692 * std::log(0.742692) + 0.234061 * std::log(0.234061));
  CHECK(h.entropy(0) == doctest::Approx(expected_entropy).epsilon(1e-5));
  for (RowStatus s : h.row_status) CHECK(s == RowStatus::Ok);
}
