#include "fuzz/fuzz_scenario_body.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "core/attention.h"
#include "core/decode.h"
#include "core/io/decode_json.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/io/trace_json.h"
#include "core/model.h"
#include "core/validate.h"

namespace attn::fuzz {
namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_scenario: invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// The message is only built when the check fails: the fuzzer runs these millions of times.
#define FUZZ_CHECK(cond, msg)                                                                            \
  do {                                                                                                   \
    if (!(cond)) fail(std::string(msg) + " (" #cond ", " __FILE__ ":" + std::to_string(__LINE__) + ")"); \
  } while (0)

// Every digit: a sum of 1.0000000001 must not print as 1.000000.
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string cell(const char* what, int head, Eigen::Index i, Eigen::Index j = -1) {
  std::string s = std::string(what) + (head >= 0 ? " of head " + std::to_string(head) : std::string()) + " [" +
                  std::to_string(i) + "]";
  if (j >= 0) s += "[" + std::to_string(j) + "]";
  return s;
}

std::string shape_of(const Matrix& m) { return std::to_string(m.rows()) + " x " + std::to_string(m.cols()); }

void check_shape(const Matrix& m, Eigen::Index rows, Eigen::Index cols, const char* what, int head = -1) {
  FUZZ_CHECK(m.rows() == rows && m.cols() == cols,
             std::string(what) + (head >= 0 ? " of head " + std::to_string(head) : std::string()) + " is " +
                 shape_of(m) + ", expected " + std::to_string(rows) + " x " + std::to_string(cols));
}

void check_finite(const Matrix& m, const char* what, int head = -1) {
  if (m.allFinite()) return;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      FUZZ_CHECK(std::isfinite(m(i, j)), cell(what, head, i, j) + " = " + num(m(i, j)) + " is not finite");
}

void check_finite(const Vector& v, const char* what, int head) {
  for (Eigen::Index i = 0; i < v.size(); ++i)
    FUZZ_CHECK(std::isfinite(v(i)), cell(what, head, i) + " = " + num(v(i)) + " is not finite");
}

// |a - b| within tol * bound (bound is the same product taken over absolute values: the rounding error of
// any evaluation order is a small multiple of it).
void check_close(const Matrix& a, const Matrix& b, const Matrix& bound, double tol, const char* what, int head = -1) {
  check_shape(a, b.rows(), b.cols(), what, head);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      FUZZ_CHECK(std::abs(a(i, j) - b(i, j)) <= tol * bound(i, j), cell(what, head, i, j) + ": " + num(a(i, j)) +
                                                                       " vs " + num(b(i, j)) + " (bound " +
                                                                       num(tol * bound(i, j)) + ")");
}

// The sets S_i, written independently of core/mask.cpp.
bool may_attend(const AttentionConfig& a, Eigen::Index i, Eigen::Index j) {
  switch (a.mask) {
    case MaskKind::None: return true;
    case MaskKind::Causal: return j <= i;
    case MaskKind::SlidingWindow: return j <= i && i - j < a.window;
    case MaskKind::Custom: return a.custom_mask(i, j) == 1.0;
  }
  fail("unknown mask kind");
}

// One row of weights against its status: shared by the trace and by every decoding step.
void check_weight_row(const Eigen::Ref<const Matrix>& w, RowStatus status, Eigen::Index visible, Kernel kernel,
                      const std::string& where) {
  double sum = 0.0, abs_sum = 0.0;
  bool negative = false;
  for (Eigen::Index j = 0; j < w.cols(); ++j) {
    FUZZ_CHECK(std::isfinite(w(0, j)), where + ": weight " + std::to_string(j) + " is not finite");
    sum += w(0, j);
    abs_sum += std::abs(w(0, j));
    negative = negative || w(0, j) < 0.0;
  }
  switch (status) {
    case RowStatus::Ok:
      FUZZ_CHECK(visible > 0, where + ": status ok with every key hidden");
      FUZZ_CHECK(std::abs(sum - 1.0) <= 1e-9, where + ": weights sum to " + num(sum) + ", not 1");
      for (Eigen::Index j = 0; j < w.cols(); ++j)
        FUZZ_CHECK(w(0, j) >= 0.0 && w(0, j) <= 1.0,
                   where + ": weight " + std::to_string(j) + " = " + num(w(0, j)) + " is outside [0, 1]");
      break;
    case RowStatus::AllMasked:
      FUZZ_CHECK(visible == 0, where + ": status all_masked with " + std::to_string(visible) + " visible keys");
      FUZZ_CHECK(abs_sum == 0.0, where + ": all_masked row with non-zero weights");
      break;
    case RowStatus::ZeroSum:
      FUZZ_CHECK(kernel == Kernel::Linear, where + ": status zero_sum under softmax");
      FUZZ_CHECK(visible > 0, where + ": status zero_sum with every key hidden");
      FUZZ_CHECK(abs_sum == 0.0, where + ": zero_sum row with non-zero weights");
      break;
    case RowStatus::Signed:
      FUZZ_CHECK(kernel == Kernel::Linear, where + ": status signed under softmax");
      FUZZ_CHECK(negative, where + ": status signed without a negative weight");
      FUZZ_CHECK(std::abs(sum - 1.0) <= 1e-9 * std::max(1.0, abs_sum),
                 where + ": signed weights sum to " + num(sum) + ", not 1");
      break;
  }
  if (status != RowStatus::Signed) FUZZ_CHECK(!negative, where + ": a negative weight in a row that is not signed");
}

// Every matrix of head h has its shape, and what it read is exactly what the trace projected.
void check_head_shapes(const Scenario& s, const Trace& t, int h) {
  const AttentionConfig& a = s.attention;
  const HeadTrace& ht = t.heads[static_cast<std::size_t>(h)];
  const Eigen::Index nq = s.n_q(), nkv = s.n_kv(), d = a.head_dim;
  FUZZ_CHECK(ht.head == h, "head " + std::to_string(h) + " says it is head " + std::to_string(ht.head));
  FUZZ_CHECK(ht.kv_head == kv_head_for(a, h),
             "head " + std::to_string(h) + " read kv head " + std::to_string(ht.kv_head));
  FUZZ_CHECK(ht.kv_head >= 0 && ht.kv_head < kv_head_count(a), "kv head out of range");
  check_shape(ht.q, nq, d, "q", h);
  check_shape(ht.k, nkv, d, "k", h);
  check_shape(ht.v, nkv, d, "v", h);
  check_shape(ht.scores(), nq, nkv, "scores", h);
  check_shape(ht.scaled(), nq, nkv, "scaled", h);
  check_shape(*ht.mask, nq, nkv, "mask", h);
  check_shape(ht.masked(), nq, nkv, "masked", h);
  check_shape(ht.weights(), nq, nkv, "weights", h);
  check_shape(ht.output, nq, d, "output", h);
  if (t.weights.W_O) check_shape(ht.contribution(), nq, s.d_model(), "contribution", h);
  else FUZZ_CHECK(ht.contribution().size() == 0, "a contribution without W_O");
  FUZZ_CHECK(ht.row_max.size() == nq && ht.row_sum.size() == nq && ht.entropy.size() == nq &&
                 ht.row_status.size() == static_cast<std::size_t>(nq),
             "per-row vectors of head " + std::to_string(h) + " are not N_Q long");
  FUZZ_CHECK(ht.q == t.Q.middleCols(h * d, d), "q of head " + std::to_string(h) + " is not its columns of Q");
  FUZZ_CHECK(ht.k == t.kv_heads[static_cast<std::size_t>(ht.kv_head)].k,
             "k of head " + std::to_string(h) + " is not its kv head's");
  FUZZ_CHECK(ht.v == t.kv_heads[static_cast<std::size_t>(ht.kv_head)].v,
             "v of head " + std::to_string(h) + " is not its kv head's");
  for (const auto* m : {&ht.q, &ht.k, &ht.v, &ht.scores(), &ht.scaled(), &ht.weights(), &ht.output, &ht.contribution()})
    check_finite(*m, "a matrix", h);
  check_finite(ht.row_max, "row_max", h);
  check_finite(ht.row_sum, "row_sum", h);
}

// Row i of head h: the mask, the scaled and masked scores cell by cell, then the weights and the row's
// statistics as its status says they must be.
void check_head_row(const Scenario& s, const Trace& t, int h, Eigen::Index i) {
  const AttentionConfig& a = s.attention;
  const HeadTrace& ht = t.heads[static_cast<std::size_t>(h)];
  const bool softmax = a.kernel == Kernel::Softmax;
  Eigen::Index visible = 0;
  double max_visible = -std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < s.n_kv(); ++j) {
    const double m = (*ht.mask)(i, j);
    FUZZ_CHECK(m == 0.0 || m == 1.0, cell("mask", h, i, j) + " = " + num(m) + " is not 0 or 1");
    // Sparse attention narrows the mask to the indexer's selection: a visible key is one the mask kind shows and
    // the indexer selected.
    const bool selected = !t.indexer || t.indexer->selected(i, j) == 1.0;
    FUZZ_CHECK((m == 1.0) == (may_attend(a, i, j) && selected),
               cell("mask", h, i, j) + " disagrees with the mask kind and the selection");
    FUZZ_CHECK(ht.scaled(i, j) == ht.scores(i, j) * t.scale_factor, cell("scaled", h, i, j) + " is not scores x scale");
    if (m == 0.0) {
      FUZZ_CHECK(ht.weights(i, j) == 0.0, cell("weights", h, i, j) + " is hidden but " + num(ht.weights(i, j)));
      FUZZ_CHECK(ht.masked(i, j) == (softmax ? -std::numeric_limits<double>::infinity() : 0.0),
                 cell("masked", h, i, j) + " is hidden but " + num(ht.masked(i, j)));
    } else {
      ++visible;
      FUZZ_CHECK(ht.masked(i, j) == ht.scaled(i, j), cell("masked", h, i, j) + " is visible but not the scaled score");
      max_visible = std::max(max_visible, ht.masked(i, j));
    }
  }
  const RowStatus status = ht.row_status[static_cast<std::size_t>(i)];
  const std::string where = cell("weights", h, i);
  check_weight_row(ht.weights().row(i), status, visible, a.kernel, where);
  const double entropy = ht.entropy(i);
  if (status == RowStatus::Signed) {
    FUZZ_CHECK(std::isnan(entropy), where + ": entropy of a signed row is " + num(entropy) + ", not NaN");
  } else {
    FUZZ_CHECK(std::isfinite(entropy), where + ": entropy " + num(entropy) + " is not finite");
  }
  if (status == RowStatus::Ok) {
    const double most = std::log(static_cast<double>(visible));
    FUZZ_CHECK(entropy >= -1e-12 && entropy <= most + 1e-9 * std::max(1.0, most),
               where + ": entropy " + num(entropy) + " outside [0, ln " + std::to_string(visible) + "]");
    if (softmax) {
      FUZZ_CHECK(ht.row_max(i) == max_visible, where + ": row_max is not the largest visible score");
      FUZZ_CHECK(ht.row_sum(i) >= 1.0 - 1e-12 && ht.row_sum(i) <= static_cast<double>(visible) * (1.0 + 1e-12),
                 where + ": softmax Z = " + num(ht.row_sum(i)) + " outside [1, visible keys]");
    }
  } else {
    FUZZ_CHECK(entropy == 0.0 || status == RowStatus::Signed,
               where + ": entropy of a row that is not normalised is not 0");
  }
  if (status == RowStatus::AllMasked || status == RowStatus::ZeroSum)
    FUZZ_CHECK(ht.output.row(i).isZero(0.0), cell("output", h, i) + ": a row without weights has a non-zero output");
}

void check_head(const Scenario& s, const Trace& t, int h) {
  check_head_shapes(s, t, h);
  for (Eigen::Index i = 0; i < s.n_q(); ++i) check_head_row(s, t, h, i);
  // output = weights v and contribution = output W_O^(h), to rounding.
  const HeadTrace& ht = t.heads[static_cast<std::size_t>(h)];
  const Eigen::Index d = s.attention.head_dim;
  const Matrix out_bound = ht.weights().cwiseAbs() * ht.v.cwiseAbs();
  check_close(ht.output, Matrix(ht.weights() * ht.v), out_bound, 1e-12, "output", h);
  if (t.weights.W_O) {
    const Matrix W_Oh = t.W_O().middleRows(h * d, d);
    check_close(ht.contribution(), Matrix(ht.output * W_Oh), Matrix(ht.output.cwiseAbs() * W_Oh.cwiseAbs()), 1e-12,
                "contribution", h);
  }
}

// What the biases beside mla's latent add to head h's scores, in magnitude: |b_Q| |W_UK|ᵀ |latent|ᵀ to every row and
// |q_i| . |b_K| to every score of row i.
void add_bias_bounds(const Trace& t, int h, Matrix& bound) {
  const int d = t.attention.head_dim;
  const Weights& w = t.weights;
  if (!w.b_K) return;
  bound.rowwise() += (w.b_Q->middleCols(h * d, d).cwiseAbs() * w.W_UK->middleCols(h * d, d).cwiseAbs().transpose() *
                      t.latent.cwiseAbs().transpose())
                         .row(0);
  bound.colwise() += (t.Q.middleCols(h * d, d).cwiseAbs() * w.b_K->middleCols(h * d, d).cwiseAbs().transpose()).col(0);
}

void check_absorbed(const Scenario& s, const Trace& t) {
  const AttentionConfig& a = s.attention;
  FUZZ_CHECK(t.absorbed.has_value() == (a.variant == Variant::Mla && !rope_turns_heads(a)),
             "absorbed form present for a variant other than mla (or mla turning its expanded keys), or missing");
  if (!t.absorbed) return;
  const AbsorbedMla& m = *t.absorbed;
  const int H = a.heads, d = a.head_dim, dc = a.latent_dim;
  const Matrix& qs = t.query_latent.size() > 0 ? t.query_latent : t.x;
  const Matrix& W_q = t.weights.W_UQ ? *t.weights.W_UQ : *t.weights.W_Q;
  const Eigen::Index d_out = t.output.cols();
  FUZZ_CHECK(m.W_UQK.size() == static_cast<std::size_t>(H) && m.scores.size() == static_cast<std::size_t>(H),
             "absorbed form does not have one W_UQK and one score matrix per head");
  check_shape(m.latent_output, s.n_q(), Eigen::Index(H) * dc, "absorbed latent_output");
  check_shape(m.W_LO, Eigen::Index(H) * dc, d_out, "absorbed W_LO");
  check_shape(m.output, s.n_q(), d_out, "absorbed output");
  check_finite(m.latent_output, "absorbed latent_output");
  check_finite(m.W_LO, "absorbed W_LO");
  check_finite(m.output, "absorbed output");
  const Matrix abs_latent = t.latent.cwiseAbs();
  Matrix out_bound = Matrix::Zero(s.n_q(), d_out);
  for (int h = 0; h < H; ++h) {
    check_shape(m.W_UQK[h], qs.cols(), dc, "absorbed W_UQK", h);
    check_shape(m.scores[h], s.n_q(), s.n_kv(), "absorbed scores", h);
    check_finite(m.W_UQK[h], "absorbed W_UQK", h);
    check_finite(m.scores[h], "absorbed scores", h);
    // The absorbed scores are the explicit ones, evaluated in another order.
    Matrix score_bound =
        qs.cwiseAbs() *
        (W_q.middleCols(h * d, d).cwiseAbs() * t.weights.W_UK->middleCols(h * d, d).cwiseAbs().transpose()) *
        abs_latent.transpose();
    add_bias_bounds(t, h, score_bound);
    check_close(m.scores[h], t.heads[h].scores(), score_bound, 1e-10, "absorbed scores", h);
    const Matrix uv = t.weights.W_UV->middleCols(h * d, d).cwiseAbs();  // (d_c, d)
    const Matrix uv_out = t.weights.W_O ? Matrix(uv * t.W_O().middleRows(h * d, d).cwiseAbs()) : uv;
    Matrix head_bound = t.heads[h].weights().cwiseAbs() * (abs_latent * uv_out);
    if (t.weights.b_V) {  // the value bias through each row's weights: (sum_j |w_ij|) |b_V| (|W_O|)
      const Matrix b_V = t.weights.b_V->middleCols(h * d, d).cwiseAbs();
      head_bound += t.heads[h].weights().cwiseAbs().rowwise().sum() *
                    (t.weights.W_O ? Matrix(b_V * t.W_O().middleRows(h * d, d).cwiseAbs()) : b_V);
    }
    if (t.weights.W_O) out_bound += head_bound;
    else out_bound.middleCols(h * d, d) += head_bound;
  }
  if (t.weights.b_O) out_bound.rowwise() += t.weights.b_O->row(0).cwiseAbs();  // both add it after W_O
  check_close(m.output, t.output, out_bound, 1e-10, "absorbed output");
}

void check_trace(const Scenario& s, const Trace& t) {
  const AttentionConfig& a = s.attention;
  const Eigen::Index nq = s.n_q(), nkv = s.n_kv(), dm = s.d_model(), d = a.head_dim, H = a.heads;
  const Eigen::Index G = kv_head_count(a), hd = H * d;
  const bool mla = a.variant == Variant::Mla;

  FUZZ_CHECK(t.tokens == s.input.tokens && t.context_tokens == s.kv_side().tokens,
             "trace tokens are not the scenario's");
  FUZZ_CHECK(t.cross_attention == s.context.has_value(), "cross_attention flag");
  FUZZ_CHECK(t.n_q() == nq && t.n_kv() == nkv, "trace N_Q / N_KV");
  FUZZ_CHECK(t.scale_factor == (a.scale ? 1.0 / std::sqrt(static_cast<double>(score_dim(a))) : 1.0), "scale factor");
  FUZZ_CHECK(t.x == s.input.embeddings && t.x_kv == s.kv_side().embeddings, "trace x / x_kv are not the embeddings");

  for (WeightId id : kAllWeights) {
    const SharedMatrix& used = weight_slot(t.weights, id);
    const SharedMatrix& given = weight_slot(s.weights, id);
    FUZZ_CHECK(used.has_value() == weight_used(id, a),
               std::string("trace weight ") + weight_name(id) + " present iff used");
    if (!used) continue;
    const WeightShape shape = weight_shape(id, a, s.d_model());
    check_shape(*used, shape.rows, shape.cols, weight_name(id));
    check_finite(*used, weight_name(id));
    if (given) FUZZ_CHECK(*used == *given, std::string("trace weight ") + weight_name(id) + " is not the file's");
  }

  check_shape(t.Q, nq, hd, "Q");
  check_shape(t.K, nkv, mla ? hd : G * d, "K");
  check_shape(t.V, nkv, mla ? hd : G * d, "V");
  if (mla) {
    check_shape(t.latent, nkv, a.latent_dim, "latent");
    if (a.query_latent_dim > 0) check_shape(t.query_latent, nq, a.query_latent_dim, "query_latent");
    else FUZZ_CHECK(t.query_latent.size() == 0, "query_latent without query_latent_dim");
  } else {
    FUZZ_CHECK(t.latent.size() == 0 && t.query_latent.size() == 0, "latent outside mla");
  }
  for (const Matrix* m : {&t.Q, &t.K, &t.V, &t.latent, &t.query_latent}) check_finite(*m, "Q/K/V/latent");

  FUZZ_CHECK(t.kv_heads.size() == static_cast<std::size_t>(G),
             "kv_heads has " + std::to_string(t.kv_heads.size()) + " entries, expected " + std::to_string(G));
  for (Eigen::Index g = 0; g < G; ++g) {
    FUZZ_CHECK(t.kv_heads[g].k == t.K.middleCols(g * d, d) && t.kv_heads[g].v == t.V.middleCols(g * d, d),
               "kv head " + std::to_string(g) + " is not its columns of K and V");
  }

  FUZZ_CHECK(t.heads.size() == static_cast<std::size_t>(H), "trace has " + std::to_string(t.heads.size()) + " heads");
  for (int h = 0; h < H; ++h) check_head(s, t, h);

  check_shape(t.concat, nq, hd, "concat");
  for (int h = 0; h < H; ++h)
    FUZZ_CHECK(t.concat.middleCols(h * d, d) == t.heads[h].output,
               "concat block " + std::to_string(h) + " is not head's output");
  if (t.weights.W_O) {
    check_shape(t.output, nq, dm, "output");
    Matrix expected = t.concat * t.W_O(), bound = t.concat.cwiseAbs() * t.W_O().cwiseAbs();
    if (t.weights.b_O) {  // output_bias: b_O after W_O
      expected.rowwise() += t.weights.b_O->row(0);
      bound.rowwise() += t.weights.b_O->row(0).cwiseAbs();
    }
    check_close(t.output, expected, bound, 1e-12, "output");
  } else {
    FUZZ_CHECK(t.output == t.concat, "output without W_O is not the concatenation");
  }
  check_finite(t.output, "output");
  check_absorbed(s, t);
}

void check_decode(const Scenario& s, const Trace& t, const DecodeTrace& dt) {
  const AttentionConfig& a = s.attention;
  const int n = s.n_q(), H = a.heads;
  FUZZ_CHECK(dt.elements_per_token == (a.variant == Variant::Mla ? a.latent_dim + (decoupled_rope(a) ? a.rope_dim : 0)
                                                                 : 2 * kv_head_count(a) * a.head_dim) +
                                          (a.sparse ? a.sparse->indexer_dim : 0),
             "decode elements per token");
  FUZZ_CHECK(dt.steps.size() == static_cast<std::size_t>(n),
             "decode has " + std::to_string(dt.steps.size()) + " steps");
  for (int step = 0; step < n; ++step) {
    const DecodeStep& st = dt.steps[static_cast<std::size_t>(step)];
    const std::string where = "decode step " + std::to_string(step);
    FUZZ_CHECK(st.t == step && st.cache_tokens == step + 1 && st.token == s.input.tokens[step], where + ": numbering");
    FUZZ_CHECK(st.cache_elements == dt.elements_per_token * (step + 1), where + ": cache elements");
    check_shape(st.output, 1, t.output.cols(), "decode output", step);
    check_finite(st.output, "decode output", step);
    FUZZ_CHECK(st.weights.size() == static_cast<std::size_t>(H) && st.status.size() == static_cast<std::size_t>(H),
               where + ": not one weight row and status per head");
    if (a.sparse) {
      check_shape(st.selected, 1, step + 1, "decode selected", step);
      Eigen::Index shown = 0;
      for (int j = 0; j <= step; ++j) shown += may_attend(a, step, j) ? 1 : 0;
      FUZZ_CHECK(st.selected.sum() == static_cast<double>(std::min<Eigen::Index>(a.sparse->top_k, shown)),
                 where + ": selects " + num(st.selected.sum()) + " keys of " + std::to_string(shown));
    }
    for (int h = 0; h < H; ++h) {
      const Matrix& w = st.weights[static_cast<std::size_t>(h)];
      check_shape(w, 1, step + 1, "decode weights", step);
      Eigen::Index visible = 0;
      for (int j = 0; j <= step; ++j) {
        // Decoding is causal; sparse attention narrows it to the new token's selection, which the trace's
        // causal row must match.
        const bool selected = !a.sparse || st.selected(0, j) == 1.0;
        if (may_attend(a, step, j) && selected) ++visible;
        else
          FUZZ_CHECK(w(0, j) == 0.0,
                     where + " head " + std::to_string(h) + ": hidden key " + std::to_string(j) + " has weight");
      }
      check_weight_row(w, st.status[static_cast<std::size_t>(h)], visible, a.kernel,
                       where + " head " + std::to_string(h));
    }
  }
  if (a.variant == Variant::Mla) {
    check_shape(dt.cache.latent, n, a.latent_dim, "decode cache latent");
  } else {
    FUZZ_CHECK(
        dt.cache.k.size() == static_cast<std::size_t>(kv_head_count(a)) && dt.cache.v.size() == dt.cache.k.size(),
        "decode cache has not one k and v per kv head");
    for (std::size_t g = 0; g < dt.cache.k.size(); ++g) {
      check_shape(dt.cache.k[g], n, a.head_dim, "decode cache k");
      check_shape(dt.cache.v[g], n, a.head_dim, "decode cache v");
    }
  }
}

bool same_number(double x, double y) {
  if (x == y) return true;
  if (std::isnan(x) && std::isnan(y)) return true;
  return std::abs(x - y) <= 1e-12 * std::max({1.0, std::abs(x), std::abs(y)});
}

void check_same(const Matrix& x, const Matrix& y, const char* what, int head = -1) {
  check_shape(y, x.rows(), x.cols(), what, head);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      FUZZ_CHECK(same_number(x(i, j), y(i, j)), cell(what, head, i, j) +
                                                    " changed on the round trip through the writer: " + num(x(i, j)) +
                                                    " became " + num(y(i, j)));
}

// What the writer wrote loads back to the same scenario, and the same scenario computes the same trace.
void check_round_trip(const Scenario& s, const Trace& t) {
  const std::string text = scenario_to_text(s);
  Scenario r;
  try {
    r = parse_scenario(text);
  } catch (const InputError& e) {
    fail(std::string("the writer's text does not load back: ") + e.what() + "\n--- text ---\n" + text);
  }
  const AttentionConfig &a = s.attention, &b = r.attention;
  FUZZ_CHECK(r.name == s.name && r.description == s.description && r.seed == s.seed && r.weight_scale == s.weight_scale,
             "round trip: name/description/seed/weight_scale");
  FUZZ_CHECK(r.input.tokens == s.input.tokens, "round trip: tokens");
  check_same(s.input.embeddings, r.input.embeddings, "round-trip embeddings");
  FUZZ_CHECK(r.context.has_value() == s.context.has_value(), "round trip: context");
  if (s.context) {
    FUZZ_CHECK(r.context->tokens == s.context->tokens, "round trip: context tokens");
    check_same(s.context->embeddings, r.context->embeddings, "round-trip context embeddings");
  }
  FUZZ_CHECK(a.variant == b.variant && a.heads == b.heads && a.head_dim == b.head_dim && a.kv_heads == b.kv_heads &&
                 a.latent_dim == b.latent_dim && a.query_latent_dim == b.query_latent_dim && a.mask == b.mask &&
                 a.window == b.window && a.scale == b.scale && a.kernel == b.kernel &&
                 a.output_projection == b.output_projection && a.qkv_bias == b.qkv_bias &&
                 a.output_bias == b.output_bias && a.rope_pairing == b.rope_pairing && a.rope_scaling == b.rope_scaling,
             "round trip: the attention block changed");
  check_same(a.custom_mask, b.custom_mask, "round-trip custom_mask");
  for (WeightId id : kAllWeights) {
    const auto &x = weight_slot(s.weights, id), &y = weight_slot(r.weights, id);
    FUZZ_CHECK(x.has_value() == y.has_value(),
               std::string("round trip: weight ") + weight_name(id) + " appeared or vanished");
    if (x) check_same(*x, *y, weight_name(id));
  }
  Trace u;
  try {
    u = compute_trace(r);
  } catch (const InputError& e) {
    fail(std::string("the reloaded scenario does not compute: ") + e.what());
  }
  check_same(t.output, u.output, "round-trip output");
  FUZZ_CHECK(u.heads.size() == t.heads.size(), "round trip: number of heads");
  for (std::size_t h = 0; h < t.heads.size(); ++h) {
    check_same(t.heads[h].weights(), u.heads[h].weights(), "round-trip weights", static_cast<int>(h));
    FUZZ_CHECK(t.heads[h].row_status == u.heads[h].row_status, "round trip: row status of head " + std::to_string(h));
  }
}

// Roughly how many doubles the trace of s holds: every weight (seeded ones too), the per-cell matrices of
// every head, the projections, and for mla the absorbed form. core/scenario.h bounds each size on its own
// but not their products, so a file of 150 bytes may ask for gigabytes and minutes (heads 8, head_dim 1024,
// mla with query_latent_dim 8192: W_UQ and W_UQK of 8192 x 8192 each). Until the limits bound the total,
// the fuzzer leaves such scenarios out, or every run would stop at the first out-of-memory. Set
// ATTN_FUZZ_NO_BUDGET=1 to fuzz without this (and see the out-of-memory reports come back).
std::int64_t trace_elements(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  const std::int64_t H = a.heads, hd = H * a.head_dim, dm = s.d_model(), nq = s.n_q(), nkv = s.n_kv();
  std::int64_t total = 0;
  for (WeightId id : kAllWeights)
    if (weight_used(id, a)) {
      const WeightShape shape = weight_shape(id, a, s.d_model());
      total += std::int64_t(shape.rows) * shape.cols;
    }
  total += 6 * H * nq * nkv;         // scores, scaled, mask, masked, weights (+ mla's absorbed scores)
  total += 2 * (nq + 2 * nkv) * hd;  // Q, K, V and each head's copies
  total += 3 * nq * (hd + dm);       // outputs, concat, contributions
  if (a.variant == Variant::Mla) {
    const std::int64_t hc = H * a.latent_dim, dq = a.query_latent_dim > 0 ? a.query_latent_dim : dm;
    total += dq * hc + hc * hd + hc * (a.output_projection ? dm : hd) + nq * hc;  // W_UQK, blockdiag(W_UV), W_LO
  }
  return total;
}

// 4M doubles (32 MiB): far above any classroom scenario, small enough for thousands of runs a second.
constexpr std::int64_t kFuzzMaxTraceElements = std::int64_t(1) << 22;

// A model file that loads runs on up to 8 of its tokens: every layer's attention keeps the trace's invariants, the
// stream and the logits stay finite, and each position's probabilities sum to 1.
int fuzz_model(const nlohmann::json& j) {
  const Model given = model_from_json(j);  // InputError: a refusal, fine
  static const bool budget = std::getenv("ATTN_FUZZ_NO_BUDGET") == nullptr;
  if (budget && parameter_count(given) > kFuzzMaxTraceElements) return 0;
  const Model m = resolve_model(given);
  std::vector<std::string> tokens;
  for (int i = 0; i < std::min(m.max_positions, 8); ++i)
    tokens.push_back(m.vocab[static_cast<std::size_t>(i) % m.vocab.size()]);
  ModelTrace t;
  try {
    t = run_model(m, tokens);
  } catch (const InputError& e) {
    // Only a stream grown past what attention accepts may be refused once the file loaded.
    if (std::string_view(e.what()).find("the residual stream reaches") != std::string_view::npos) return 0;
    fail(std::string("a model the loader accepted is refused by run_model: ") + e.what());
  }
  const auto n = static_cast<Eigen::Index>(tokens.size());
  for (std::size_t l = 0; l < t.layers.size(); ++l) {
    check_trace(layer_scenario(m, static_cast<int>(l), tokens, t.layers[l].attention.x), t.layers[l].attention);
    check_shape(t.layers[l].residual_out, n, m.d_model, "a layer's residual_out");
    check_finite(t.layers[l].residual_out, "a layer's residual_out");
  }
  check_shape(t.logits, n, static_cast<Eigen::Index>(m.vocab.size()), "logits");
  check_finite(t.logits, "logits");
  check_finite(t.probabilities, "probabilities");
  for (Eigen::Index i = 0; i < n; ++i)
    FUZZ_CHECK(std::abs(t.probabilities.row(i).sum() - 1.0) < 1e-9,
               cell("probabilities sum", -1, i) + " = " + num(t.probabilities.row(i).sum()));
  return 0;
}

}  // namespace

int fuzz_one_scenario(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Scenario s;
  try {
    const nlohmann::json j = parse_json_document(text);
    if (is_model_json(j)) return fuzz_model(j);
    s = scenario_from_json(j);
  } catch (const InputError&) {
    return 0;  // a refusal with a message is what a bad file should get
  }
  static const bool budget = std::getenv("ATTN_FUZZ_NO_BUDGET") == nullptr;
  if (budget && trace_elements(s) > kFuzzMaxTraceElements) return 0;

  Trace t;
  try {
    t = compute_trace(s);
  } catch (const InputError& e) {
    fail(std::string("a scenario the loader accepted is refused by compute_trace: ") + e.what());
  }
  check_trace(s, t);
  // The JSON trace must serialise (dump throws on anything it cannot write, e.g. invalid UTF-8).
  const std::string json = trace_to_json(t).dump();
  FUZZ_CHECK(!json.empty() && json.front() == '{', "trace JSON is not an object");

  if (!s.context) {
    DecodeTrace dt;
    try {
      dt = decode(s);
    } catch (const InputError& e) {
      fail(std::string("decode refused a self-attention scenario: ") + e.what());
    }
    check_decode(s, t, dt);
    const std::string decode_json = decode_to_json(dt).dump();
    FUZZ_CHECK(!decode_json.empty() && decode_json.front() == '{', "decode JSON is not an object");
  }

  check_round_trip(s, t);
  return 0;
}

}  // namespace attn::fuzz
