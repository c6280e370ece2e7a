// The words the app shows: hover explanations of single cells and the paragraph of each step. The strings are
// pinned byte for byte, with the arithmetic behind every number in a comment (numbers from
// tests/data/the_cat_sat_reference.md).
#include "helpers.h"

#include <cmath>
#include <limits>

#include "ui/logic/cell_format.h"
#include "ui/logic/geometry.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/step_text.h"

using namespace attn;
using namespace attn::test;
using namespace attn::ui;

namespace {

Trace cat_sat_trace() { return compute_trace(cat_sat()); }

Trace cat_sat_with(MaskKind mask) {
  Scenario s = cat_sat();
  s.attention.mask = mask;
  return compute_trace(s);
}

// Two heads of width 2 over d_model 3, causal, with W_O: non-square everywhere. W_Q = 0 makes every score 0, so
// the weights are 1 for "a" (it sees only itself) and 1/2, 1/2 for "b": every number below is exact.
Scenario explained_two_heads() {
  Scenario s;
  s.name = "two heads";
  s.input = {{"a", "b"}, mat({{1, 0, 2}, {3, 1, 0}})};
  s.attention.heads = 2;
  s.attention.head_dim = 2;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  s.weights.W_Q = Matrix::Zero(3, 4);
  s.weights.W_K = mat({{1, 0, 0, 1}, {0, 1, 0, 0}, {0, 0, 1, -1}});
  s.weights.W_V = mat({{1, 0, 0, 1}, {0, 1, 0, 0}, {0, 0, 1, -1}});
  s.weights.W_O = mat({{1, 0, -1}, {0, 2, 0}, {1, 1, 0}, {0, -1, 3}});
  return s;
}

// One head of width 12, identity weights, causal: long sums that must be elided.
Scenario wide_head() {
  Scenario s;
  s.name = "wide";
  Matrix x(2, 12);
  for (int c = 0; c < 12; ++c) {
    x(0, c) = c + 1;  // x = [1, 2, ..., 12]
    x(1, c) = 1;      // y = [1, 1, ..., 1]
  }
  s.input = {{"x", "y"}, x};
  s.attention.head_dim = 12;
  s.attention.mask = MaskKind::Causal;
  s.attention.output_projection = true;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = s.weights.W_O = Matrix::Identity(12, 12);
  return s;
}

// d_model 2, tokens a = [1, 2], b = [3, -1]; four query heads of width 2.
Scenario small(Variant v, int kv_heads) {
  Scenario s;
  s.name = "small";
  s.input = {{"a", "b"}, mat({{1, 2}, {3, -1}})};
  s.attention.variant = v;
  s.attention.heads = 4;
  s.attention.kv_heads = kv_heads;
  s.attention.head_dim = 2;
  s.seed = 5;
  return s;
}

// Linear kernel, scale off, d = 1, causal, q = k = v = x with x = 1, -1, 2: row "a" sees [1] (fine), row "b" sees
// -1·1, -1·-1 = [-1, 1] which sums to 0, row "c" sees 2·1, 2·(-1), 2·2 = [2, -2, 4] with Z = 4 and a negative weight.
Scenario linear_rows() {
  Scenario s;
  s.name = "linear";
  s.input = {{"a", "b", "c"}, mat({{1}, {-1}, {2}})};
  s.attention.kernel = Kernel::Linear;
  s.attention.scale = false;
  s.attention.mask = MaskKind::Causal;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = mat({{1}});
  return s;
}

}  // namespace

TEST_CASE("short_number: integers bare, three decimals trimmed, scientific for the extremes") {
  CHECK(short_number(8) == "8");
  CHECK(short_number(-2) == "-2");
  CHECK(short_number(0) == "0");
  CHECK(short_number(-0.0) == "0");
  CHECK(short_number(8 / std::sqrt(3.0)) == "4.619");
  CHECK(short_number(0.742692) == "0.743");
  CHECK(short_number(0.5) == "0.5");
  CHECK(short_number(-1.25) == "-1.25");
  CHECK(short_number(0.9996) == "1");
  CHECK(short_number(2.0000000001) == "2");
  CHECK(short_number(1234567890.5) == "1.23e+09");
  CHECK(short_number(4.56e-5) == "4.56e-05");
  CHECK(short_number(-0.0005) == "-5.00e-04");
  CHECK(short_number(1230000000) == "1230000000");  // integer-valued below 1e15: printed whole
  CHECK(short_number(1e16) == "1.00e+16");
  CHECK(short_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(short_number(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(short_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("join_sum: up to 8 terms in full, more keep the first 3 and the last 2") {
  CHECK(join_sum({}) == "0");
  CHECK(join_sum({"1"}) == "1");
  CHECK(join_sum({"1", "2", "3", "4", "5", "6", "7", "8"}) == "1 + 2 + 3 + 4 + 5 + 6 + 7 + 8");
  CHECK(join_sum({"1", "2", "3", "4", "5", "6", "7", "8", "9"}) == "1 + 2 + 3 + \u2026 + 8 + 9");
}

TEST_CASE("the cat sat: the three required hover strings") {
  const Trace t = cat_sat_trace();
  // q_the = [1, 0, 2], k_cat = [4, 2, 2]: 4 + 0 + 4 = 8.
  CHECK(explain_cell(t, Step::Scores, 0, 0, 1) ==
        "score(the\u2192cat) = q_the \u00B7 k_cat = 1\u00B74 + 0\u00B72 + 2\u00B72 = 8");
  // 8 / 1.7320508 = 4.6188.
  CHECK(explain_cell(t, Step::Scale, 0, 0, 1) == "8 / sqrt(3) = 4.619");
  // Row "the" scaled: 2/√3 = 1.1547, 8/√3 = 4.6188, 6/√3 = 3.4641; weight 0.742692.
  CHECK(explain_cell(t, Step::Softmax, 0, 0, 1) == "softmax: e^4.619 / (e^1.155 + e^4.619 + e^3.464) = 0.743");
}

TEST_CASE("the cat sat: one exact hover string for every other step") {
  const Trace t = cat_sat_trace();
  // X row "the" = [1, 0, 1, 0].
  CHECK(explain_cell(t, Step::Inputs, 0, 0, 2) == "x_the[2] = 1 (an embedding entry: an input you can edit)");
  // Projections: column 2 of W_Q is [1, 0, 1, 1]; x_the · it = 1 + 0 + 1 + 0 = 2 (Q[0][2] = 2).
  const std::string q = "q_the[2] = x_the \u00B7 W_Q[:, 2] = 1\u00B71 + 0\u00B70 + 1\u00B71 + 0\u00B71 = 2";
  CHECK(explain_projection(t, 'q', 0, 0, 2) == q);
  CHECK(explain_cell(t, Step::Projections, 0, 0, 2) == q);  // the Projections cell of explain_cell is Q's
  // Column 0 of W_K is [0, 1, 0, 1]; x_cat = [0, 2, 0, 2]: 0 + 2 + 0 + 2 = 4 (K[1][0] = 4).
  CHECK(explain_projection(t, 'k', 0, 1, 0) ==
        "k_cat[0] = x_cat \u00B7 W_K[:, 0] = 0\u00B70 + 2\u00B71 + 0\u00B70 + 2\u00B71 = 4");
  // Column 2 of W_V is [0, 0, 3, 0]; x_sat = [1, 1, 1, 1]: 3 (V[2][2] = 3).
  CHECK(explain_projection(t, 'v', 0, 2, 2) ==
        "v_sat[2] = x_sat \u00B7 W_V[:, 2] = 1\u00B70 + 1\u00B70 + 1\u00B73 + 1\u00B70 = 3");
  // No mask: scaled[0][1] = 4.6188 goes through unchanged.
  CHECK(explain_cell(t, Step::Mask, 0, 0, 1) == "the \u2192 cat: visible (mask 1), 4.619 passes through");
  // Weights of "the" 0.023247, 0.742692, 0.234061 times column 1 of V [2, 8, 6]: output 7.392396.
  const std::string out =
      "out_the[1] = \u03A3_j w(the\u2192j)\u00B7v_j[1] = 0.023\u00B72 + 0.743\u00B78 + 0.234\u00B76 = 7.392";
  CHECK(explain_cell(t, Step::WeightedSum, 0, 0, 1) == out);
  CHECK(explain_cell(t, Step::HeadOutputs, 0, 0, 1) == out);  // one head: no "head 0: " prefix
  // No W_O: the output is the concatenation, column 1 is head 0's column 1, 7.392396.
  CHECK(explain_cell(t, Step::Concat, 0, 0, 1) == "no W_O: output_the[1] = head 0's output, column 1 = 7.392");
  CHECK(explain_cell(t, Step::Output, 0, 0, 1) == "no W_O: output_the[1] = head 0's output, column 1 = 7.392");
  // Z = e^(1.1547-4.6188) + e^0 + e^(3.4641-4.6188) = 0.0313 + 1 + 0.3151 = 1.3464;
  // entropy = -(0.023247 ln 0.023247 + 0.742692 ln 0.742692 + 0.234061 ln 0.234061) = 0.6483; ln 3 = 1.0986.
  CHECK(explain_row_summary(t, 0, 0) ==
        "Z = 1.346 (after subtracting the largest score 4.619), entropy 0.648 nats of a maximum ln(3) = 1.099");
}

TEST_CASE(
    "the row summary quotes the largest score as its cell shows it (four significant digits), Z at three decimals") {
  Scenario s = cat_sat();
  s.input.embeddings *= 1.01;  // scores 1.0201 x [[2, 8, 6], [6, 16, 14], [5, 16, 13]], not scaled
  s.attention.scale = false;
  // Row "cat": 6.1206, 16.3216, 14.2814; the cells show 16.32 (two decimals beside the tens), not 16.322.
  // Z = e^-10.201 + 1 + e^-2.0402 = 1.1300; entropy 0.3573 nats (NumPy).
  CHECK(explain_row_summary(compute_trace(s), 0, 1) ==
        "Z = 1.130 (after subtracting the largest score 16.32), entropy 0.357 nats of a maximum ln(3) = 1.099");
}

TEST_CASE("the cat sat, causal: hidden cells say why and weigh exactly 0") {
  const Trace t = cat_sat_with(MaskKind::Causal);
  CHECK(explain_cell(t, Step::Mask, 0, 0, 2) ==
        "the \u2192 sat: hidden (mask 0, causal: sat comes after the), so -inf");
  CHECK(explain_cell(t, Step::Softmax, 0, 0, 2) == "softmax: the \u2192 sat is hidden, so its weight is exactly 0");
  // Row "cat" sees 6/√3 = 3.4641 and 16/√3 = 9.2376: e^9.2376 / (e^3.4641 + e^9.2376) = 0.996901.
  CHECK(explain_cell(t, Step::Softmax, 0, 1, 1) == "softmax: e^9.238 / (e^3.464 + e^9.238) = 0.997");
  // 0.003099·2 + 0.996901·8 = 7.981405; "sat" is hidden from "cat".
  CHECK(explain_cell(t, Step::WeightedSum, 0, 1, 1) ==
        "out_cat[1] = \u03A3_j w(cat\u2192j)\u00B7v_j[1] = 0.003\u00B72 + 0.997\u00B78 = 7.981 (1 hidden key skipped: "
        "weight 0)");
  // "the" sees only itself: Z = e^0 = 1, entropy 0, maximum ln 1 = 0.
  CHECK(explain_row_summary(t, 0, 0) ==
        "Z = 1 (after subtracting the largest score 1.155), entropy 0 nats of a maximum ln(1) = 0");
}

TEST_CASE("sliding window and custom masks give their own reasons") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::SlidingWindow;
  s.attention.window = 2;
  const Trace w = compute_trace(s);
  CHECK(explain_cell(w, Step::Mask, 0, 2, 0) ==
        "sat \u2192 the: hidden (mask 0, sliding window: the is outside the last 2 tokens up to sat), so -inf");
  CHECK(explain_cell(w, Step::Mask, 0, 0, 1) ==
        "the \u2192 cat: hidden (mask 0, sliding window: cat comes after the), so -inf");

  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{0, 0, 0}, {1, 1, 0}, {1, 0, 1}});
  const Trace c = compute_trace(s);
  CHECK(explain_cell(c, Step::Mask, 0, 0, 1) ==
        "the \u2192 cat: hidden (mask 0, custom: set to 0 in the custom mask), so -inf");
  CHECK(explain_cell(c, Step::Softmax, 0, 0, 1) ==
        "softmax: every key is hidden from the, so all its weights are 0 and its output is 0");
  CHECK(explain_cell(c, Step::WeightedSum, 0, 0, 1) ==
        "out_the[1] = 0: every key is hidden from the, so its weights and output are 0");
  CHECK(explain_row_summary(c, 0, 0) ==
        "every key is hidden from the: nothing to normalise, so its weights and output are 0");
  const StepText m = explain_step(c, Step::Mask, 0);
  // Hidden: 3 in row "the", 1 in "cat", 1 in "sat".
  CHECK(
      contains(m.what, "Custom mask: the cells you set to 0 are hidden. 5 of the 9 cells are hidden and become -inf."));
  CHECK(contains(m.what, "1 query has no visible key at all"));
}

TEST_CASE("scale off: the score stays as it is") {
  Scenario s = cat_sat();
  s.attention.scale = false;
  const Trace t = compute_trace(s);
  CHECK(explain_cell(t, Step::Scale, 0, 0, 1) == "scale is off: 8 stays 8");
  // Without scaling the row "the" is 2, 8, 6: e^8 / (e^2 + e^8 + e^6) = 0.8789.
  CHECK(explain_cell(t, Step::Softmax, 0, 0, 1) == "softmax: e^8 / (e^2 + e^8 + e^6) = 0.879");
  const StepText st = explain_step(t, Step::Scale, 0);
  CHECK(st.formula == "scaled = scores   [3\u00D73]   (scale off)");
  CHECK(contains(st.what, "the largest stays 16"));
}

TEST_CASE("linear kernel: division by the row sum, and the rows it cannot normalise") {
  Scenario s = cat_sat();
  s.attention.kernel = Kernel::Linear;
  const Trace t = compute_trace(s);
  // Row "the": (2, 8, 6)/√3, Z = 16/√3 = 9.2376; 8/16 = 0.5.
  CHECK(explain_cell(t, Step::Softmax, 0, 0, 1) == "linear: 4.619 / (1.155 + 4.619 + 3.464) = 0.500");
  // Weights 2/16, 8/16, 6/16: entropy -(0.125 ln 0.125 + 0.5 ln 0.5 + 0.375 ln 0.375) = 0.9743.
  CHECK(
      explain_row_summary(t, 0, 0) ==
      "Z = 9.238, the sum of the visible scores (each weight is a score divided by Z), entropy 0.974 nats of a maximum "
      "ln(3) = 1.099");
  CHECK(explain_step(t, Step::Softmax, 0).formula == "weights = masked / Z, Z = row sum of masked   [3\u00D73]");

  const Trace r = compute_trace(linear_rows());
  CHECK(explain_cell(r, Step::Scores, 0, 2, 1) == "score(c\u2192b) = q_c \u00B7 k_b = 2\u00B7(-1) = -2");
  CHECK(explain_cell(r, Step::Mask, 0, 0, 1) == "a \u2192 b: hidden (mask 0, causal: b comes after a), so 0");
  CHECK(explain_cell(r, Step::Softmax, 0, 1, 0) ==
        "linear: Z = (-1) + 1 = 0 for b: nothing to divide by, so the row is zeroed (weights 0, output 0)");
  CHECK(explain_cell(r, Step::WeightedSum, 0, 1, 0) == "out_b[0] = 0: Z is 0 for b, so its weights and output are 0");
  CHECK(explain_row_summary(r, 0, 1) ==
        "Z = 0: the visible scores of b cancel out, so there is nothing to divide by; its weights and output are set "
        "to 0");
  // Row "c": [2, -2, 4] / 4 = [0.5, -0.5, 1].
  CHECK(
      explain_cell(r, Step::Softmax, 0, 2, 1) ==
      "linear: (-2) / (2 + (-2) + 4) = -0.5 (negative: this row mixes signs, so it is not a probability distribution)");
  CHECK(explain_cell(r, Step::Softmax, 0, 2, 2) ==
        "linear: 4 / (2 + (-2) + 4) = 1.0 (other weights in this row are negative: not a probability distribution)");
  CHECK(explain_row_summary(r, 0, 2) ==
        "Z = 4, the sum of the visible scores, but some weights are negative: not a probability distribution, so no "
        "entropy");
  const StepText soft = explain_step(r, Step::Softmax, 0);
  CHECK(contains(soft.what, "The scores of \"b\" add up to 0: its row is zeroed."));
  CHECK(contains(soft.what, "\"c\" gets negative weights: not a probability distribution."));
}

TEST_CASE("two heads with W_O: concat times W_O, and the output as a sum over heads") {
  const Trace t = compute_trace(explained_two_heads());
  // V = X W_V: a = [1, 0, 2, -1], b = [3, 1, 0, 3]. Weights: a -> [1, 0], b -> [1/2, 1/2].
  // Head 0 (columns 0-1): a = [1, 0], b = [2, 0.5]. Head 1 (columns 2-3): a = [2, -1], b = [1, 1].
  // concat_b = [2, 0.5, 1, 1]; column 2 of W_O = [-1, 0, 0, 3]: -2 + 0 + 0 + 3 = 1.
  CHECK(explain_cell(t, Step::Concat, 0, 1, 2) ==
        "output_b[2] = concat_b \u00B7 W_O[:, 2] = 2.0\u00B7(-1) + 0.5\u00B70 + 1.0\u00B70 + 1.0\u00B73 = 1");
  // Contributions to column 2 for "a": head 0 [1, 0]·[-1, 0] = -1, head 1 [2, -1]·[0, 3] = -3.
  CHECK(explain_cell(t, Step::Output, 0, 0, 2) == "output_a[2] = \u03A3_h contribution_h = (-1) + (-3) = -4");
  // Head 1 for "b": 0.5·v_a[0] + 0.5·v_b[0] = 0.5·2 + 0.5·0 = 1.
  CHECK(explain_cell(t, Step::HeadOutputs, 1, 1, 0) ==
        "head 1: out_b[0] = \u03A3_j w(b\u2192j)\u00B7v_j[0] = 0.5\u00B72 + 0.5\u00B70 = 1");

  const StepText concat = explain_step(t, Step::Concat, 0);
  CHECK(concat.formula == "output = concat \u00B7 W_O   [2\u00D73] = [2\u00D74] \u00B7 [4\u00D73]");
  CHECK(contains(concat.what, "concat of \"b\" is [2.0, 0.5, 1.0, 1.0]"));
  const StepText output = explain_step(t, Step::Output, 0);
  CHECK(output.formula ==
        "output = \u03A3_h output_h \u00B7 W_O^(h)   [2\u00D73] = 2 heads \u00D7 ([2\u00D72] \u00B7 [2\u00D73])");
  // b: head 0 [2, 0.5] W_O rows 0-1 = [2, 1, -2]; head 1 [1, 1] W_O rows 2-3 = [1, 0, 3]; sum [3, 1, 1].
  CHECK(contains(output.what, "head 0 adds [2, 1, -2], head 1 adds [1, 0, 3], giving [3, 1, 1]."));
  const StepText heads = explain_step(t, Step::HeadOutputs, 0);
  CHECK(heads.formula == "output_h = weights_h \u00B7 v_h for h = 0 \u2026 1   2 \u00D7 [2\u00D72]");
  CHECK(contains(heads.what, "head 0 looks most at \"a\" (0.500)"));
}

TEST_CASE("a head of width 12: long sums are elided") {
  const Trace t = compute_trace(wide_head());
  // q_x = [1..12], k_y = [1, ..., 1]: 1 + 2 + ... + 12 = 78.
  CHECK(explain_cell(t, Step::Scores, 0, 0, 1) ==
        "score(x\u2192y) = q_x \u00B7 k_y = 1\u00B71 + 2\u00B71 + 3\u00B71 + \u2026 + 11\u00B71 + 12\u00B71 = 78");
  CHECK(explain_projection(t, 'q', 0, 0, 11) ==
        "q_x[11] = x_x \u00B7 W_Q[:, 11] = 1\u00B70 + 2\u00B70 + 3\u00B70 + \u2026 + 11\u00B70 + 12\u00B71 = 12");
  // "x" sees only itself, so its output is v_x = [1..12]; W_O = I picks column 0: 1. Concat's other row needs two
  // decimals, so its cells, and this sum that quotes them, write 1.00.
  CHECK(explain_cell(t, Step::Concat, 0, 0, 0) ==
        "output_x[0] = concat_x \u00B7 W_O[:, 0] = 1.00\u00B71 + 2.00\u00B70 + 3.00\u00B70 + 4.00\u00B70 + 5.00\u00B70 "
        "+ 6.00\u00B70 + \u2026 (6 more) = 1.00");
}

TEST_CASE("GQA and MQA: keys come from the shared KV head's columns") {
  Scenario g = small(Variant::Gqa, 2);
  g.weights.W_K = mat({{1, 0, 2, -1}, {0, 1, 1, 3}});
  const Trace t = compute_trace(g);
  // Query head 2 reads KV head 1 = columns 2-3 of W_K; column 3 = [-1, 3]; x_b = [3, -1]: -3 - 3 = -6.
  const std::string k =
      "k_b[1] = x_b \u00B7 W_K[:, 3] = 3\u00B7(-1) + (-1)\u00B73 = -6 (KV head 1, shared by query heads 2 and 3)";
  CHECK(explain_projection(t, 'k', 2, 1, 1) == k);
  CHECK(explain_projection(t, 'k', 3, 1, 1) == k);
  CHECK(explain_step(t, Step::Scores, 2).formula ==
        "scores = q k\u1D40,  k = K[:, KV head 1]   [2\u00D72] = [2\u00D72] \u00B7 [2\u00D72]\u1D40");
  CHECK(contains(explain_step(t, Step::Projections, 2).why,
                 "2\u00B7G\u00B7d = 8 numbers per token instead of 2\u00B7H\u00B7d = 16"));

  Scenario m = small(Variant::Mqa, 1);
  m.weights.W_K = mat({{1, 0}, {0, 1}});
  const Trace q = compute_trace(m);
  CHECK(explain_projection(q, 'k', 3, 1, 0) ==
        "k_b[0] = x_b \u00B7 W_K[:, 0] = 3\u00B71 + (-1)\u00B70 = 3 (the one KV head, shared by all 4 query heads)");
}

TEST_CASE("MLA: keys and queries come through the latents") {
  Scenario s = small(Variant::Mla, 4);
  s.attention.heads = 2;
  s.attention.latent_dim = 2;
  s.weights.W_DKV = mat({{1, 1}, {0, 2}});  // latent_a = [1, 1 + 4] = [1, 5]
  s.weights.W_UK = mat({{1, 0, 2, 0}, {0, 1, -1, 1}});
  const Trace t = compute_trace(s);
  // Head 1 owns columns 2-3 of W_UK; column 2 = [2, -1]: 1·2 + 5·(-1) = -3.
  CHECK(explain_projection(t, 'k', 1, 0, 0) == "k_a[0] = latent_a \u00B7 W_UK[:, 2] = 1\u00B72 + 5\u00B7(-1) = -3");
  CHECK(explain_step(t, Step::Scores, 1).formula ==
        "scores = q k\u1D40,  k = latent W_UK[:, head 1]   [2\u00D72] = [2\u00D72] \u00B7 [2\u00D72]\u1D40");
  CHECK(contains(
      explain_step(t, Step::Projections, 0).formula,
      "latent = X W_DKV   [2\u00D72] = [2\u00D72] \u00B7 [2\u00D72];   K = latent W_UK, V = latent W_UV   [2\u00D74]"));

  s.attention.query_latent_dim = 1;
  s.weights.W_DQ = mat({{1}, {1}});  // query_latent_a = 1 + 2 = 3
  s.weights.W_UQ = mat({{1, 2, 3, 4}});
  const Trace c = compute_trace(s);
  CHECK(explain_projection(c, 'q', 1, 0, 1) == "q_a[1] = query_latent_a \u00B7 W_UQ[:, 3] = 3\u00B74 = 12");
  CHECK(contains(explain_step(c, Step::Projections, 0).formula,
                 "Q = (X W_DQ) W_UQ   [2\u00D74] = [2\u00D72] \u00B7 [2\u00D71] \u00B7 [1\u00D74]"));
}

TEST_CASE("out-of-range indices give an empty string") {
  const Trace t = cat_sat_trace();
  for (const Step step : pipeline_steps(t.attention)) {
    const StepInfo& info = step_info(step);
    CAPTURE(info.name);
    CHECK(explain_cell(t, info.step, 0, 3, 0) == "");
    CHECK(explain_cell(t, info.step, 0, 0, 4) == "");
    CHECK(explain_cell(t, info.step, 0, -1, 0) == "");
    CHECK(explain_cell(t, info.step, 0, 0, -1) == "");
  }
  for (Step s :
       {Step::Projections, Step::Scores, Step::Scale, Step::Mask, Step::Softmax, Step::WeightedSum, Step::HeadOutputs})
    CHECK(explain_cell(t, s, 1, 0, 0) == "");
  CHECK(explain_projection(t, 'x', 0, 0, 0) == "");
  CHECK(explain_projection(t, 'k', 0, 0, 3) == "");
  CHECK(explain_projection(t, 'v', -1, 0, 0) == "");
  CHECK(explain_row_summary(t, 0, 3) == "");
  CHECK(explain_row_summary(t, 1, 0) == "");
}

TEST_CASE("explain_step, the cat sat: every formula carries the shapes, every paragraph a live number") {
  const Trace t = cat_sat_trace();
  for (const Step step : pipeline_steps(t.attention)) {
    const StepInfo& info = step_info(step);
    CAPTURE(info.name);
    const StepText s = explain_step(t, info.step, 0);
    CHECK(s.title == std::string(info.title));
    CHECK(contains(s.formula, "[3\u00D7"));
    CHECK_FALSE(s.what.empty());
    CHECK_FALSE(s.why.empty());
  }
  auto step = [&](Step s) { return explain_step(t, s, 0); };
  CHECK(step(Step::Inputs).formula == "X   [3\u00D74]: 3 tokens, d_model = 4");
  CHECK(contains(step(Step::Inputs).what, "\"the\" is [1, 0, 1, 0]"));
  CHECK(step(Step::Projections).formula ==
        "Q = X W_Q   [3\u00D73] = [3\u00D74] \u00B7 [4\u00D73];   K = X W_K, V = X W_V   [3\u00D73] = [3\u00D74] "
        "\u00B7 [4\u00D73]");
  CHECK(contains(step(Step::Projections).what, "Query of \"the\": [1, 0, 2]"));
  CHECK(step(Step::Scores).formula == "scores = q k\u1D40   [3\u00D73] = [3\u00D73] \u00B7 [3\u00D73]\u1D40");
  CHECK(contains(step(Step::Scores).what, "Row \"the\" reads 2, 8, 6, so \"the\" matches \"cat\" best."));
  CHECK(contains(step(Step::Scores).what, "The largest score is 16"));
  CHECK(step(Step::Scale).formula == "scaled = scores / \u221A3   [3\u00D73]");
  CHECK(contains(step(Step::Scale).what, "\u221A3 = 1.732: the largest, 16, becomes 9.238"));
  CHECK(contains(step(Step::Scale).why, "variance 3"));
  CHECK(contains(step(Step::Scale).why, "entropy of 0.648 nats"));
  CHECK(step(Step::Mask).formula == "masked = scaled where mask = 1, -inf where mask = 0   [3\u00D73]");
  CHECK(contains(step(Step::Mask).what, "all 3 keys"));
  CHECK(step(Step::Softmax).formula == "weights = softmax(masked), row by row   [3\u00D73]");
  CHECK(contains(step(Step::Softmax).what, "\"the\" gives 0.743 of its attention to \"cat\""));
  CHECK(contains(step(Step::Softmax).why, "4.619"));
  CHECK(step(Step::WeightedSum).formula == "output_0 = weights \u00B7 v   [3\u00D73] = [3\u00D73] \u00B7 [3\u00D73]");
  CHECK(contains(step(Step::WeightedSum).what,
                 "its output [1.977, 7.392, 0.772] is pulled towards the value of \"cat\", [2, 8, 0]"));
  CHECK(step(Step::HeadOutputs).formula == "output_0 = weights \u00B7 v   [3\u00D73]   (1 head)");
  CHECK(contains(step(Step::HeadOutputs).what, "[1.977, 7.392, 0.772]"));
  CHECK(step(Step::Concat).formula == "output = concat = [output_0]   [3\u00D73]   (no W_O)");
  CHECK(contains(step(Step::Concat).what, "\"the\" = [1.977, 7.392, 0.772]"));
  CHECK(step(Step::Output).formula == "output = concat   [3\u00D73]   (no W_O)");
  CHECK(contains(step(Step::Output).what, "comes out as [1.977, 7.392, 0.772]"));
}

TEST_CASE("explain_step: one token of one number reads in the singular, never \"1 numbers\"") {
  Scenario one;
  one.name = "one";
  one.input = {{"a"}, mat({{2}})};
  one.attention.head_dim = 1;
  one.attention.output_projection = true;
  one.weights.W_Q = one.weights.W_K = one.weights.W_V = one.weights.W_O = mat({{1}});
  const Trace t = compute_trace(one);
  auto step = [&](Step s) { return explain_step(t, s, 0); };
  CHECK(step(Step::Inputs).what ==
        "Each token is a single number, its embedding: \"a\" is [2]. These are the inputs: edit any number and every "
        "later step follows.");
  CHECK(contains(step(Step::Scores).why,
                 "one matrix product scores every pair at once (here there is only one). That table"));
  CHECK(step(Step::Scale)
            .why.starts_with("If q and k, a single number each, were random with variance 1, q \u00B7 k would have "
                             "variance 1, a spread"));
  CHECK(step(Step::Concat).what ==
        "With one head, concat is its output: concat of \"a\" is [2]. W_O then maps that single number to 1: output "
        "of \"a\" = [2].");
  for (const Step s : pipeline_steps(t.attention)) {
    const StepText text = explain_step(t, s, 0);
    CAPTURE(step_info(s).name);
    for (const std::string& words : {text.formula, text.what, text.why}) {
      CHECK_FALSE(contains(words, " 1 numbers"));
      CHECK_FALSE(contains(words, " 1 pairs"));
      CHECK_FALSE(contains(words, " 1 heads"));
    }
  }
  // Wider, the counts stay: "one row of 4 numbers", "all 9 pairs", "the 3 numbers of q and of k".
  const Trace cat = cat_sat_trace();
  CHECK(contains(explain_step(cat, Step::Inputs, 0).what, "Each token is one row of 4 numbers, its embedding"));
  CHECK(contains(explain_step(cat, Step::Scores, 0).why, "scores all 9 pairs at once."));
  CHECK(explain_step(cat, Step::Scale, 0).why.starts_with("If the 3 numbers of q and of k were random"));
}

TEST_CASE("explain_step adapts to the mask and to cross-attention") {
  const Trace causal = cat_sat_with(MaskKind::Causal);
  const StepText m = explain_step(causal, Step::Mask, 0);
  CHECK(
      contains(m.what, "Causal mask: each query sees itself and the tokens before it, so \"the\" sees only \"the\"."));
  CHECK(contains(m.what, "3 of the 9 cells are hidden and become -inf."));
  CHECK(contains(m.why, "S_i"));
  // The example row is "cat", the first with more than one visible key: 0.996901 on "cat".
  CHECK(contains(explain_step(causal, Step::Softmax, 0).what, "\"cat\" gives 0.997 of its attention to \"cat\""));

  const Trace cross = compute_trace(load_scenario_file(asset("cross_attention.json")));
  const StepText in = explain_step(cross, Step::Inputs, 0);
  CHECK(in.formula == "X   [2\u00D74] (queries),   X_kv   [3\u00D74] (keys and values)");
  CHECK(contains(in.what, "another sequence: the, cat, sat."));
  CHECK(explain_step(cross, Step::Scores, 0).formula ==
        "scores = q k\u1D40   [2\u00D73] = [2\u00D72] \u00B7 [3\u00D72]\u1D40");
  CHECK(explain_step(cross, Step::Concat, 1).formula ==
        "output = concat = [output_0 output_1]   [2\u00D74]   (no W_O)");
  // A head out of range reads as head 0 rather than failing.
  CHECK(explain_step(cross, Step::Scores, 7).formula == explain_step(cross, Step::Scores, 0).formula);
}

TEST_CASE("an explanation writes each number as the cells of its matrix do: 0.120, not 0.12") {
  const Trace t = compute_trace(load_scenario_file(asset("the_lazy_dog.json")));
  // Row "sleeps", column 0 of the output, as four per-head contributions (3 decimals each, as their cells).
  CHECK(explain_cell(t, Step::Output, 0, 3, 0) ==
        "output_sleeps[0] = \u03A3_h contribution_h = (-0.184) + (-0.818) + (-0.195) + 0.120 = -1.077");
}

TEST_CASE("an agreement check ticks only within rounding, and says so when it fails") {
  const Agreement same = agreement(0.0, "agrees with q k\u1D40");
  CHECK(same.ok);
  CHECK(same.text == "\u2714 agrees with q k\u1D40 (largest difference 0)");
  CHECK(agreement(4e-16, "x", ": why").text == "\u2714 x (largest difference 4.0e-16): why");
  const Agreement off = agreement(0.012, "The same numbers as computing all 3 tokens at once", ": why");
  CHECK_FALSE(off.ok);
  CHECK(off.text ==
        "\u2718 Not so: largest difference 0.012, more than rounding (10^-9). Expected: The same numbers as computing "
        "all 3 tokens at once");
}

namespace {

// Two tokens "a", "b" with q = k = (1, 2) and a third "c" with (0, 1), one head of width 2, no scale.
Scenario turning(Positions p) {
  Scenario s;
  s.name = "turning";
  s.input = {{"a", "b", "c"}, mat({{1, 2}, {1, 2}, {0, 1}})};
  s.attention.heads = 1;
  s.attention.head_dim = 2;
  s.attention.scale = false;
  s.attention.positions = p;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = mat({{1, 0}, {0, 1}});
  return s;
}

}  // namespace

TEST_CASE("the positions, rope and selection steps explain their cells with the live numbers") {
  // b = (1, 2) at position 1 turns by 1 rad: 1 cos 1 - 2 sin 1 = -1.143; a at 0 stays (1, 2).
  const Trace rope = compute_trace(turning(Positions::Rope));
  CHECK(explain_cell(rope, Step::Rope, 0, 1, 0) ==
        "RoPE(q)_b[0] = 1\u00B70.540 - 2\u00B70.841 = -1.143 (dims 0, 1 turned by 1 rad: cos = 0.540, sin = 0.841)");
  CHECK(explain_rope_angle(rope, false, 2, 0) ==
        "position 2, dims (0, 1): angle = 2 \u00B7 10000^(-0/2) = 2 rad (114.592\u00B0)");
  // 5 cos(1) = 2.702: only the distance between b and a counts.
  CHECK(explain_cell(rope, Step::Scores, 0, 1, 0) ==
        "score(b\u2192a) = RoPE(q)_b \u00B7 RoPE(k)_a = (-1.143)\u00B71.000 + 1.922\u00B72.000 = 2.702");
  CHECK(explain_step(rope, Step::Rope, 0).what ==
        "Each pair of numbers of q and k is a point turned by an angle that grows with its position: \"c\" at "
        "position 2 turns its first pair by 2 rad, from [0, 1] to [-0.909, -0.416]. Lengths do not change.");
  const Trace sin = compute_trace(turning(Positions::Sinusoidal));
  CHECK(explain_cell(sin, Step::Positions, 0, 1, 1) ==
        "b at position 1: x[1] + p[1] = 2 + 0.540 = 2.540, with p = cos(1 / 10000^(0/2)) = 0.540");
  // q^I_b = (1, -1), k^I_a = 1, w_b = (1, 2): I = 1 ReLU(1) + 2 ReLU(-1) = 1, tied with b and first by its index.
  Scenario sparse = turning(Positions::None);
  sparse.attention.sparse = SparseConfig{1, 2, 1};
  sparse.weights.W_QI = mat({{1, -1}, {0, 0}});
  sparse.weights.W_KI = mat({{1}, {0}});
  sparse.weights.W_wI = mat({{1, 2}, {0, 0}});
  const Trace sel = compute_trace(sparse);
  CHECK(explain_cell(sel, Step::Selection, 0, 1, 0) ==
        "I(b \u2192 a) = 1\u00B7ReLU(1) + 2\u00B7ReLU(-1) = 1: rank 1 of 3 visible keys, so selected (top 1)");
  CHECK(explain_cell(sel, Step::Selection, 0, 2, 1) ==
        "I(c \u2192 b) = 0\u00B7ReLU(0) + 0\u00B7ReLU(0) = 0: rank 2 of 3 visible keys, so left out (kept: the top 1)");
  CHECK(explain_step(sel, Step::Selection, 0).what ==
        "An indexer of 2 heads of width 1 scores every key a query may see; \"c\" sees 3 keys and keeps 1. Every head "
        "attends only to the kept keys: the others are hidden like masked ones.");
}

TEST_CASE("a shift of every position: the hovers and texts name the shifted positions") {
  Scenario s = turning(Positions::Rope);
  s.attention.position_offset = 5;
  const Trace rope = compute_trace(s);
  // c is row 2, now at position 7: 7 rad.
  CHECK(explain_rope_angle(rope, false, 2, 0) ==
        "position 7, dims (0, 1): angle = 7 \u00B7 10000^(-0/2) = 7 rad (401.07\u00B0)");
  CHECK(explain_step(rope, Step::Rope, 0).what ==
        "Each pair of numbers of q and k is a point turned by an angle that grows with its position: \"c\" at "
        "position 7 turns its first pair by 7 rad, from [0, 1] to [-0.657, 0.754]. Lengths do not change.");
  Scenario sin = turning(Positions::Sinusoidal);
  sin.attention.position_offset = 2;
  // b at position 3: x[1] + cos(3) = 2 - 0.98999 = 1.010.
  CHECK(explain_cell(compute_trace(sin), Step::Positions, 0, 1, 1) ==
        "b at position 3: x[1] + p[1] = 2 + (-0.990) = 1.010, with p = cos(3 / 10000^(0/2)) = -0.990");
}

TEST_CASE("the shift experiment's finding: a tick for rope within rounding, a reason for absolute positions") {
  AttentionConfig a;
  a.positions = Positions::Rope;
  a.position_offset = 5;
  const ShiftFinding same = explain_shift(a, 2.2e-16);
  CHECK(same.same);
  CHECK(same.text ==
        "\u2714 Shifted by 5, the scores stay the same (largest difference 2.2e-16): each score turns q "
        "by i and k by j, so only i - j enters it");
  CHECK_FALSE(explain_shift(a, 0.5).same);
  a.positions = Positions::Learned;
  const ShiftFinding changed = explain_shift(a, 3.854);
  CHECK_FALSE(changed.same);
  CHECK(changed.text ==
        "Shifted by 5, the scores change (largest change 3.854): learned positions add another row "
        "of P to each embedding, so q and k themselves change with where the tokens sit.");
}

TEST_CASE("the geometry of a score: |q| |k| cos phi on a pair, and rope's turn of each arrow") {
  const Trace rope = compute_trace(turning(Positions::Rope));
  const std::vector<PlanePair> pairs = plane_pairs(rope);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].label == "dims 0, 1");
  CHECK(pairs[0].rope_pair == 0);
  // c = (0, 1) at position 2 turns by 2 rad to (-sin 2, cos 2); a = (1, 2) at 0 stays.
  const PlaneGeometry g = plane_geometry(rope, 0, 0, 2, 0);
  CHECK(g.queries[2].x == doctest::Approx(-std::sin(2.0)).epsilon(1e-14));
  CHECK(g.queries[2].y == doctest::Approx(std::cos(2.0)).epsilon(1e-14));
  CHECK(g.queries[2].x_before == 0.0);
  CHECK(g.queries[2].y_before == 1.0);
  CHECK(g.queries[2].turn == 2.0);
  CHECK(g.keys[0].turn == 0.0);
  CHECK(g.q_length == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(g.k_length == doctest::Approx(std::sqrt(5.0)).epsilon(1e-14));
  CHECK(g.pair_score == doctest::Approx(-1.7415910999199664).epsilon(1e-14));
  CHECK(g.score == doctest::Approx(-1.7415910999199664).epsilon(1e-14));
  CHECK(g.angle * 180 / std::acos(-1.0) == doctest::Approx(141.15661020324265).epsilon(1e-12));
  CHECK(explain_geometry(rope, g) ==
        "q_c \u00B7 k_a on dims 0, 1 = |q| |k| cos \u03C6 = 1 \u00D7 2.236 \u00D7 cos 141.2\u00B0 = -1.742. These "
        "are all of the head's dimensions: the score is -1.742. RoPE turned q_c by 2 rad (position 2) and k_a by 0 "
        "rad (position 0): between them a turn of (2 \u2212 0)\u00B71 = 2 rad. Shift both positions by the same "
        "amount and both turn further alike: \u03C6 and the score stay.");

  // Without positions, width 3: pairs (0, 1) and the last two (1, 2); the other dims add the rest of the score.
  Scenario s;
  s.input = {{"x", "y"}, mat({{1, 0, 2}, {0, 3, 1}})};
  s.attention.heads = 1;
  s.attention.head_dim = 3;
  s.weights.W_Q = s.weights.W_K = s.weights.W_V = Matrix::Identity(3, 3);
  const Trace plain = compute_trace(s);
  const std::vector<PlanePair> p3 = plane_pairs(plain);
  REQUIRE(p3.size() == 2);
  CHECK(p3[1].label == "dims 1, 2");
  CHECK(p3[1].rope_pair == -1);
  // q_y . k_x on dims 1, 2: (3, 1) . (0, 2) = 2; dim 0 adds 0; the score is 2.
  const PlaneGeometry g3 = plane_geometry(plain, 0, 1, 1, 0);
  CHECK(g3.pair_score == 2.0);
  CHECK(explain_geometry(plain, g3) ==
        "q_y \u00B7 k_x on dims 1, 2 = |q| |k| cos \u03C6 = 3.162 \u00D7 2 \u00D7 cos 71.6\u00B0 = 2. The other "
        "dimensions add 0, so the score is 2.");
  // Out-of-range choices are clamped, never read past the trace.
  CHECK(plane_geometry(plain, 9, 9, 9, 9).row == 1);
}

TEST_CASE("a repeated token is named with its row in the geometry, so two vectors never read alike") {
  CHECK(distinct_names({"the", "dog", "the"}) == std::vector<std::string>{"the 0", "dog", "the 2"});
  Scenario s = turning(Positions::Rope);
  s.input.tokens = {"a", "a", "c"};
  const Trace t = compute_trace(s);
  CHECK(explain_geometry(t, plane_geometry(t, 0, 0, 1, 0)).starts_with("q_a 1 \u00B7 k_a 0 on dims 0, 1"));
}

TEST_CASE("one weight reads the same in its cell, its hover, a list, a bar and a tooltip") {
  const Trace t = cat_sat_trace();
  const Matrix& weights = t.heads[0].weights();  // the cat sat: w(the, cat) = 0.742692
  const double w = weights(0, 1);
  const std::string cell = format_fixed(w, matrix_decimals(weights));
  CHECK(cell == "0.743");
  CHECK(explain_cell(t, Step::Softmax, 0, 0, 1).ends_with("= " + cell));
  CHECK(probability_text(w) == cell);
  CHECK(format_value(w, NumberUnit::Probability) == cell);
  CHECK(format_exact(w, NumberUnit::Probability) == cell);
}
