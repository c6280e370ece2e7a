// Numerical edge cases: huge and tiny magnitudes, one token, one dimension, nothing visible. The engine
// gives finite, exact-where-possible numbers or refuses the input with a message; never NaN or Inf.
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

Scenario one_dimensional(const Matrix& x, double w) {
  Scenario s;
  s.input.tokens.clear();
  for (Eigen::Index i = 0; i < x.rows(); ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = x;
  s.attention.head_dim = 1;
  s.attention.scale = false;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = mat({{w}});
  return s;
}

void check_finite(const Trace& t) {
  for (const HeadTrace& h : t.heads) {
    CHECK(h.weights().allFinite());
    CHECK(h.output.allFinite());
    CHECK(h.row_sum.allFinite());
    for (Eigen::Index i = 0; i < h.weights().rows(); ++i)
      if (h.row_status[static_cast<std::size_t>(i)] == RowStatus::Ok)
        CHECK(h.weights().row(i).sum() == doctest::Approx(1.0));
  }
  CHECK(t.output.allFinite());
}

}  // namespace

TEST_CASE("scores of +-1e30 saturate cleanly: all the weight on the largest, exactly") {
  // x = +-1e10 with W = 1e5: q = k = +-1e15, scores = +-1e30.
  const Trace t = compute_trace(one_dimensional(mat({{1e10}, {-1e10}}), 1e5));
  const HeadTrace& h = t.heads[0];
  CHECK(h.scores(0, 0) == 1e30);
  CHECK(h.scores(0, 1) == -1e30);
  check_matrix(h.weights(), mat({{1, 0}, {0, 1}}), 0.0, "saturated weights");
  CHECK(h.entropy(0) == 0.0);
  check_finite(t);
}

TEST_CASE("a single token attends to itself with weight exactly 1") {
  const Trace t = compute_trace(one_dimensional(mat({{3}}), 2));
  CHECK(t.heads[0].weights(0, 0) == 1.0);
  CHECK(t.output(0, 0) == 6.0);
  check_finite(t);
}

TEST_CASE("d_k = 1: the scale is 1/sqrt(1) = 1, so scaled equals scores") {
  Scenario s = one_dimensional(mat({{1}, {2}, {3}}), 1);
  s.attention.scale = true;
  const Trace t = compute_trace(s);
  CHECK(t.scale_factor == 1.0);
  check_matrix(t.heads[0].scaled(), t.heads[0].scores(), 0.0, "scaled");
  check_finite(t);
}

TEST_CASE("embeddings of 1e-300 give tiny, finite scores and uniform weights, never NaN") {
  const Trace t = compute_trace(one_dimensional(mat({{1e-300}, {2e-300}}), 1));
  const HeadTrace& h = t.heads[0];
  CHECK(h.scores(0, 0) == 0.0);  // 1e-600 underflows to 0
  check_matrix(h.weights(), mat({{0.5, 0.5}, {0.5, 0.5}}), 0.0, "uniform");
  CHECK(t.output(0, 0) == doctest::Approx(1.5e-300).epsilon(1e-12));
  check_finite(t);
}

TEST_CASE("embeddings of 1e300 are refused before any arithmetic, naming the cell") {
  Scenario s = one_dimensional(mat({{1}, {1e300}}), 1);
  CHECK_THROWS_WITH_AS(compute_trace(s), "embeddings[1][0]: magnitude must be <= 1e12 (found 1e+300)", InputError);
  s.input.embeddings(1, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(compute_trace(s), "embeddings[1][0]: not a finite number", InputError);
}

TEST_CASE("every key masked, for every row and both kernels: zero weights, zero output, flagged") {
  for (Kernel kernel : {Kernel::Softmax, Kernel::Linear}) {
    CAPTURE(to_string(kernel));
    Scenario s = one_dimensional(mat({{1}, {2}}), 1);
    s.attention.kernel = kernel;
    s.attention.mask = MaskKind::Custom;
    s.attention.custom_mask = Matrix::Zero(2, 2);
    const Trace t = compute_trace(s);
    for (RowStatus r : t.heads[0].row_status) CHECK(r == RowStatus::AllMasked);
    check_matrix(t.output, Matrix::Zero(2, 1), 0.0, "output");
    check_finite(t);
  }
}
