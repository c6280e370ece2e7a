// The views' logic without a window: colour maps, value formats, heatmap layout and texels, the step
// list, the edits the inputs panel makes, and the application state's refusal of invalid edits.
#include <fstream>

#include "helpers.h"

#include "ui/logic/app_state.h"
#include "ui/widgets/cell_format.h"
#include "ui/widgets/colormap.h"
#include "core/edits.h"
#include "ui/logic/glyph_set.h"
#include "ui/widgets/heatmap_layout.h"
#include "ui/widgets/arc_select.h"
#include "ui/widgets/heatmap_pixels.h"
#include "ui/logic/matrix_export.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/steps.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {

double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

}  // namespace

TEST_CASE("viridis runs dark purple to yellow and gets lighter all the way") {
  const Rgb lo = sample(ColorMap::Sequential, 0.0), hi = sample(ColorMap::Sequential, 1.0);
  CHECK(lo.r == doctest::Approx(0.267f));
  CHECK(lo.b == doctest::Approx(0.329f));
  CHECK(hi.r == doctest::Approx(0.993f));
  CHECK(hi.g == doctest::Approx(0.906f));
  double previous = -1;
  for (int i = 0; i <= 100; ++i) {
    const double l = luminance(sample(ColorMap::Sequential, i / 100.0));
    CHECK(l > previous);  // monotonic lightness: readable in grey, and by colour-blind viewers
    previous = l;
  }
  CHECK(luminance(sample(ColorMap::Sequential, -5)) == luminance(lo));  // clamped
}

TEST_CASE("the diverging map is white at 0, blue below, red above, symmetric in lightness") {
  const Rgb mid = sample(ColorMap::Diverging, 0.5);
  CHECK(mid.r == doctest::Approx(0.97f));
  CHECK(mid.g == doctest::Approx(0.97f));
  const Rgb neg = sample(ColorMap::Diverging, 0.1), pos = sample(ColorMap::Diverging, 0.9);
  CHECK(neg.b > neg.r);
  CHECK(pos.r > pos.b);
  CHECK(std::abs(luminance(sample(ColorMap::Diverging, 0.25)) - luminance(sample(ColorMap::Diverging, 0.75))) < 0.12);
}

TEST_CASE("colour ranges: symmetric about 0 for signed values, [0, 1] for weights, hidden cells ignored") {
  const Matrix m = mat({{1, -3}, {2, 0.5}});
  const ValueRange d = auto_range(m, ColorMap::Diverging);
  CHECK(d.lo == -3);
  CHECK(d.hi == 3);
  const ValueRange w = auto_range(mat({{0.2, 0.7}}), ColorMap::Sequential);
  CHECK(w.lo == 0);
  CHECK(w.hi == 1);
  const ValueRange s = auto_range(mat({{2, 5}}), ColorMap::Sequential);
  CHECK(s.lo == 2);
  CHECK(s.hi == 5);
  const double inf = std::numeric_limits<double>::infinity();
  const Matrix visible = mat({{1, 0}, {1, 1}});
  const ValueRange v = auto_range(mat({{1, -inf}, {-2, 9}}), ColorMap::Diverging, &visible);
  CHECK(v.lo == -9);
  CHECK(v.hi == 9);
  CHECK(normalise(0, v) == 0.5);
  CHECK(normalise(100, v) == 1.0);
  const ValueRange zero = auto_range(Matrix::Zero(2, 2), ColorMap::Diverging);
  CHECK(zero.lo == -1);
  CHECK(zero.hi == 1);
}

TEST_CASE("colour ranges of a large non-square matrix: every cell counts, wherever it sits (lanes and the tail)") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Matrix m = Matrix::Constant(37, 29, 0.5);  // 1073 cells: 134 groups of 8 and a tail of 1
  Matrix visible = Matrix::Ones(37, 29);
  m(36, 28) = 7.0;    // the tail
  m(0, 3) = -2.0;     // lane 3 of the first group
  m(20, 10) = -inf;   // not finite: skipped
  m(5, 5) = nan;
  m(30, 1) = 50.0;    // hidden: skipped
  visible(30, 1) = 0.0;
  const ValueRange s = auto_range(m, ColorMap::Sequential, &visible);
  CHECK(s.lo == -2.0);
  CHECK(s.hi == 7.0);
  const ValueRange all = auto_range(m, ColorMap::Sequential);
  CHECK(all.lo == -2.0);
  CHECK(all.hi == 50.0);
  visible(36, 28) = 0.0;
  CHECK(auto_range(m, ColorMap::Sequential, &visible).hi == 0.5);
  CHECK(auto_range(Matrix::Constant(3, 5, -inf), ColorMap::Sequential).lo == 0.0);  // nothing finite: [0, 1]
}

TEST_CASE("packed colours use ImGui's byte order, and text picks the readable of black and white") {
  CHECK(pack({1, 0, 0}) == 0xFF0000FFu);
  CHECK(pack({0, 0, 1}, 0.5f) == 0x80FF0000u);
  CHECK(text_on({0.97f, 0.97f, 0.97f}).r < 0.1f);  // dark text on the white middle of the diverging map
  CHECK(text_on(sample(ColorMap::Sequential, 0.0)).r == 1.0f);  // white on dark purple
  CHECK(text_on(sample(ColorMap::Sequential, 1.0)).r < 0.1f);   // dark on yellow
}

TEST_CASE("a matrix's cells share its decimals: an integer among thousandths keeps them, an exact 0 does not") {
  CHECK(format_fixed(1.0, 3) == "1.000");
  CHECK(format_fixed(-1.0, 1) == "-1.0");
  CHECK(format_fixed(2.0, 0) == "2");
  CHECK(format_fixed(0.0, 3) == "0");
  CHECK(format_fixed(-0.0, 3) == "0");
  CHECK(format_fixed(0.0004, 3) == "0.000");  // the heatmap gives such a cell a form of its own (format_cell)
  CHECK(format_fixed(-0.7426921, 3) == "-0.743");
  CHECK(format_fixed(-std::numeric_limits<double>::infinity(), 3) == "-inf");
  Matrix m(1, 3);
  m << 0.5, 1.0, 0.25;
  CHECK(matrix_decimals(m) == 2);
  m << 0.0031, 1.0, 0.5;
  CHECK(matrix_decimals(m) == 3);  // at most 3, as the explanations quote
  Matrix hidden(1, 3);
  hidden << 0, 1, 1;
  CHECK(matrix_decimals(m, &hidden) == 1);  // hidden cells do not count
  m << 10.5664, -0.684, 9.999;
  CHECK(matrix_decimals(m) == 2);  // four significant digits: 10.57
  m << 123.456, 0.5, 0.25;
  CHECK(matrix_decimals(m) == 1);
  m << -2048.5, 0.5, 0.25;
  CHECK(matrix_decimals(m) == 0);
  m << 9.9994, 0.001, -std::numeric_limits<double>::infinity();
  CHECK(matrix_decimals(m) == 3);  // -inf (a masked score) is not a magnitude
}

TEST_CASE("cell values: as many decimals as fit, -inf for hidden scores, scientific when nothing else fits") {
  CHECK(format_cell(0.7426921, 6) == "0.7427");
  CHECK(format_cell(0.7426921, 5) == "0.743");
  CHECK(format_cell(0.7426921, 4) == "0.74");
  CHECK(format_cell(0.7426921, 3) == ".74");  // "0.7" is 6% off
  CHECK(format_cell(0.7426921, 2) == ".7");
  CHECK(format_cell(0.7426921, 1) == "");
  CHECK(format_cell(16.0, 6) == "16");
  CHECK(format_cell(-8.0829, 6) == "-8.083");
  CHECK(format_cell(-std::numeric_limits<double>::infinity(), 6) == "-inf");
  CHECK(format_cell(-std::numeric_limits<double>::infinity(), 3) == "");
  CHECK(format_cell(0.00002, 8) == "2e-5");
  CHECK(format_cell(0.000812, 8) == "0.0008");
  CHECK(format_cell(0.000812, 5) == ".0008");
  CHECK(format_cell(0.000812, 4) == "8e-4");
  CHECK(format_cell(-0.0008, 5) == "-8e-4");  // "-.001" is 25% off
  CHECK(format_cell(-0.0008, 4) == "");
  CHECK(format_cell(-0.037, 6) == "-0.037");
  CHECK(format_cell(-0.037, 5) == "-.037");
  CHECK(format_cell(-0.037, 4) == "-.04");
  CHECK(format_cell(0.75, 3) == ".75");
  CHECK(format_cell(123456.789, 8) == "123456.8");
  CHECK(format_cell(123456.789, 7) == "123457");
  CHECK(format_cell(123456.789, 5) == "1.2e5");
  CHECK(format_cell(1234567.0, 6) == "1.23e6");
  CHECK(format_cell(123456.789, 3) == "1e5");
  CHECK(format_cell(-0.00001, 6) == "-1e-5");
  CHECK(format_cell(123456789.0, 4) == "1e8");
  CHECK(format_cell(123456789.0, 2) == "");
}

TEST_CASE("heatmap layout: cells fit the box, labels and legend get their room, large matrices use a texture") {
  HeatmapLayoutInput in;
  in.rows = 3;
  in.cols = 3;
  in.avail_w = 400;
  in.row_label_w = 30;
  in.line_h = 20;
  in.max_cell = 72;
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_w == 72);  // capped
  CHECK(l.cell_h == 72);
  CHECK(l.label_w == 40);
  CHECK(l.header_h == 22);
  CHECK(l.legend_h == 34);
  CHECK(l.width == 40 + 3 * 72);
  CHECK(l.height == 22 + 3 * 72 + 34);
  CHECK_FALSE(l.texture);
  in.avail_h = 200;  // (200 - 22 - 34) / 3 = 48 per row
  CHECK(layout_heatmap(in).cell_h == 48);
  in.cols = 7;  // non-square: width decides, (400 - 40) / 7 = 51.43 -> 51.25
  in.avail_h = 0;
  CHECK(layout_heatmap(in).cell_w == doctest::Approx(51.25));
  CHECK(layout_heatmap(in).cell_h == doctest::Approx(51.25));
  in.labels = false;
  in.legend = false;
  CHECK(layout_heatmap(in).width == doctest::Approx(7 * 57.0));
  in.rows = in.cols = 1024;
  in.avail_w = 600;
  l = layout_heatmap(in);
  CHECK(l.texture);
  CHECK(l.cell_w == doctest::Approx(600.0f / 1024));  // below a pixel: the texture is scaled down
  CHECK(l.cell_h == doctest::Approx(600.0f / 1024));  // square: not stretched, however tall the box
  in.avail_h = 400;
  CHECK(layout_heatmap(in).cell_w == doctest::Approx(400.0f / 1024));
  CHECK(layout_heatmap(in).cell_h == doctest::Approx(400.0f / 1024));
}

TEST_CASE("texture extent: a texel per drawn pixel, at least one, at most the GL's limit and 4096") {
  CHECK(texture_extent(300.0f, 16384) == 300);
  CHECK(texture_extent(299.2f, 16384) == 300);
  CHECK(texture_extent(0.3f, 16384) == 1);
  CHECK(texture_extent(163840.0f, 16384) == kMaxTexels);  // 4096 queries of 40-pixel cells
  CHECK(texture_extent(3000.0f, 2048) == 2048);            // a GL with smaller textures
  CHECK(texture_extent(3000.0f, 0) == 3000);               // no answer from the GL: our own bound
}

TEST_CASE("heatmap layout: a few rows of many columns get rows a text line tall, and the transpose columns") {
  HeatmapLayoutInput in;
  in.rows = 3;
  in.cols = 512;  // a 3-token X at d_model 512
  in.avail_w = 800;
  in.line_h = 18;
  in.labels = in.legend = false;
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_w == 1.5);  // 800 / 512 = 1.5625, snapped to quarter pixels
  CHECK(l.cell_h == 18);                       // not a 1.5-pixel sliver
  CHECK(l.height == 54);
  CHECK(l.texture);
  in.avail_h = 30;  // a thumbnail's box: 10 per row
  l = layout_heatmap(in);
  CHECK(l.cell_h == 10);
  in.avail_h = 12;  // 4 per row is less than half a line, and still no 1.5-pixel sliver: as tall as the box lets it be
  CHECK(layout_heatmap(in).cell_h == 4);
  in.avail_h = 0;
  in.fill = true;  // a thumbnail without a height is not stretched
  CHECK(layout_heatmap(in).cell_h == 18);
  in.rows = 16;
  in.avail_w = 90;
  in.avail_h = 58;  // a step strip's box for a 16 x 512 output: filled, 3.5 pixels a row
  in.max_cell = 18;
  l = layout_heatmap(in);
  CHECK(l.cell_h == 3.5);
  CHECK(l.width == doctest::Approx(l.cell_w * 512));
  CHECK(l.cell_w * 512 <= 90);
  in.rows = in.cols = 3;  // a 3 x 3 thumbnail: square cells of at most max_cell, as without fill
  l = layout_heatmap(in);
  CHECK(l.cell_w == 18);
  CHECK(l.cell_h == 18);
  in = {};
  in.rows = 1024;
  in.cols = 2;  // the transpose: two columns of 1024 rows in a 300-pixel box
  in.avail_w = 500;
  in.avail_h = 300;
  in.line_h = 18;
  in.labels = in.legend = false;
  l = layout_heatmap(in);
  CHECK(l.cell_h == doctest::Approx(300.0f / 1024));
  CHECK(l.cell_w == 18);
  CHECK(l.width == 36);
}

TEST_CASE("arc view budget: a long sequence draws every k-th query's strongest keys, about 200 arcs in all") {
  const ArcBudget few = arc_budget(3, 300);
  CHECK(few.every == 1);
  CHECK(few.per_query == kArcsPerQuery);
  const ArcBudget hundred = arc_budget(100, 300);  // 100 rows: 2 arcs each
  CHECK(hundred.every == 1);
  CHECK(hundred.per_query == 2);
  const ArcBudget forty = arc_budget(40, 300);  // 40 rows: 5 arcs each
  CHECK(forty.per_query == 5);
  const ArcBudget long_one = arc_budget(1024, 300);  // every 7th query: 147 rows of 1
  CHECK(long_one.every == 7);
  CHECK(long_one.per_query == 1);
  CHECK(arc_budget(2048, 1000).per_query == 1);  // 410 rows: one each, never none
}

TEST_CASE("arcs of a row: weights above 0.002, the strongest first chosen, every key when asked for all") {
  const Matrix w = mat({{0.5, 0.001, 0.2, 0.25, 0.049}, {0, 0, 1, 0, 0}});
  auto keys = [](std::vector<std::pair<double, int>> arcs) {
    std::vector<int> k;
    for (const auto& a : arcs) k.push_back(a.second);
    std::sort(k.begin(), k.end());
    return k;
  };
  CHECK(keys(strongest_arcs(w, 0, 2)) == std::vector<int>{0, 3});
  CHECK(keys(strongest_arcs(w, 0, 3)) == std::vector<int>{0, 2, 3});
  CHECK(keys(strongest_arcs(w, 0, -1)) == std::vector<int>{0, 2, 3, 4});  // 0.001 is too light to draw
  CHECK(keys(strongest_arcs(w, 1, 8)) == std::vector<int>{2});
  CHECK(strongest_arcs(w, 0, 2)[0].first + strongest_arcs(w, 0, 2)[1].first == 0.75);
}

TEST_CASE("heatmap texels: one per cell, row-major, hidden cells grey with a diagonal stroke every 6 texels") {
  const Matrix m = mat({{-1, 0, 1}, {1, 1, 1}});
  const Matrix visible = mat({{1, 1, 1}, {1, 0, 1}});
  const std::vector<std::uint32_t> px = heatmap_pixels(m, ColorMap::Diverging, {-1, 1}, &visible);
  REQUIRE(px.size() == 6);
  CHECK(px[0] == pack(sample(ColorMap::Diverging, 0.0)));
  CHECK(px[1] == pack(sample(ColorMap::Diverging, 0.5)));
  CHECK(px[2] == pack(sample(ColorMap::Diverging, 1.0)));
  CHECK(px[4] == pack(kHiddenCell));  // (1, 1): 1 + 1 is not a multiple of 6
  // A hidden region 12 texels wide: the strokes run where row + column is a multiple of 6.
  const Matrix wide = Matrix::Zero(2, 12);
  const std::vector<std::uint32_t> hidden = heatmap_pixels(wide, ColorMap::Sequential, {0, 1}, &wide);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 12; ++c)
      CHECK(hidden[std::size_t(r * 12 + c)] == pack((r + c) % 6 == 0 ? kHatchLine : kHiddenCell));
  CHECK(content_hash(m, &visible, {-1, 1}, ColorMap::Diverging) == content_hash(m, &visible, {-1, 1}, ColorMap::Diverging));
  Matrix changed = m;
  changed(1, 2) = 0.5;
  CHECK(content_hash(changed, &visible, {-1, 1}, ColorMap::Diverging) != content_hash(m, &visible, {-1, 1}, ColorMap::Diverging));
}

TEST_CASE("heatmap texels for a matrix drawn smaller than its cells: the cell at each texel's centre") {
  // 4 x 6 values r*10 + c, drawn as 2 x 3 texels: rows 1 and 3, columns 1, 3 and 5.
  const Matrix m = Matrix::NullaryExpr(4, 6, [](Eigen::Index r, Eigen::Index c) { return double(r * 10 + c); });
  const std::vector<std::uint32_t> px = heatmap_pixels(m, ColorMap::Sequential, {0, 64}, nullptr, 2, 3);
  REQUIRE(px.size() == 6);
  const double picked[6] = {11, 13, 15, 31, 33, 35};
  for (int i = 0; i < 6; ++i) CHECK(px[std::size_t(i)] == pack(sample(ColorMap::Sequential, picked[i] / 64)));
  // Drawn larger than its cells: a texel per pixel, each the cell at its centre (8 rows: 2 per matrix row).
  const std::vector<std::uint32_t> up = heatmap_pixels(m, ColorMap::Sequential, {0, 64}, nullptr, 8, 12);
  REQUIRE(up.size() == 96);
  CHECK(up[0] == pack(sample(ColorMap::Sequential, 0.0)));
  CHECK(up[1] == pack(sample(ColorMap::Sequential, 0.0)));       // still cell (0, 0)
  CHECK(up[2] == pack(sample(ColorMap::Sequential, 1.0 / 64)));  // cell (0, 1)
  CHECK(up[std::size_t(7 * 12 + 11)] == pack(sample(ColorMap::Sequential, 35.0 / 64)));  // cell (3, 5)
}

TEST_CASE("the step list: ten steps in pipeline order, by number or by name") {
  REQUIRE(all_steps().size() == 10);
  CHECK(parse_step("0") == Step::Inputs);
  CHECK(parse_step("3") == Step::Scale);
  CHECK(parse_step("softmax") == Step::Softmax);
  CHECK(step_names() == "inputs, projections, scores, scale, mask, softmax, weighted_sum, head_outputs, concat, output");
  CHECK(parse_step("weighted_sum") == Step::WeightedSum);
  CHECK(parse_step("9") == Step::Output);
  CHECK_FALSE(parse_step("10").has_value());
  CHECK_FALSE(parse_step("-1").has_value());
  CHECK_FALSE(parse_step("soft").has_value());
  CHECK(step_at(42) == Step::Output);
  CHECK(step_info(Step::Scores).name == "scores");
}

TEST_CASE("each step's headline matrix") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Causal;
  const Trace t = compute_trace(s);
  CHECK(step_result(t, Step::Scores, 0).m == &t.heads[0].scores);
  const StepMatrix w = step_result(t, Step::Softmax, 0);
  CHECK(w.m == &t.heads[0].weights);
  CHECK(w.map == ColorMap::Sequential);
  CHECK(w.visible == &t.heads[0].mask);
  CHECK(step_result(t, Step::Output, 0).m == &t.output);
}

TEST_CASE("adding a token: a seeded embedding row, the custom mask grows causally -- removing shrinks it back") {
  Scenario s = cat_sat();
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 0, 1}, {1, 1, 0}, {0, 1, 1}});
  add_token(s, fresh_token_label(s));
  CHECK(s.input.tokens.back() == "token 4");
  REQUIRE(s.input.embeddings.rows() == 4);
  check_matrix(s.input.embeddings.row(3), seeded_embedding_row(7, SeedStream::Embeddings, 3, 4), 0.0, "seeded row");
  check_matrix(s.attention.custom_mask, mat({{1, 0, 1, 0}, {1, 1, 0, 0}, {0, 1, 1, 0}, {1, 1, 1, 1}}), 0.0, "grown mask");
  CHECK_NOTHROW(compute_trace(s));
  remove_token(s, 1);
  CHECK(s.input.tokens == std::vector<std::string>{"the", "sat", "token 4"});
  check_matrix(s.attention.custom_mask, mat({{1, 1, 0}, {0, 1, 0}, {1, 1, 1}}), 0.0, "shrunk mask");
  check_matrix(s.input.embeddings.row(1), mat({{1, 1, 1, 1}}), 0.0, "sat moved up");
  Scenario one = cat_sat();
  remove_token(one, 0);
  remove_token(one, 0);
  remove_token(one, 0);  // the last one stays
  CHECK(one.input.tokens.size() == 1);
}

TEST_CASE("changing heads redraws only the weights that no longer fit, and says so") {
  Scenario s = cat_sat();
  const std::vector<std::string> notes = set_head_shape(s, 1, 2);
  REQUIRE(notes.size() == 3);
  CHECK(notes[0] == "weights.W_Q is 4 x 3 but now needs 4 x 2 (d_model by heads x head_dim = 1 x 2); drawn from seed 7 instead");
  CHECK_FALSE(s.weights.W_Q.has_value());
  CHECK(compute_trace(s).heads[0].q.cols() == 2);
  reseed_weights(s);
  CHECK(s.seed == 8);
}

TEST_CASE("the application state applies valid edits in the same call and refuses invalid ones, keeping the document") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  CHECK_FALSE(state.document().dirty());
  CHECK(state.window_title() == "Attention Lab \u2014 the cat sat (the_cat_sat.json)");
  REQUIRE(state.edit([](Scenario& s) { s.input.embeddings(0, 0) = 2; }));
  CHECK(state.document().dirty());
  CHECK(state.trace().x(0, 0) == 2);  // the trace follows at once
  CHECK(state.window_title() == "Attention Lab \u2014 the cat sat (the_cat_sat.json) \u2022 unsaved");
  const double before = state.trace().heads[0].scores(0, 0);
  CHECK_FALSE(state.edit([](Scenario& s) { s.input.embeddings(1, 1) = std::numeric_limits<double>::quiet_NaN(); }));
  CHECK(state.message == "Not applied: embeddings[1][1]: not a finite number");
  CHECK(state.scenario().input.embeddings(1, 1) == 2);
  CHECK(state.trace().heads[0].scores(0, 0) == before);
  CHECK_FALSE(state.edit([](Scenario& s) { s.input.tokens[0] = ""; }));
  CHECK(state.message == "Not applied: tokens[0]: a token label must not be empty");
  state.reset_to_saved();
  CHECK(state.trace().x(0, 0) == 1);
  CHECK_FALSE(state.document().dirty());
  state.set_step(99);
  CHECK(state.pipeline.step == Step::Output);
  state.set_head(5);
  CHECK(state.pipeline.head == 0);
}

TEST_CASE("switching variants keeps tokens and derives the weights: first head of each group, exact round trips") {
  const Scenario mha = load_scenario_file(asset("the_lazy_dog.json"));  // 4 heads of 2, seeded weights
  const Trace mha_trace = compute_trace(mha);

  Scenario gqa = mha;
  const std::string note = switch_variant(gqa, mha_trace.weights, Variant::Gqa, 2, 0, 0);
  CHECK(note == "GQA with 2 KV heads: each KV head takes W_K and W_V of the first query head of its group");
  const Trace gqa_trace = compute_trace(gqa);
  check_matrix(gqa_trace.kv_heads[0].k, mha_trace.heads[0].k, 1e-15, "KV head 0 = query head 0's keys");
  check_matrix(gqa_trace.kv_heads[1].v, mha_trace.heads[2].v, 1e-15, "KV head 1 = query head 2's values");
  check_matrix(*gqa_trace.weights.W_Q, *mha_trace.weights.W_Q, 0.0, "W_Q kept");
  check_matrix(*gqa_trace.weights.W_O, *mha_trace.weights.W_O, 0.0, "W_O kept");
  CHECK(gqa.input.tokens == mha.input.tokens);

  // Back to MHA: each query head gets its group's keys, so the attention is exactly the GQA one.
  Scenario back = gqa;
  CHECK(switch_variant(back, gqa_trace.weights, Variant::Mha, 4, 0, 0) ==
        "MHA with 4 KV heads: every query head keeps its own keys and values");
  check_matrix(compute_trace(back).output, gqa_trace.output, 1e-14, "MHA built from GQA computes the same");

  Scenario mqa = mha;
  switch_variant(mqa, mha_trace.weights, Variant::Mqa, 1, 0, 0);
  CHECK(compute_trace(mqa).kv_heads.size() == 1);

  // To MLA the latent weights come from the seed; from MLA, W_K = W_DKV W_UK is the same attention.
  Scenario mla = mha;
  CHECK(switch_variant(mla, mha_trace.weights, Variant::Mla, 0, 3, 0) ==
        "MLA: W_DKV, W_UK and W_UV drawn from seed 42; W_Q and W_O kept where they still apply");
  const Trace mla_trace = compute_trace(mla);
  CHECK(mla_trace.latent.cols() == 3);
  Scenario unrolled = mla;
  CHECK(switch_variant(unrolled, mla_trace.weights, Variant::Mha, 4, 0, 0) ==
        "MHA with 4 KV heads: W_K = W_DKV\u00B7W_UK and W_V = W_DKV\u00B7W_UV, then every query head keeps its own keys "
        "and values");
  check_matrix(compute_trace(unrolled).output, mla_trace.output, 1e-13, "MHA from MLA computes the same");
}

TEST_CASE("changing heads keeps a GQA grouping valid") {
  Scenario s = load_scenario_file(asset("the_lazy_dog_gqa.json"));  // 4 heads, 2 KV heads
  set_head_shape(s, 6, 2);
  CHECK(s.attention.kv_heads == 2);
  set_head_shape(s, 5, 2);
  CHECK(s.attention.kv_heads == 1);  // 2 does not divide 5
  CHECK_NOTHROW(compute_trace(s));
  CHECK(divisors(12) == std::vector<int>{1, 2, 3, 4, 6, 12});
}

TEST_CASE("a matrix as CSV: labels on rows and columns, full precision, -inf kept, labels quoted when needed") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::string> rows{"the", "say \"hi\""}, cols{"a,b", "c"};
  CHECK(matrix_csv(mat({{1.0 / 3, -inf}, {2, 0.1}}), &rows, &cols) ==
        ",\"a,b\",c\n"
        "the,0.33333333333333331,-inf\n"
        "\"say \"\"hi\"\"\",2,0.10000000000000001\n");
  CHECK(matrix_csv(mat({{1, 2, 3}}), nullptr, nullptr) == ",0,1,2\n0,1,2,3\n");
}

TEST_CASE("exported pictures get a file name that is new in the folder and safe on every system") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attention-lab-pictures-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CHECK(picture_file_name(dir.string(), "KV cache, bf16") == (dir / "KV_cache__bf16.png").string());
  std::ofstream(dir / "scores.png") << "x";
  std::ofstream(dir / "scores-2.png") << "x";
  CHECK(picture_file_name(dir.string(), "scores") == (dir / "scores-3.png").string());
  CHECK(picture_file_name(dir.string(), "") == (dir / "picture.png").string());
  std::filesystem::remove_all(dir);
}

TEST_CASE("context tokens of a cross-attention scenario: added with a seeded row, removed with their mask column") {
  Scenario s = load_scenario_file(asset("cross_attention.json"));
  s.attention.mask = MaskKind::Custom;
  s.attention.custom_mask = mat({{1, 0, 1}, {0, 1, 1}});
  add_context_token(s, fresh_context_label(s));
  CHECK(s.context->tokens.back() == "key 4");
  check_matrix(s.context->embeddings.row(3), seeded_embedding_row(3, SeedStream::ContextEmbeddings, 3, 4), 0.0, "seeded row");
  check_matrix(s.attention.custom_mask, mat({{1, 0, 1, 1}, {0, 1, 1, 1}}), 0.0, "every query may see the new key");
  CHECK_NOTHROW(compute_trace(s));
  remove_context_token(s, 0);
  CHECK(s.context->tokens == std::vector<std::string>{"cat", "sat", "key 4"});
  check_matrix(s.attention.custom_mask, mat({{0, 1, 1}, {1, 1, 1}}), 0.0, "column 0 gone");
  CHECK(s.input.tokens.size() == 2);  // the queries are untouched
  CHECK(compute_trace(s).heads[0].scores.cols() == 3);
}

TEST_CASE("presentation mode fits its enlargement to the window -- normal mode only grows on large windows") {
  CHECK(window_fit(1280, 720, true) == doctest::Approx(1.10f));  // 1.35 x 0.8 = 1.08, in steps of 0.05
  CHECK(window_fit(1600, 900, true) == doctest::Approx(1.35f));
  CHECK(window_fit(1920, 1080, true) == doctest::Approx(1.60f));
  CHECK(window_fit(1920, 720, true) == doctest::Approx(1.10f));  // the tighter side decides
  CHECK(window_fit(800, 600, true) == doctest::Approx(1.0f));    // never below the normal size
  CHECK(window_fit(1280, 720, false) == doctest::Approx(1.0f));
  CHECK(window_fit(1600, 900, false) == doctest::Approx(1.0f));
  CHECK(window_fit(1920, 1080, false) == doctest::Approx(1.2f));
  CHECK(window_fit(3840, 2160, false) == doctest::Approx(2.0f));
  AppState state(load_scenario_file(std::string(ATTN_ASSETS_DIR) + "/scenarios/the_cat_sat.json"), {});
  state.display.width = 1280;
  state.display.height = 720;
  state.display.zoom = 1.25f;
  state.display.presentation = true;
  CHECK(state.display.effective_zoom() == doctest::Approx(1.375f));
}

TEST_CASE("the fonts are given every character the document writes beyond ASCII, malformed UTF-8 as U+FFFD") {
  CHECK(characters_beyond_ascii({"the cat"}).empty());
  CHECK(characters_beyond_ascii({"caf\u00E9", "\u732B", "\xF0\x9F\x90\x88", "\u732B\u00E9"}) ==
        std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  CHECK(characters_beyond_ascii({"a\xFFz", "\xE7\x8C"}) == std::u32string{U'\uFFFD'});  // a stray byte, a cut-off character
  AppState state(load_scenario_file(std::string(ATTN_TEST_DATA_DIR) + "/unicode_tokens.json"), {});
  CHECK(characters_in_use(state) == std::u32string{U'\u00E9', U'\u732B', U'\U0001F408'});
  state.edit([](Scenario& s) { s.input.tokens[0] = "\u306D\u3053"; });  // typed in Japanese: ねこ
  CHECK(characters_in_use(state) == std::u32string{U'\u00E9', U'\u3053', U'\u306D', U'\u732B', U'\U0001F408'});  // 猫 stays: the name has it
}
