// A trace computed with the trace before an edit (TraceOptions::earlier) takes the tiles and row blocks whose inputs
// did not change, and is the same bits as one computed from nothing: every variant, mask, kernel and position, after
// an edit of one token, of a weight or of the configuration.
#include <cblas.h>

#include <cstring>
#include <functional>

#include "core/attention.h"
#include "core/product.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;

namespace {

// 300 tokens (row blocks 0-127, 128-255 and 256-299), d_model 8, two heads of 4, W_O; weights drawn from the seed.
Scenario tokens_300(const std::function<void(AttentionConfig&)>& configure = {}) {
  Scenario s;
  s.name = "reuse";
  for (int i = 0; i < 300; ++i) s.input.tokens.push_back("t" + std::to_string(i));
  s.input.embeddings = seeded_matrix(5, SeedStream::Embeddings, 300, 8);
  s.attention.heads = 2;
  s.attention.head_dim = 4;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  s.seed = 5;
  if (configure) configure(s.attention);
  return s;
}

// The bits of a and b, not their values: 0.0 and -0.0 differ, and a NaN equals itself. (memcmp may not be given the
// null data of an empty matrix, even for 0 bytes.)
bool same(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0);
}
bool same(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0);
}

void check_same_bits(const Trace& reused, const Trace& fresh) {
  CHECK(same(reused.Q, fresh.Q));
  CHECK(same(reused.K, fresh.K));
  CHECK(same(reused.V, fresh.V));
  CHECK(same(reused.latent, fresh.latent));
  CHECK(same(reused.query_latent, fresh.query_latent));
  REQUIRE(reused.heads.size() == fresh.heads.size());
  for (std::size_t h = 0; h < fresh.heads.size(); ++h) {
    CAPTURE(h);
    const HeadTrace &a = reused.heads[h], &b = fresh.heads[h];
    CHECK(same(a.scored_q(), b.scored_q()));
    CHECK(same(a.row_max, b.row_max));
    CHECK(same(a.row_sum, b.row_sum));
    CHECK(same(a.entropy, b.entropy));
    CHECK(a.row_status == b.row_status);
    CHECK(same(a.output, b.output));
    CHECK(same(a.weights(), b.weights()));
    CHECK(same(a.scores(), b.scores()));
  }
  CHECK(same(reused.concat, fresh.concat));
  CHECK(same(reused.output, fresh.output));
}

// `edit` applied to `s`: the trace computed with the one before it, against one computed from nothing.
void check_edit(const Scenario& s, const std::function<void(Scenario&)>& edit, bool keep_weights) {
  const Trace before = compute_trace(s, {.keep_weights = keep_weights});
  Scenario edited = s;
  edit(edited);
  const Trace reused = compute_trace(edited, {.keep_weights = keep_weights, .earlier = &before});
  const Trace fresh = compute_trace(edited, {.keep_weights = keep_weights});
  check_same_bits(reused, fresh);
}

// Token i's embedding moved, as a drag on X moves it.
std::function<void(Scenario&)> nudge_token(Eigen::Index i) {
  return [i](Scenario& s) { s.input.embeddings(i, 3) += 0.25; };
}

const std::vector<std::pair<std::string, std::function<void(AttentionConfig&)>>>& configurations() {
  static const std::vector<std::pair<std::string, std::function<void(AttentionConfig&)>>> all = {
      {"mha causal", {}},
      {"no mask", [](AttentionConfig& a) { a.mask = MaskKind::None; }},
      {"sliding window", [](AttentionConfig& a) { a.mask = MaskKind::SlidingWindow, a.window = 40; }},
      {"linear kernel", [](AttentionConfig& a) { a.kernel = Kernel::Linear; }},
      {"rope", [](AttentionConfig& a) { a.positions = Positions::Rope; }},
      {"sinusoidal", [](AttentionConfig& a) { a.positions = Positions::Sinusoidal; }},
      {"mqa", [](AttentionConfig& a) { a.variant = Variant::Mqa; }},
      {"mla with a query latent and rope",
       [](AttentionConfig& a) {
         a.variant = Variant::Mla, a.latent_dim = 3, a.query_latent_dim = 2;
         a.positions = Positions::Rope, a.rope_dim = 2;
       }},
      {"sparse",
       [](AttentionConfig& a) {
         a.sparse = SparseConfig{16, 2, 4};
       }},
      {"custom mask with holes",
       [](AttentionConfig& a) {
         a.mask = MaskKind::Custom;
         a.custom_mask = Matrix::Zero(300, 300);
         for (int i = 0; i < 300; ++i)
           for (int j = 0; j <= i; ++j) a.custom_mask(i, j) = (i + j) % 3 != 0 || i == j ? 1.0 : 0.0;
       }},
      {"gqa, 4 heads sharing 2",
       [](AttentionConfig& a) { a.variant = Variant::Gqa, a.heads = 4, a.head_dim = 2, a.kv_heads = 2; }},
      {"learned positions", [](AttentionConfig& a) { a.positions = Positions::Learned, a.max_positions = 300; }},
      {"mla", [](AttentionConfig& a) { a.variant = Variant::Mla, a.latent_dim = 3; }},
  };
  return all;
}

// Whether block 0 of a causal head (rows 0-127, keys 0-127) stands after a drag on token 200.
bool block_0_stands(const std::string& configuration) {
  return configuration != "no mask" && configuration != "linear kernel";  // a row of those sees every key
}

}  // namespace

TEST_CASE("a trace computed with the trace before an edit is the same bits as one computed from nothing") {
  for (const auto& c : configurations()) {
    const std::string& name = c.first;  // not a structured binding: clang 14's CAPTURE cannot take one
    const auto& configure = c.second;
    CAPTURE(name);
    const Scenario s = tokens_300(configure);
    for (const Eigen::Index token : {0, 127, 128, 200, 299}) {
      CAPTURE(token);
      check_edit(s, nudge_token(token), true);
    }
    check_edit(s, nudge_token(150), false);
  }
}

TEST_CASE("an edit of a weight, of the mask or of the shape after the trace before it: the same bits") {
  const Scenario s = tokens_300();
  const Trace drawn = compute_trace(s);
  const auto set_weight = [&](WeightId id, Eigen::Index r, Eigen::Index c) {
    return [&drawn, id, r, c](Scenario& e) {
      weight_slot(e.weights, id) = with_cell(*weight_slot(drawn.weights, id), r, c, 0.75);
    };
  };
  check_edit(s, set_weight(WeightId::W_Q, 2, 5), true);  // head 1's queries only
  check_edit(s, set_weight(WeightId::W_K, 0, 0), true);
  check_edit(s, set_weight(WeightId::W_V, 7, 7), true);
  check_edit(s, set_weight(WeightId::W_O, 4, 1), true);
  check_edit(
      s, [](Scenario& e) { e.attention.mask = MaskKind::SlidingWindow, e.attention.window = 100; }, true);
  check_edit(
      s, [](Scenario& e) { e.attention.scale = false; }, true);
  check_edit(
      s, [](Scenario& e) { e.attention.kernel = Kernel::Linear; }, true);
  check_edit(
      s, [](Scenario& e) { e.attention.heads = 4, e.attention.head_dim = 2; }, true);
  check_edit(
      s, [](Scenario& e) { e.seed = 6; }, true);
  check_edit(
      s,
      [](Scenario& e) {
        e.input.tokens.pop_back();
        e.input.embeddings.conservativeResize(299, 8);
      },
      true);
}

// The earlier trace poisoned where the edit cannot reach: what shows through was taken, what does not was computed.
TEST_CASE("a drag on token 200 takes projection tiles and causal row blocks from before it, and computes the rest") {
  const Scenario s = tokens_300();
  const Trace before = compute_trace(s, {.keep_weights = true});
  Scenario edited = s;
  nudge_token(200)(edited);
  const auto after = [&](const std::function<void(Trace&)>& poison) {
    Trace poisoned = before;
    poison(poisoned);
    return compute_trace(edited, {.keep_weights = true, .earlier = &poisoned});
  };
  const Trace q = after([](Trace& b) {
    b.Q.row(5).setConstant(42.0);    // row tile 0 of Q: X rows 0-127 unchanged
    b.Q.row(200).setConstant(42.0);  // row tile 1: X row 200 changed
  });
  CHECK(q.Q.row(5) == Eigen::RowVectorXd::Constant(8, 42.0));
  CHECK(q.Q(200, 0) != 42.0);
  const Trace heads = after([](Trace& b) {
    b.heads[1].output.row(3).setConstant(42.0);    // block 0 (rows 0-127) sees keys 0-127 only
    b.heads[1].output.row(250).setConstant(42.0);  // block 1 sees key 200
  });
  CHECK(heads.heads[1].output.row(3) == Eigen::RowVectorXd::Constant(4, 42.0));
  CHECK(heads.heads[1].output(250, 0) != 42.0);
  const Trace output = after([](Trace& b) {
    b.output.row(7).setConstant(42.0);    // concat rows 0-127 unchanged
    b.output.row(200).setConstant(42.0);  // changed
  });
  CHECK(output.output.row(7) == Eigen::RowVectorXd::Constant(8, 42.0));
  CHECK(output.output(200, 0) != 42.0);
}

TEST_CASE("a trace whose weights were not kept gives no blocks to one that keeps them") {
  const Scenario s = tokens_300();
  Trace before = compute_trace(s);
  before.heads[0].output.row(3).setConstant(42.0);
  const Trace t = compute_trace(s, {.keep_weights = true, .earlier = &before});
  CHECK(t.heads[0].output(3, 0) != 42.0);
  check_same_bits(t, compute_trace(s));
}

TEST_CASE("cross-attention after a drag on a query token or a context token: the same bits") {
  Scenario s = tokens_300();
  s.attention.mask = MaskKind::None;
  s.context = TokenRows{};
  for (int i = 0; i < 200; ++i) s.context->tokens.push_back("c" + std::to_string(i));
  s.context->embeddings = seeded_matrix(6, SeedStream::Embeddings, 200, 8);
  check_edit(s, nudge_token(250), true);  // only the queries' last block
  check_edit(
      s, [](Scenario& e) { e.context->embeddings(150, 2) -= 0.5; }, true);
}

TEST_CASE("after a drag on token 200, block 0 of every causal head is taken, whatever the variant or positions") {
  for (const auto& c : configurations()) {
    const std::string& name = c.first;  // not a structured binding: clang 14's CAPTURE cannot take one
    const auto& configure = c.second;
    if (!block_0_stands(name)) continue;
    CAPTURE(name);
    const Scenario s = tokens_300(configure);
    Trace before = compute_trace(s, {.keep_weights = true});
    before.heads[1].output.row(3).setConstant(42.0);  // what only taking the block would give
    Scenario edited = s;
    nudge_token(200)(edited);
    const Trace t = compute_trace(edited, {.keep_weights = true, .earlier = &before});
    CHECK(t.heads[1].output(3, 0) == 42.0);
    CHECK(t.heads[1].output(250, 0) != 42.0);
  }
}

TEST_CASE("the linear kernel after an edit of W_Q's head 1 columns: head 0's blocks are taken, head 1's computed") {
  const Scenario s = tokens_300([](AttentionConfig& a) { a.kernel = Kernel::Linear; });
  Trace before = compute_trace(s, {.keep_weights = true});
  const Matrix W_Q = with_cell(*before.weights.W_Q, 2, 5, 0.75);  // column 5 feeds head 1 (columns 4-7)
  check_edit(
      s, [&](Scenario& e) { e.weights.W_Q = W_Q; }, true);
  before.heads[0].output.row(3).setConstant(42.0);
  before.heads[1].output.row(3).setConstant(42.0);
  Scenario edited = s;
  edited.weights.W_Q = W_Q;
  const Trace t = compute_trace(edited, {.keep_weights = true, .earlier = &before});
  CHECK(t.heads[0].output(3, 0) == 42.0);
  CHECK(t.heads[1].output(3, 0) != 42.0);
}

// Three row tiles (128, 128 and 44 tall) and, to make at least four tiles, two column tiles (152 and 148 wide).
TEST_CASE("a product after an edit takes the tiles whose rows of a and columns of b are unchanged") {
  const Matrix a = seeded_matrix(7, SeedStream::Embeddings, 300, 16);
  const Matrix b = seeded_matrix(7, SeedStream::W_Q, 16, 300);
  Matrix before = product(a, b);
  Matrix a_edited = a, b_edited = b;
  a_edited(260, 0) += 1.0;  // row tile 2
  b_edited(4, 200) += 1.0;  // column tile 1
  const Matrix fresh = product(a_edited, b_edited);
  CHECK(same(product(a_edited, b_edited, EarlierProduct{a, b, before}), fresh));
  before(5, 10) = before(200, 151) = before(5, 152) = before(260, 10) = 42.0;
  const Matrix taken = product(a_edited, b_edited, EarlierProduct{a, b, before});
  CHECK(taken(5, 10) == 42.0);     // rows 0-127, columns 0-151: unchanged
  CHECK(taken(200, 151) == 42.0);  // rows 128-255 too
  CHECK(taken(5, 152) == fresh(5, 152));
  CHECK(taken(260, 10) == fresh(260, 10));
  const Matrix other_shape = Matrix::Zero(300, 299);  // an earlier result of another shape gives nothing
  CHECK(same(product(a_edited, b_edited, EarlierProduct{a, b, other_shape}), fresh));
}

// Four row tiles or more: each tile is as wide as b, so an edit of one column of b recomputes every column.
TEST_CASE("a product of 512 rows or more takes whole rows of tiles: an edit of b leaves none unchanged") {
  const Matrix a = seeded_matrix(7, SeedStream::Embeddings, 512, 16);
  const Matrix b = seeded_matrix(7, SeedStream::W_Q, 16, 300);
  Matrix before = product(a, b);
  Matrix a_edited = a, b_edited = b;
  a_edited(300, 0) += 1.0;  // row tile 2
  const Matrix fresh_rows = product(a_edited, b);
  before(5, 0) = before(5, 299) = before(300, 0) = 42.0;
  const Matrix rows = product(a_edited, b, EarlierProduct{a, b, before});
  CHECK(rows(5, 0) == 42.0);  // rows 0-127, every column: unchanged
  CHECK(rows(5, 299) == 42.0);
  CHECK(rows(300, 0) == fresh_rows(300, 0));
  b_edited(4, 290) += 1.0;
  const Matrix fresh = product(a, b_edited);
  const Matrix cols = product(a, b_edited, EarlierProduct{a, b, before});
  CHECK(cols(5, 0) == fresh(5, 0));  // far from the edited column 290, but in its tile (all of b): recomputed
  CHECK(same(cols, fresh));
}

TEST_CASE("OpenBLAS runs the products on the calling thread: the tiles and heads are shared out by ours") {
  CHECK(openblas_get_num_threads() == 1);
  CHECK(openblas_get_parallel() == 1);  // the pthreads build: its thread count leaves OpenMP's alone
  // A product big enough for OpenBLAS's threads, inside our parallel tiles: the same bits on every run.
  const Matrix a = seeded_matrix(3, SeedStream::Embeddings, 700, 512);
  const Matrix b = seeded_matrix(3, SeedStream::W_Q, 512, 512);
  const Matrix first = product(a, b);
  CHECK(same(product(a, b), first));
  CHECK((first - a * b).cwiseAbs().maxCoeff() < 1e-12);
}
