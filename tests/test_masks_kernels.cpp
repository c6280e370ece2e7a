// Masks (none, causal, sliding window, custom), the scale switch and the two kernels.
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/trace_bytes.h"
#include "helpers.h"

#include "core/mask.h"

using namespace attn;
using namespace attn::test;

TEST_CASE("softmax rows sum to 1 and hidden entries are exactly 0, for every mask") {
  for (MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::SlidingWindow}) {
    CAPTURE(to_string(mask));
    Scenario s = cat_sat();
    s.attention.mask = mask;
    s.attention.window = 2;
    const HeadTrace h = compute_trace(s).heads[0];
    for (Eigen::Index i = 0; i < h.weights().rows(); ++i) {
      CHECK(h.weights().row(i).sum() == doctest::Approx(1.0).epsilon(1e-15));
      for (Eigen::Index j = 0; j < h.weights().cols(); ++j)
        if ((*h.mask)(i, j) == 0.0) {
          CHECK(h.weights(i, j) == 0.0);
          CHECK(h.masked(i, j) == -std::numeric_limits<double>::infinity());
        } else {
          CHECK(h.weights(i, j) > 0.0);
        }
    }
  }
}

TEST_CASE("sliding window: query i sees keys i-window+1 .. i") {
  AttentionConfig c;
  c.mask = MaskKind::SlidingWindow;
  c.window = 2;
  check_matrix(build_mask(c, 4, 4), mat({{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {0, 0, 1, 1}}), 0.0, "window 2");
  c.window = 1;
  check_matrix(build_mask(c, 3, 3), Matrix::Identity(3, 3), 0.0, "window 1 is the diagonal");
  c.window = 10;
  c.mask = MaskKind::Causal;
  const Matrix causal = build_mask(c, 4, 4);
  c.mask = MaskKind::SlidingWindow;
  check_matrix(build_mask(c, 4, 4), causal, 0.0, "a window as long as the sequence is causal");
}

TEST_CASE("causal mask on a non-square (cross-attention) shape stays aligned at the start") {
  AttentionConfig c;
  c.mask = MaskKind::Causal;
  check_matrix(build_mask(c, 2, 4), mat({{1, 0, 0, 0}, {1, 1, 0, 0}}), 0.0, "2 x 4");
}

TEST_CASE("custom mask: exactly the given cells are visible, in every step") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{0, 1, 1}, {1, 0, 1}, {1, 1, 0}});  // nobody sees itself
  const HeadTrace h = compute_trace(s).heads[0];
  check_matrix(*h.mask, s.attention.custom_mask, 0.0, "mask");
  // Row "the" sees cat (4.6188) and sat (3.4641) only.
  const double a = std::exp(8.0 / std::sqrt(3.0)), b = std::exp(6.0 / std::sqrt(3.0));
  check_matrix(h.weights().row(0), mat({{0.0, a / (a + b), b / (a + b)}}), 1e-12, "row the");
  CHECK(h.weights(1, 1) == 0.0);
  CHECK(h.weights(2, 2) == 0.0);
}

TEST_CASE("a row with every key hidden gives zero weights, a zero output and a flag, never NaN") {
  for (Kernel kernel : {Kernel::Softmax, Kernel::Linear}) {
    CAPTURE(to_string(kernel));
    Scenario s = cat_sat();
    s.attention.kernel = kernel;
    s.attention.mask = MaskKind::Custom;
    s.attention.custom_mask = mat({{1, 1, 1}, {0, 0, 0}, {1, 0, 1}});
    const Trace t = compute_trace(s);
    const HeadTrace& h = t.heads[0];
    CHECK(h.row_status[0] == RowStatus::Ok);
    CHECK(h.row_status[1] == RowStatus::AllMasked);
    CHECK(h.row_status[2] == RowStatus::Ok);
    check_matrix(h.weights().row(1), Matrix::Zero(1, 3), 0.0, "weights of the hidden row");
    check_matrix(h.output.row(1), Matrix::Zero(1, 3), 0.0, "output of the hidden row");
    CHECK(h.row_sum(1) == 0.0);
    CHECK(h.entropy(1) == 0.0);
    CHECK(t.output.allFinite());
    CHECK(h.weights().allFinite());
  }
}

TEST_CASE("scale off: scaled equals the raw scores exactly") {
  Scenario s = cat_sat();
  s.attention.scale = false;
  const Trace t = compute_trace(s);
  check_matrix(t.heads[0].scaled(), t.heads[0].scores(), 0.0, "scaled");
  CHECK(t.scale_factor == 1.0);
  // The softmax of unscaled scores is sharper: "the" puts e^8/(e^2+e^8+e^6) on "cat".
  const double e2 = std::exp(2.0), e6 = std::exp(6.0), e8 = std::exp(8.0);
  CHECK(t.heads[0].weights(0, 1) == doctest::Approx(e8 / (e2 + e8 + e6)).epsilon(1e-14));
}

TEST_CASE("linear kernel: kappa(x) = x normalised by the row sum, against a hand computation") {
  Scenario s = cat_sat();
  s.attention.kernel = Kernel::Linear;
  const HeadTrace h = compute_trace(s).heads[0];
  // Row "the": scaled = [2, 8, 6]/sqrt(3), Z = 16/sqrt(3), weights = [2, 8, 6]/16.
  check_matrix(h.masked(), h.scaled(), 0.0, "masked = kappa(scaled) with nothing hidden");
  CHECK(h.row_sum(0) == doctest::Approx(16.0 / std::sqrt(3.0)).epsilon(1e-14));
  CHECK(h.row_max(0) == 0.0);
  check_matrix(h.weights().row(0), mat({{0.125, 0.5, 0.375}}), 1e-15, "weights of the");
  // output = 0.125 [1,2,3] + 0.5 [2,8,0] + 0.375 [2,6,3]
  check_matrix(h.output.row(0), mat({{1.875, 6.5, 1.5}}), 1e-14, "output of the");
  // Row "cat": [6, 16, 14] / 36.
  check_matrix(h.weights().row(1), mat({{6.0 / 36, 16.0 / 36, 14.0 / 36}}), 1e-15, "weights of cat");
}

TEST_CASE("linear kernel with a causal mask zeroes hidden entries after the kernel") {
  Scenario s = cat_sat();
  s.attention.kernel = Kernel::Linear;
  s.attention.mask = MaskKind::Causal;
  const HeadTrace h = compute_trace(s).heads[0];
  CHECK(h.masked(0, 1) == 0.0);
  CHECK(h.masked(0, 2) == 0.0);
  check_matrix(h.weights(), mat({{1, 0, 0}, {6.0 / 22, 16.0 / 22, 0}, {5.0 / 34, 16.0 / 34, 13.0 / 34}}), 1e-15,
               "weights");
}

TEST_CASE("linear kernel: a row whose scores sum to 0 is flagged, not divided by zero") {
  Scenario s = cat_sat();
  s.attention.kernel = Kernel::Linear;
  s.attention.scale = false;
  // q_the = [1, 0, 2] against keys whose scores are +1 and -1.
  s.weights.W_K = mat({{1, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}});
  s.input.embeddings = mat({{1, 0, 1, 0}, {-1, 0, 0, 0}, {0, 0, 0, 0}});
  const HeadTrace h = compute_trace(s).heads[0];
  // scores(the, .) = q_the . k = [1*1, 1*-1, 0] -> Z = 0.
  check_matrix(h.scores().row(0), mat({{1, -1, 0}}), 0.0, "scores of the");
  CHECK(h.row_status[0] == RowStatus::ZeroSum);
  check_matrix(h.weights().row(0), Matrix::Zero(1, 3), 0.0, "weights");
  check_matrix(h.output.row(0), Matrix::Zero(1, 3), 0.0, "output");
}

TEST_CASE("softmax stays finite when scores are far beyond exp's range") {
  Scenario s = cat_sat();
  s.input.embeddings *= 1e4;  // scores around 1e9 / sqrt(3)
  const HeadTrace h = compute_trace(s).heads[0];
  CHECK(h.scaled().maxCoeff() > 1e8);
  CHECK(h.weights().allFinite());
  CHECK(h.output.allFinite());
  // Saturated: all the weight on the largest score, and the entropy collapses to 0.
  CHECK(h.weights(0, 1) == 1.0);
  CHECK(h.entropy(0) == 0.0);
}

namespace {

// One query of 1 over one-dimensional keys (= values) given exactly: the linear kernel's scores are the keys.
Scenario linear_one_query(std::vector<std::string> keys, const Matrix& values) {
  Scenario s;
  s.input = {{"q"}, mat({{1}})};
  s.context = TokenRows{std::move(keys), values};
  s.attention.head_dim = 1;
  s.attention.kernel = Kernel::Linear;
  s.attention.scale = false;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = mat({{1}});
  return s;
}

}  // namespace

TEST_CASE("linear kernel: a row sum that cancels to rounding noise is flagged, not divided by") {
  // Scale off, one-dimensional keys 0.1, 0.2, -0.3 and a query of 1: Z = 0.1 + 0.2 - 0.3 = 5.6e-17, not 0.
  const HeadTrace h = compute_trace(linear_one_query({"a", "b", "c"}, mat({{0.1}, {0.2}, {-0.3}}))).heads[0];
  CHECK(h.row_sum(0) != 0.0);
  CHECK(std::abs(h.row_sum(0)) < 1e-15);
  CHECK(h.row_status[0] == RowStatus::ZeroSum);
  check_matrix(h.weights(), Matrix::Zero(1, 3), 0.0, "weights");
  check_matrix(h.output, Matrix::Zero(1, 1), 0.0, "output");
}

TEST_CASE("linear kernel: negative weights are kept but flagged, with no entropy") {
  // Scores 3, -1 (scale off): Z = 2, weights 1.5 and -0.5.
  const HeadTrace h = compute_trace(linear_one_query({"a", "b"}, mat({{3}, {-1}}))).heads[0];
  CHECK(h.row_status[0] == RowStatus::Signed);
  check_matrix(h.weights(), mat({{1.5, -0.5}}), 0.0, "weights");
  CHECK(h.weights().row(0).sum() == 1.0);
  CHECK(std::isnan(h.entropy(0)));
  check_matrix(h.output, mat({{1.5 * 3 + 0.5}}), 1e-15, "output");
}

TEST_CASE("a trace too large for memory is refused with the numbers that make it so") {
  Scenario s = cat_sat();
  const int n = 4096;
  s.input.tokens.assign(n, "t");
  s.input.embeddings = Matrix::Ones(n, 4);
  s.attention.heads = 9;
  s.attention.head_dim = 1;
  s.weights = {};
  CHECK_THROWS_WITH_AS(
      compute_trace(s),
      "scenario: heads x N_Q x N_KV = 9 x 4096 x 4096 = 150,994,944 attention cells, more than the 134,217,728 "
      "a trace may hold",
      InputError);
  s.attention.heads = 8;  // the benchmark's largest size: accepted (not computed here: it takes 2.2 GB)
  CHECK_NOTHROW(validate(s));
  // Within the cells, past the bytes: 8 heads at 4096 tokens of d_model 512 with MLA's absorbed scores beside them.
  Scenario big = load_scenario_file(asset("scale.json"));
  big.input.tokens.assign(n, "t");
  big.input.embeddings = Matrix::Zero(n, big.d_model());
  big.attention.variant = Variant::Mla;
  big.attention.latent_dim = 64;
  big.weights = {};
  const std::int64_t bytes = predicted_trace_bytes(big);
  const std::int64_t three_gib = std::int64_t(3) << 30;
  CHECK(bytes > three_gib);
  CHECK_NOTHROW(validate(big));  // a valid file; the memory budget refuses its trace
  try {
    check_trace_budget(big, three_gib);
    FAIL("past the budget, yet accepted");
  } catch (const BudgetError& e) {
    // And the program itself, and blockdiag(W_UV^(h)) while W_LO is made: (8 x 64, 8 x 64).
    CHECK(e.needed() == bytes + 16 * (std::int64_t(1) << 20) + (8 * 64) * (8 * 64) * 8);
    CHECK(e.budget() == three_gib);
  }
  big.attention.variant = Variant::Mha;  // the scale scenario itself: 2.51 GB
  CHECK(predicted_trace_bytes(big) == 136 * std::int64_t(n) * n + 53472 * std::int64_t(n) + 10485760);
  CHECK_NOTHROW(check_trace_budget(big, three_gib));
  // 2,511,208,448 bytes and the program's 16 MiB past a budget of 2 GiB: both numbers, exact and in GiB, and what
  // to do.
  CHECK_THROWS_WITH_AS(check_trace_budget(big, std::int64_t(2) << 30),
                       "this trace needs 2,527,985,664 bytes (2.35 GiB) but the memory budget is 2,147,483,648 bytes "
                       "(2.00 GiB); use --memory-budget, fewer tokens or heads",
                       BudgetError);
}
