// What a large trace leaves for later: the scores no weight reads (keys the mask hides from a whole block of rows) are
// computed on the first ask, and the weights of a matrix of 32 MiB or more are zeros never written.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <utility>
#include <vector>

#include "core/attention.h"
#include "core/head_blocks.h"
#include "core/same_bits.h"
#include "core/zeroed_matrix.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// T tokens, d_model 4, two heads of 2, every weight given: the expectations below are made from these alone.
Scenario long_scenario(int tokens, MaskKind mask) {
  Scenario s;
  s.name = "long";
  for (int i = 0; i < tokens; ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = seeded_matrix(3, SeedStream::Embeddings, tokens, 4);
  s.attention.heads = 2;
  s.attention.head_dim = 2;
  s.attention.mask = mask;
  s.attention.window = 50;
  s.weights.W_Q = seeded_matrix(3, SeedStream::W_Q, 4, 4);
  s.weights.W_K = seeded_matrix(3, SeedStream::W_K, 4, 4);
  s.weights.W_V = seeded_matrix(3, SeedStream::W_V, 4, 4);
  return s;
}

// Head h's q k^T, from the scenario's numbers.
Matrix expected_scores(const Scenario& s, int h) {
  const Matrix& x = s.input.embeddings;
  return (x * s.weights.W_Q->middleCols(2 * h, 2)) * (x * s.weights.W_K->middleCols(2 * h, 2)).transpose();
}

bool sees(const AttentionConfig& a, Eigen::Index i, Eigen::Index j) {
  if (a.mask == MaskKind::None) return true;
  if (a.mask == MaskKind::Causal) return j <= i;
  return j <= i && j > i - a.window;
}

// Softmax of row i's scaled scores over the keys it sees.
Eigen::RowVectorXd expected_weights(const Scenario& s, const Matrix& scores, Eigen::Index i) {
  Eigen::RowVectorXd w = Eigen::RowVectorXd::Zero(scores.cols());
  double top = -INFINITY;
  for (Eigen::Index j = 0; j < w.size(); ++j)
    if (sees(s.attention, i, j)) top = std::max(top, scores(i, j) / std::sqrt(2.0));
  for (Eigen::Index j = 0; j < w.size(); ++j)
    if (sees(s.attention, i, j)) w(j) = std::exp(scores(i, j) / std::sqrt(2.0) - top);
  return w / w.sum();
}

void check_head(const Scenario& s, const HeadTrace& h, const std::vector<Eigen::Index>& rows) {
  const Matrix scores = expected_scores(s, h.head);
  check_matrix(h.scores(), scores, 1e-12, "head " + std::to_string(h.head) + " scores, hidden keys too");
  for (Eigen::Index i : rows)
    check_matrix(h.weights().row(i), expected_weights(s, scores, i), 1e-12, "weights row " + std::to_string(i));
  for (Eigen::Index i = 0; i < h.weights().rows(); ++i)
    for (Eigen::Index j = 0; j < h.weights().cols(); ++j)
      if (!sees(s.attention, i, j) && h.weights(i, j) != 0.0) FAIL("a hidden key has weight at " << i << ", " << j);
}

}  // namespace

TEST_CASE("zero_without_writing: a matrix of 32 MiB or more reads 0 everywhere, a smaller one is left to the caller") {
  Matrix big = Matrix::Constant(2100, 2100, 7.0);  // 35.3 MB
  CHECK(zero_without_writing(big));
  CHECK(big.minCoeff() == 0.0);
  CHECK(big.maxCoeff() == 0.0);
  Matrix odd = Matrix::Constant(2049, 2049, 7.0);  // 33.6 MB: both ends of it in partial pages
  odd(0, 0) = odd(2048, 2048) = -1.0;
  CHECK(zero_without_writing(odd));
  CHECK(odd.cwiseAbs().maxCoeff() == 0.0);
  Matrix small = Matrix::Constant(100, 100, 7.0);
  CHECK_FALSE(zero_without_writing(small));
  CHECK(small == Matrix::Constant(100, 100, 7.0));
}

// The process's resident memory (/proc/self/statm), which the kernel's zero page does not count in.
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  REQUIRE(statm);
  return resident * sysconf(_SC_PAGESIZE);
}

// The whole pages of rows [r, r + n) of m: [lo, hi).
std::pair<std::uintptr_t, std::uintptr_t> whole_pages(const Matrix& m, Eigen::Index r, Eigen::Index n) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(m.row(r).data());
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(n * m.cols()) * sizeof(double);
  return {(begin + page - 1) / page * page, end / page * page};
}

// How many of the whole pages of rows [r, r + n) of m are in memory.
std::size_t resident_pages(const Matrix& m, Eigen::Index r, Eigen::Index n) {
  const auto [lo, hi] = whole_pages(m, r, n);
  std::vector<unsigned char> in_memory((hi - lo) / static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)));
  REQUIRE(mincore(reinterpret_cast<void*>(lo), hi - lo, in_memory.data()) == 0);
  return static_cast<std::size_t>(
      std::count_if(in_memory.begin(), in_memory.end(), [](unsigned char c) { return c & 1; }));
}

TEST_CASE("zero_without_writing on a matrix half written (pages a freed trace left): zeros, the rest still unpaged") {
  Matrix m = Matrix::Constant(2100, 2100, 7.0);  // 35.3 MB
  // Rows 1100 on as a fresh mapping's pages are, whatever the allocator gave: not in memory (until read, zeros).
  const auto [lo, hi] = whole_pages(m, 1100, 1000);
  madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_NOHUGEPAGE);  // (a huge page would bring rows back whole)
  REQUIRE(madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) == 0);
  REQUIRE(resident_pages(m, 1100, 1000) == 0);
  CHECK(zero_without_writing(m));
  CHECK(resident_pages(m, 0, 1000) > 4000);  // cleared in place, not handed back
  CHECK(resident_pages(m, 1100, 1000) == 0);
  CHECK(m.cwiseAbs().maxCoeff() == 0.0);  // (reading maps the untouched pages to the kernel's zero page)
  const std::int64_t before = resident_bytes();
  CHECK(zero_without_writing(m));  // every page in memory now, and zeros: none written, none taken
  CHECK(resident_bytes() - before < (4 << 20));
  CHECK(m.cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("a long trace's scores are complete when asked for, whatever the mask hid from a block of rows") {
  for (MaskKind mask : {MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::None}) {
    CAPTURE(static_cast<int>(mask));
    const Scenario s = long_scenario(300, mask);  // blocks of 128 rows: 0-127, 128-255 and a partial one
    const Trace t = compute_trace(s);
    for (const HeadTrace& h : t.heads) check_head(s, h, {0, 1, 127, 128, 200, 255, 256, 299});
    CHECK(t.heads[0].scaled(299, 0) == t.heads[0].scores()(299, 0) / std::sqrt(2.0));
    if (mask != MaskKind::None) CHECK(t.heads[1].masked(0, 299) == -INFINITY);
  }
}

TEST_CASE("a copy of a head shares its scores, made once for both") {
  const Trace t = compute_trace(long_scenario(200, MaskKind::Causal));
  const HeadTrace copy = t.heads[0];
  CHECK(&copy.scores() == &t.heads[0].scores());
}

TEST_CASE("at 2,048 tokens a causal head's weights are zeros no one wrote, and its scores are still all there") {
  const Scenario s = long_scenario(2048, MaskKind::Causal);
  const Trace t = compute_trace(s);
  check_head(s, t.heads[1], {0, 1, 1000, 2047});
  CHECK((t.heads[0].weights().rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
}

TEST_CASE(
    "weights made on the first ask are the ones the output was made from, bit for bit on every run and as "
    "kept") {
  for (MaskKind mask : {MaskKind::Causal, MaskKind::SlidingWindow}) {
    const Scenario s = long_scenario(300, mask);
    const Trace a = compute_trace(s), b = compute_trace(s), kept = compute_trace(s, {.keep_weights = true});
    for (std::size_t h = 0; h < a.heads.size(); ++h) {
      CHECK(kept.heads[h].weights() == a.heads[h].weights());  // kept as computed, or made again: the same bits
      check_matrix(a.heads[h].output, a.heads[h].weights() * a.heads[h].v, 1e-15, "output = weights v");
      CHECK(a.heads[h].weights() == b.heads[h].weights());
      CHECK(a.heads[h].scores() == b.heads[h].scores());
      CHECK(a.heads[h].row_sum == b.heads[h].row_sum);
    }
  }
}

TEST_CASE("the scores a view reads are, key for key, the bits the weights were made from") {
  // d_model 128, two heads of 64, 700 tokens: blocks of 128 rows whose products differ in shape from a whole row.
  for (MaskKind mask : {MaskKind::Causal, MaskKind::SlidingWindow, MaskKind::None}) {
    CAPTURE(static_cast<int>(mask));
    Scenario s = long_scenario(700, mask);
    s.input.embeddings = seeded_matrix(5, SeedStream::Embeddings, 700, 128);
    s.attention.head_dim = 64;
    s.weights.W_Q = seeded_matrix(5, SeedStream::W_Q, 128, 128);
    s.weights.W_K = seeded_matrix(5, SeedStream::W_K, 128, 128);
    s.weights.W_V = seeded_matrix(5, SeedStream::W_V, 128, 128);
    const Trace t = compute_trace(s);
    for (const HeadTrace& h : t.heads) {
      const HeadInputs in{h.scored_q(), h.scored_k(), *h.mask, *h.visible, h.kernel, h.scale_factor};
      RowBlock b;
      for (Eigen::Index r = 0; r < 700; r += kRowBlock) {
        score_block(in, r, std::min<Eigen::Index>(kRowBlock, 700 - r), b);  // compute_block's scores
        CAPTURE(r);
        REQUIRE(b.width() > 0);
        CHECK(same_bits(b.scores(), h.scores().block(r, 0, b.n, b.width())));
      }
    }
  }
}
