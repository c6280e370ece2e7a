// DeepSeek Sparse Attention: the indexer's scores and the top-k selection by hand (ties to the lower key),
// attention over only the selected keys, decoding that scans the whole cache, and the online softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/decode.h"
#include "core/indexer.h"
#include "core/mask.h"
#include "core/online_softmax.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Three tokens of width 1 (x = 1, 2, -1) and an indexer of two heads of width 1:
// q^I_i = (x_i, -x_i), k^I_j = x_j, w_i = (x_i, 2 x_i), so I[i, j] = x_i ReLU(x_i x_j) + 2 x_i ReLU(-x_i x_j).
Scenario indexed(int top_k) {
  Scenario s;
  s.name = "indexed";
  s.input = {{"a", "b", "c"}, mat({{1}, {2}, {-1}})};
  s.attention.heads = 1;
  s.attention.head_dim = 1;
  s.attention.scale = false;
  s.attention.sparse = SparseConfig{top_k, 2, 1};
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = mat({{1}});
  s.weights.W_QI = mat({{1, -1}});
  s.weights.W_KI = mat({{1}});
  s.weights.W_wI = mat({{1, 2}});
  return s;
}

}  // namespace

TEST_CASE("the indexer's scores by hand, and the top-k with ties going to the lower key") {
  const Trace t = compute_trace(indexed(1));
  REQUIRE(t.indexer);
  check_matrix(t.indexer->q, mat({{1, -1}, {2, -2}, {-1, 1}}), 0.0, "q^I = X W_QI");
  check_matrix(t.indexer->w, mat({{1, 2}, {2, 4}, {-1, -2}}), 0.0, "w = X W_wI");
  check_matrix(t.indexer->scores, mat({{1, 2, 2}, {4, 8, 8}, {-2, -4, -1}}), 0.0, "I");
  check_matrix(t.indexer->selected, mat({{0, 1, 0}, {0, 1, 0}, {0, 0, 1}}), 0.0, "top 1: b beats c on the tie");
  check_matrix(*t.heads[0].mask, t.indexer->selected, 0.0, "attention sees only the selection");
  // One key each: the output is that key's value.
  check_matrix(t.output, mat({{2}, {2}, {-1}}), 0.0, "output");
  const Trace two = compute_trace(indexed(2));
  check_matrix(two.indexer->selected, mat({{0, 1, 1}, {0, 1, 1}, {1, 0, 1}}), 0.0, "top 2");
}

TEST_CASE("the indexer reads only what the mask shows, and fewer visible keys than top_k keeps them all") {
  Scenario s = indexed(2);
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  check_matrix(t.indexer->scores, mat({{1, -kInf, -kInf}, {4, 8, -kInf}, {-2, -4, -1}}), 0.0, "hidden is -inf");
  check_matrix(t.indexer->selected, mat({{1, 0, 0}, {1, 1, 0}, {1, 0, 1}}), 0.0, "selection within the mask");
  check_matrix(*t.heads[0].mask, mat({{1, 0, 0}, {1, 1, 0}, {1, 0, 1}}), 0.0, "mask AND selected");
}

TEST_CASE("top_k at least the number of keys is dense attention") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  const Trace dense = compute_trace(s);
  s.attention.sparse = SparseConfig{3, 2, 2};
  const Trace sparse = compute_trace(s);
  check_matrix(sparse.output, dense.output, 0.0, "nothing left out");
  check_matrix(sparse.indexer->selected, mat({{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}), 0.0, "every visible key");
}

namespace {

// The selection by definition: each row's visible keys sorted by (score descending, key ascending), the first k.
Matrix sorted_top_k(const Matrix& scores, const Matrix& mask, int k) {
  Matrix selected = Matrix::Zero(scores.rows(), scores.cols());
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    std::vector<Eigen::Index> keys;
    for (Eigen::Index j = 0; j < scores.cols(); ++j)
      if (mask(i, j) != 0.0) keys.push_back(j);
    std::stable_sort(keys.begin(), keys.end(),
                     [&](Eigen::Index a, Eigen::Index b) { return scores(i, a) > scores(i, b); });
    for (std::size_t c = 0; c < keys.size() && c < static_cast<std::size_t>(k); ++c) selected(i, keys[c]) = 1.0;
  }
  return selected;
}

// Rows of `levels` distinct values (1: every score ties), in random, rising or falling order along the row.
Matrix score_rows(std::mt19937& rng, Eigen::Index rows, Eigen::Index cols, int levels, int order) {
  Matrix m(rows, cols);
  std::uniform_int_distribution<int> level(0, levels - 1);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) m(i, j) = order == 0 ? level(rng) * 0.25 - 3.0 : double(order * j % levels);
  return m;
}

}  // namespace

TEST_CASE("the top-k of long rows is the sorted order's first k, with ties, holes and any order along the row") {
  std::mt19937 rng(11);
  AttentionConfig causal;
  causal.mask = MaskKind::Causal;
  const Eigen::Index n = 320;  // rows of 256 visible keys and more take the sampled path
  Matrix holes = build_mask(causal, n, n);
  std::bernoulli_distribution keep(0.5);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) holes(i, j) = holes(i, j) != 0.0 && keep(rng) ? 1.0 : 0.0;
  const Matrix masks[] = {Matrix::Ones(n, n), build_mask(causal, n, n), holes};
  for (const int levels : {1, 3, 1 << 30})
    for (const int order : {0, 1, -1})
      for (const int k : {1, 64, 200, 319})
        for (const Matrix& mask : masks) {
          CAPTURE(levels);
          CAPTURE(order);
          CAPTURE(k);
          const Matrix scores = score_rows(rng, n, n, levels, order);
          CHECK((select_top_k(scores, mask, k).array() == sorted_top_k(scores, mask, k).array()).all());
        }
}

TEST_CASE("attention over a sparse selection of long rows: weights and outputs as the formulas give them") {
  Scenario s;
  s.name = "long sparse";
  const int n = 400, d_model = 12;
  for (int i = 0; i < n; ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = seeded_matrix(5, SeedStream::Embeddings, n, d_model);
  s.attention.heads = s.attention.kv_heads = 2;
  s.attention.head_dim = 6;
  s.attention.mask = MaskKind::Causal;
  s.attention.sparse = SparseConfig{16, 2, 4};
  const Trace t = compute_trace(s);
  for (const HeadTrace& h : t.heads) {
    Matrix weights = Matrix::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      double m = -kInf, z = 0.0;
      for (int j = 0; j < n; ++j)
        if (t.indexer->selected(i, j) != 0.0) m = std::max(m, h.scores(i, j) / std::sqrt(6.0));
      for (int j = 0; j < n; ++j)
        if (t.indexer->selected(i, j) != 0.0) z += weights(i, j) = std::exp(h.scores(i, j) / std::sqrt(6.0) - m);
      weights.row(i) /= z;
    }
    CHECK(h.mask->sum() == doctest::Approx(16.0 * (n - 15) + 15.0 * 16 / 2));  // 16 keys a row once 16 are visible
    check_matrix(h.weights(), weights, 1e-14, "softmax over the selected keys alone");
    Matrix output = Matrix::Zero(n, h.v.cols());
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) output.row(i) += weights(i, j) * h.v.row(j);
    check_matrix(h.output, output, 1e-13, "the selected keys' values, weighted");
  }
}

TEST_CASE("decoding with sparse attention scans the whole cache and attends to its selection") {
  Scenario s = indexed(1);
  s.attention.mask = MaskKind::Causal;
  const DecodeTrace d = decode(s);
  REQUIRE(d.steps.size() == 3);
  check_matrix(d.steps[2].indexer_scores, mat({{-2, -4, -1}}), 0.0, "step 2 scores every cached token");
  check_matrix(d.steps[2].selected, mat({{0, 0, 1}}), 0.0, "and keeps one");
  check_matrix(d.steps[1].selected, mat({{0, 1}}), 0.0, "step 1");
  check_matrix(d.cache.indexer_k, mat({{1}, {2}, {-1}}), 0.0, "the indexer's keys are cached");
  CHECK(d.elements_per_token == 2 + 1);
  const Trace t = compute_trace(s);
  for (const DecodeStep& step : d.steps) check_matrix(step.output, t.output.row(step.t), 1e-15, "step t = row t");
}

namespace {

// Scores of row 0 are [1, 3, 2] (q = 1, keys 1, 3, 2, no scale); values 1, 3, 2.
Trace three_keys() {
  Scenario s;
  s.input = {{"a", "b", "c"}, mat({{1}, {3}, {2}})};
  s.attention.heads = 1;
  s.attention.head_dim = 1;
  s.attention.scale = false;
  s.attention.mask = MaskKind::Causal;
  s.weights.W_Q = mat({{1}});
  s.weights.W_K = s.weights.W_V = mat({{1}});
  s.input.embeddings = mat({{1}, {3}, {2}});
  return compute_trace(s);
}

}  // namespace

TEST_CASE("the online softmax by hand: running max, rescale and sum block by block") {
  const Trace t = three_keys();  // row 2 sees all three keys: masked scores 2*[1, 3, 2] = [2, 6, 4]
  const OnlineSoftmax o = online_softmax(t, 0, 2, 1);
  REQUIRE(o.blocks.size() == 3);
  CHECK(o.blocks[0].block_max == 2);
  CHECK(o.blocks[0].m == 2);
  CHECK(o.blocks[0].rescale == 0);  // e^(-inf - 2): there was nothing before
  CHECK(o.blocks[0].l == 1);
  check_matrix(o.blocks[0].output, mat({{1}}), 0.0, "after key 0: its value");
  CHECK(o.blocks[1].m == 6);
  CHECK(o.blocks[1].rescale == doctest::Approx(std::exp(-4.0)).epsilon(1e-15));
  CHECK(o.blocks[1].l == doctest::Approx(std::exp(-4.0) + 1).epsilon(1e-15));
  CHECK(o.blocks[2].rescale == 1);
  const double z = std::exp(-4.0) + 1 + std::exp(-2.0);
  CHECK(o.blocks[2].l == doctest::Approx(z).epsilon(1e-15));
  check_matrix(o.output, mat({{(std::exp(-4.0) * 1 + 3 + std::exp(-2.0) * 2) / z}}), 1e-15, "final");
  for (int block = 1; block <= 4; ++block) {
    CAPTURE(block);
    for (int row = 0; row < 3; ++row) CHECK(online_softmax(t, 0, row, block).max_difference <= 1e-12);
  }
  const OnlineSoftmax first = online_softmax(t, 0, 0, 2);  // row 0 sees key 0 only
  REQUIRE(first.blocks.size() == 2);
  CHECK(first.blocks[1].block_max == -kInf);
  CHECK(first.blocks[1].rescale == 1);
  CHECK(first.blocks[1].l == 1);
}

TEST_CASE("the online softmax refuses the linear kernel and a row or head out of range") {
  Trace t = three_keys();
  CHECK_THROWS_WITH_AS(online_softmax(t, 0, 3, 1), "--row: must be <= 2 (found 3)", InputError);
  CHECK_THROWS_WITH_AS(online_softmax(t, 1, 0, 1), "--head: must be <= 0 (found 1)", InputError);
  CHECK_THROWS_WITH_AS(online_softmax(t, 0, 0, 0), "--block: must be >= 1 (found 0)", InputError);
  t.attention.kernel = Kernel::Linear;
  CHECK_THROWS_WITH_AS(online_softmax(t, 0, 0, 1),
                       "attention.kernel: the online softmax needs kernel softmax (found linear)", InputError);
}
