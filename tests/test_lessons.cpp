// Lessons: the shipped ones load with every page valid, the numbers they quote are the engine's, every
// malformed lesson file gets its own message; and the sqrt(d_k) experiment's numbers, pinned.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>

#include "core/io/model_json.h"
#include "core/io/presets_json.h"
#include "core/online_softmax.h"
#include "core/weights.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/geometry.h"
#include "ui/logic/hover_text.h"
#include "ui/logic/layout_check.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/lessons.h"
#include "ui/logic/recompute.h"
#include "ui/logic/sqrt_dk.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/step_text.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

namespace {

const std::filesystem::path kLessons = std::filesystem::path(ATTN_ASSETS_DIR) / "lessons";
const std::filesystem::path kScenarios = std::filesystem::path(ATTN_ASSETS_DIR) / "scenarios";

Lesson shipped(const std::string& file) { return load_lesson_file(kLessons / file, kScenarios); }

// The value of a result cell on a lesson page, as the app shows it.
double cell(const LessonPage& page, int row, int col) {
  const Trace t = compute_trace(lesson_page_scenario(page, kScenarios));
  return (*step_result(t, page.step, page.head).m)(row, col);
}

struct ShippedLesson {
  const char* file;
  const char* name;
  std::size_t pages;
};

const ShippedLesson kShippedLessons[] = {
    {"1_the_cat_sat.json", "the_cat_sat", 7},
    {"2_sqrt_dk.json", "sqrt_dk", 6},
    {"3_masks.json", "masks", 7},
    {"4_multi_head.json", "multi_head", 6},
    {"5_kv_cache.json", "kv_cache", 7},
    {"6_variants.json", "variants", 8},
    {"7_positions.json", "positions", 8},
    {"8_sparse_attention.json", "sparse_attention", 6},
    {"9_online_softmax.json", "online_softmax", 5},
    {"10_model.json", "model", 6},
    {"11_induction.json", "induction", 5},
    {"12_real_model.json", "real_model", 6},
};

struct BadLesson {
  const char* file;
  const char* message;
};

const BadLesson kBadLessons[] = {
    {"step_typo.json",
     "pages[2].step: expected one of inputs, positions, projections, rope, scores, scale, mask, selection, softmax, "
     "weighted_sum, head_outputs, concat, output or 0-9 but found string \"scroes\""},
    {"missing_scenario.json", "pages[1].scenario: no such scenario file assets/scenarios/missing.json"},
    {"scenario_folder.json",
     "pages[0].scenario: expected a file name in assets/scenarios (no folders) but found string "
     "\"../presets/models.json\""},
    {"head_out_of_range.json", "pages[0].head: the scenario has 1 head (numbered from 0) but found 3"},
    {"head_after_overrides.json", "pages[0].head: the scenario has 2 heads (numbered from 0) but found 3"},
    {"unknown_page_key.json",
     "pages[0].hilight: unknown key (expected one of: title, text, scenario, view, step, head, decode_tokens, "
     "decode_section, preset, highlight, absorbed, shift_experiment, naive_rope, online, geometry, sparsity_loss, "
     "overrides, experiment, d_k, model, model_tokens, layer, model_section, train_steps, train_gradient, "
     "model_outline, focus, heads_panel, train_chart, decode_last_section, projection, real_text, real_ranked, "
     "real_knock_out_top, real_measure)"},
    {"train_without_steps.json", "pages[0].train_steps: missing (required)"},
    {"train_with_scenario.json",
     "pages[0].scenario: only used by pages with a scenario or a model (this is a page on view train)"},
    {"train_steps_past_the_run.json", "pages[0].train_steps: must be <= 3000 (found 4000)"},
    {"train_gradient_outside.json",
     "pages[0].train_gradient: the run has 2 layers of 4 heads, numbered from 0, but found [2, 0]"},
    {"train_steps_on_pipeline.json", "pages[0].train_steps: only used by view train (this is pipeline)"},
    {"train_chart_typo.json",
     "pages[0].train_chart: expected one of loss | scores | loss_and_scores | heads but found string \"attention\""},
    {"train_chart_with_gradient.json",
     "pages[0].train_chart: a page with train_gradient is about the gradient, not a chart"},
    {"empty_pages.json", "pages: expected at least one page but found none"},
    {"real_ranked_typo.json",
     "pages[0].real_ranked: expected one of previous_token | induction | duplicate_token | first_token but found "
     "string \"inductive\""},
    {"real_ranked_not_a_string.json",
     "pages[0].real_ranked: expected one of previous_token | induction | duplicate_token | first_token but found "
     "number 2"},
    {"real_knock_out_without_ranked.json",
     "pages[0].real_knock_out_top: knocks out the top heads by the page's real_ranked score, but the page gives none"},
    {"real_knock_out_zero.json", "pages[0].real_knock_out_top: must be >= 1 (found 0)"},
    {"real_measure_on_real.json", "pages[0].real_measure: only used by view compare (this is real)"},
    {"real_measure_typo.json", "pages[0].real_measure: expected text or sonnets but found string \"sonnet\""},
    {"real_knock_out_too_many.json", "pages[0].real_knock_out_top: must be <= 64 (found 65)"},
    {"real_text_empty.json", "pages[0].real_text: must not be empty"},
    {"real_text_on_pipeline.json", "pages[0].real_text: only used by view real (this is pipeline)"},
    {"real_with_scenario.json",
     "pages[0].scenario: only used by pages with a scenario or a model (this is a page on view real)"},
    {"unknown_experiment.json",
     "pages[0].experiment: expected one of sqrt_dk | sqrt_dk_softmax but found string \"temperature\""},
    {"d_k_not_offered.json", "pages[0].d_k: expected one of the experiment's 1, 4, 16, 64, 256, 1024 but found 100"},
    {"d_k_without_experiment.json",
     "pages[0].d_k: only used by pages with the sqrt_dk experiment (this is a page without an experiment)"},
    {"highlight_outside.json",
     "pages[0].highlight[1]: the scaled matrix of step scale is 3 x 3 (rows and columns numbered from 0) but found [3, "
     "0]"},
    {"highlight_not_a_cell.json",
     "pages[0].highlight[0]: expected [row, column], two integers from 0, but found [0,1,2]"},
    {"decode_tokens_too_far.json", "pages[0].decode_tokens: the scenario has 4 tokens, so 1 to 4, but found 5"},
    {"absorbed_not_mla.json",
     "pages[0].absorbed: the absorbed form is MLA's, but the_lazy_dog.json (after the overrides) is mha"},
    {"absorbed_on_decode.json", "pages[0].absorbed: only used by view pipeline (this is decode)"},
    {"heads_panel_on_decode.json", "pages[0].heads_panel: only used by view pipeline (this is decode)"},
    {"decode_section_on_pipeline.json", "pages[0].decode_section: only used by view decode (this is pipeline)"},
    {"shift_without_positions_step.json",
     "pages[0].shift_experiment: the_lazy_dog.json (after the overrides): the shift experiment is shown on the "
     "positions or rope step, not on scores"},
    {"two_modes.json",
     "pages[0].shift_experiment: a step shows one mode at a time, but more than one of shift_experiment, naive_rope, "
     "sparsity_loss, geometry and online is given"},
    {"online_past_the_row.json",
     "pages[0].online: the_lazy_dog.json (after the overrides): online.blocks_shown 3 is more than the row's 2 blocks "
     "of 2 keys"},
    {"geometry_key_outside.json",
     "pages[0].geometry: the_lazy_dog.json (after the overrides): its query, key and pair are numbered from 0 below "
     "N_Q = 4, N_KV = 4 and 1 pair of dims"},
    {"naive_rope_not_mla.json",
     "pages[0].naive_rope: the_lazy_dog.json (after the overrides): turning the expanded keys is shown on the rope "
     "step of mla with rope"},
    {"decode_section_5_dense.json",
     "pages[0].decode_section: section 5 exists only with sparse attention (the indexer's section); found 5 for "
     "the_lazy_dog.json"},
    {"decode_section_out_of_range.json",
     "pages[0].decode_section: section 5 exists only with sparse attention (the indexer's section); found 5 for "
     "the_lazy_dog.json"},
    {"decode_last_before_first.json", "pages[0].decode_last_section: must be >= 3 (found 2)"},
    {"step_on_decode_view.json", "pages[0].step: only used by view pipeline (this is decode)"},
    {"projection_not_on_projections.json",
     "pages[0].projection: the_lazy_dog.json (after the overrides): a projection is chosen on the projections step"},
    {"projection_latent_not_mla.json",
     "pages[0].projection: the_lazy_dog.json (after the overrides): expected one of q, k, v but found \"latent\""},
    {"preset_on_pipeline.json", "pages[0].preset: only used by views compare, memory and cost (this is pipeline)"},
    {"unknown_view.json",
     "pages[0].view: expected one of pipeline | decode | compare | memory | cost | model | train | real but found "
     "string "
     "\"slides\""},
    {"override_bad_mask.json",
     "pages[0].overrides.mask: expected one of none | causal | sliding_window | custom but found string \"diagonal\""},
    {"override_unknown_key.json",
     "pages[0].overrides.masks: unknown key (expected one of: mask, window, custom_mask, scale, kernel, heads, "
     "head_dim, variant, kv_heads, latent_dim, positions, rope_base, rope_dim, position_offset, top_k, indexer_heads, "
     "indexer_dim)"},
    {"override_kv_heads.json",
     "pages[0].overrides: the_lazy_dog.json with these overrides is invalid: attention.kv_heads: must divide heads (4) "
     "but "
     "found 3"},
    {"override_window_without_sliding.json",
     "pages[0].overrides.window: given, but the mask is not \"sliding_window\""},
    {"missing_title.json", "title: missing (required)"},
    {"model_view_without_model.json", "pages[0].model: a page on view model names its model file"},
    {"model_and_scenario.json",
     "pages[0].scenario: a page with a model shows the model (or one of its layers), not a scenario"},
    {"model_layer_outside.json", "pages[0].layer: tiny.json has 2 layers (numbered from 0) but found 5"},
    {"model_unknown_token.json",
     "pages[0].model_tokens: tiny.json: tokens[1]: \"zebra\" is not in the vocabulary of 8 tokens"},
    {"model_on_decode.json",
     "pages[0].model: a model is shown on view model, or one of its layers (\"layer\") on view pipeline; this page is "
     "on view decode"},
    {"model_section_on_pipeline.json", "pages[0].model_section: only used by view model (this is pipeline)"},
    {"model_outline_typo.json",
     "pages[0].model_outline[1]: expected input, output, layer N, layer N attention or layer N ffn but found string "
     "\"layers 1\""},
    {"model_outline_layer_outside.json",
     "pages[0].model_outline[1]: tiny.json has 2 layers (numbered from 0) but found \"layer 2 attention\""},
    {"model_outline_without_ffn.json",
     "pages[0].model_outline[0]: induction.json has no feed-forward sublayer but found \"layer 0 ffn\""},
    {"model_outline_on_pipeline.json", "pages[0].model_outline: only used by view model (this is pipeline)"},
    {"model_outline_not_array.json",
     "pages[0].model_outline: expected an array of one or more of input, output, layer N, layer N attention or layer "
     "N ffn but found string \"layer 0\""},
    {"layer_without_model.json", "pages[0].layer: only used by pages with a model (this is a page without one)"},
    {"model_missing_file.json", "pages[0].model: no such model file assets/models/huge.json"},
    {"focus_on_softmax.json",
     "pages[0].focus: the_lazy_dog.json: step softmax offers no focus (with W_O the concat step does: concat, W_O, "
     "output; and the output step: head 0, ..., output)"},
    {"focus_unknown_matrix.json",
     "pages[0].focus.W_Q: expected one of the matrices of step concat: concat, W_O, output"},
    {"focus_row_outside.json", "pages[0].focus.concat.rows[1]: concat is 4 x 8 (rows numbered from 0) but found 4"},
    {"focus_col_outside.json", "pages[0].focus.W_O.cols[0]: W_O is 8 x 8 (cols numbered from 0) but found 8"},
    {"focus_neither_axis.json", "pages[0].focus.concat: expected \"rows\", \"cols\" or both but found neither"},
    {"focus_negative_index.json", "pages[0].focus.concat.rows[0]: expected an index from 0 but found number -1"},
    {"focus_unknown_axis.json", "pages[0].focus.concat.row: unknown key (expected one of: rows, cols)"},
    {"focus_not_an_object.json",
     "pages[0].focus: expected an object naming matrices of the step, as {\"concat\": {\"rows\": [3]}}, but found "
     "array"},
    {"focus_on_decode.json", "pages[0].focus: only used by view pipeline (this is decode)"},
    {"root_array.json", "lesson: expected an object but found array"},
    {"duplicate_key.json", "pages[0].title: key appears twice in one object"},
    {"does_not_exist.json", "no such file"},
};

}  // namespace

TEST_CASE("the shipped lessons load in teaching order, every page checked against its scenario") {
  const std::vector<std::filesystem::path> files = lesson_files(kLessons);
  REQUIRE(files.size() >= std::size(kShippedLessons));
  const std::vector<ModelShape> presets =
      load_presets_file(std::filesystem::path(ATTN_ASSETS_DIR) / "presets" / "models.json");
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    Lesson lesson;
    REQUIRE_NOTHROW(lesson = load_lesson_file(files[i], kScenarios));
    if (i < std::size(kShippedLessons)) {  // the shipped ones, in this order; more may follow
      CHECK(files[i].filename() == kShippedLessons[i].file);
      CHECK(lesson.name == kShippedLessons[i].name);
      CHECK(lesson.pages.size() == kShippedLessons[i].pages);
    }
    for (const LessonPage& page : lesson.pages) {
      CAPTURE(page.title);
      // Train and Real model pages show their view's own run.
      if (page.view != View::Train && !page.on_real_model()) CHECK_NOTHROW(lesson_page_scenario(page, kScenarios));
      // Paragraphs only, separated by a blank line: the app wraps the lines itself.
      std::string text = page.text;
      for (std::size_t at; (at = text.find("\n\n")) != std::string::npos;) text.erase(at, 2);
      CHECK(text.find('\n') == std::string::npos);
      // The loader cannot see the presets; a misspelt one would silently keep the previous model.
      if (page.preset)
        CHECK(std::any_of(presets.begin(), presets.end(), [&](const ModelShape& m) { return m.name == *page.preset; }));
    }
  }
}

TEST_CASE("the loader reads every field of a page") {
  const Lesson cat = shipped("1_the_cat_sat.json");
  CHECK(cat.title == "The cat sat: from raw scores to output");
  const LessonPage& scale = cat.pages[3];
  CHECK(scale.scenario == "the_cat_sat.json");
  CHECK(scale.view == View::Pipeline);
  CHECK(scale.step == Step::Scale);
  CHECK(scale.head == 0);
  CHECK(scale.highlight == std::vector<std::pair<int, int>>{{0, 1}});
  CHECK_FALSE(scale.overrides.any());
  CHECK_FALSE(scale.experiment);
  CHECK(scale.text.find("\n\n") != std::string::npos);

  const Lesson kv = shipped("5_kv_cache.json");
  CHECK(kv.pages[1].view == View::Decode);
  CHECK(kv.pages[1].decode_tokens == 1);
  CHECK(kv.pages[4].decode_tokens == 4);
  CHECK(kv.pages[5].view == View::Cost);
  CHECK(kv.pages[5].preset == "llama-3-70b");

  const Lesson masks = shipped("3_masks.json");
  const ConfigOverrides& custom = masks.pages[5].overrides;
  CHECK(custom.mask == MaskKind::Custom);
  REQUIRE(custom.custom_mask.has_value());
  check_matrix(*custom.custom_mask, mat({{1, 1, 1}, {1, 1, 1}, {1, 0, 1}}), 0.0, "custom_mask");
  CHECK(masks.pages[4].overrides.window == 2);

  // Only the sqrt(d_k) lesson shows the experiment: its histograms on the third page, its softmax rows on the fourth.
  for (const ShippedLesson& l : kShippedLessons)
    for (const LessonPage& page : shipped(l.file).pages) {
      const bool sqrt_dk = std::string(l.name) == "sqrt_dk";
      std::optional<Experiment> expected;
      if (sqrt_dk && page.title == "Why dot products grow with d_k") expected = Experiment::SqrtDk;
      if (sqrt_dk && page.title == "Saturation") expected = Experiment::SqrtDkSoftmax;
      CAPTURE(page.title);
      CHECK(page.experiment == expected);
    }
  CHECK(experiment_name(Experiment::SqrtDk) == "sqrt_dk");
  CHECK(experiment_name(Experiment::SqrtDkSoftmax) == "sqrt_dk_softmax");
}

namespace {

// The page's text quotes `quoted` ("0.743", "−1.077" with a typographic minus), and the engine's cell (row, col) of
// the page's step, at the decimals quoted, is exactly that.
void check_quote(const LessonPage& p, int row, int col, const std::string& quoted) {
  CAPTURE(p.title);
  CHECK_MESSAGE(p.text.find(quoted) != std::string::npos, "the page's text does not quote " << quoted);
  std::string plain = quoted;
  if (plain.starts_with("\u2212")) plain = "-" + plain.substr(std::string("\u2212").size());
  const std::size_t dot = plain.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(plain.size() - dot - 1);
  CHECK(format_fixed(cell(p, row, col), decimals) == plain);
}

}  // namespace

TEST_CASE("the model lesson's pages open tiny (and its Post-LN twin) on their tokens, and quote its prediction") {
  const Lesson lesson = shipped("10_model.json");
  CHECK(lesson.pages[0].view == View::Model);
  CHECK(lesson.pages[2].layer == 1);
  CHECK(lesson.pages[2].view == View::Pipeline);
  CHECK(lesson.pages[4].model == "tiny_post.json");
  CHECK(lesson.pages[5].model_output);
  // Each page on the Model view frames what it is about: the input, layer 0's two sublayer rows, the Post-LN layer,
  // the output.
  using P = ModelPart::Place;
  CHECK(lesson.pages[0].model_outline == std::vector<ModelPart>{{P::Input}});
  CHECK(lesson.pages[1].model_outline == std::vector<ModelPart>{{P::Layer, 0, 0}, {P::Layer, 0, 1}});
  CHECK(lesson.pages[4].model_outline == std::vector<ModelPart>{{P::Layer, 0, -1}});
  CHECK(lesson.pages[5].model_outline == std::vector<ModelPart>{{P::Output}});
  const ModelInput in = lesson_page_model(lesson.pages[5], kScenarios);
  CHECK(in.tokens == std::vector<std::string>{"<s>", "a", "b", "c", "a", "b", "c"});
  const ModelTrace t = run_model(resolve_model(in.model), in.tokens);
  // After the last "c" the favourite is "b" (index 2 of the vocabulary) at 0.188, as page 6 says.
  Eigen::Index best = 0;
  t.probabilities.row(6).maxCoeff(&best);
  CHECK(best == 2);
  CHECK(format_fixed(t.probabilities(6, 2), 3) == "0.188");
  CHECK(lesson.pages[5].text.find("\"b\", gets only 0.188") != std::string::npos);
  CHECK(load_model_file(lesson_page_model_path(lesson.pages[4], kScenarios)).norm == Norm::Post);
}

TEST_CASE("the numbers the lessons quote are the engine's") {
  const Lesson cat = shipped("1_the_cat_sat.json");
  check_quote(cat.pages[2], 0, 1, "8");      // q_the . k_cat
  check_quote(cat.pages[3], 0, 1, "4.619");  // 8 / sqrt(3)
  check_quote(cat.pages[4], 0, 1, "0.743");  // softmax
  check_quote(cat.pages[5], 0, 0, "1.977");  // weighted sum
  check_quote(cat.pages[5], 0, 1, "7.392");
  check_quote(cat.pages[5], 0, 2, "0.772");

  const Lesson sqrt_dk = shipped("2_sqrt_dk.json");
  check_quote(sqrt_dk.pages[1], 0, 1, "0.879");  // unscaled
  check_quote(sqrt_dk.pages[4], 3, 1, "1.000");  // d_k = 64, unscaled: saturated
  check_quote(sqrt_dk.pages[5], 3, 1, "0.679");  // d_k = 64, scaled

  const Lesson masks = shipped("3_masks.json");
  CHECK(cell(masks.pages[1], 0, 1) == -std::numeric_limits<double>::infinity());  // causal: the -> cat hidden
  check_quote(masks.pages[2], 1, 1, "0.997");
  check_quote(masks.pages[4], 2, 1, "0.850");  // window 2
  check_quote(masks.pages[5], 2, 2, "0.990");  // custom

  const Lesson positions = shipped("7_positions.json");
  check_quote(positions.pages[0], 3, 2, "0.329");  // no positions: both "the" rows alike
  check_quote(positions.pages[2], 0, 2, "0.379");  // sinusoidal: now they differ
  check_quote(positions.pages[2], 3, 2, "0.087");
  check_quote(positions.pages[3], 3, 1, "\u22120.949");  // RoPE(q) of the second "the", turned by 3 rad

  const Lesson sparse = shipped("8_sparse_attention.json");
  check_quote(sparse.pages[0], 3, 2, "0.266");  // the indexer's score
  check_quote(sparse.pages[2], 3, 1, "0.439");  // head 0's weights over the selected keys

  const Lesson heads = shipped("4_multi_head.json");
  check_quote(heads.pages[2], 3, 2, "0.575");        // head 3: sleeps -> dog
  check_quote(heads.pages[5], 3, 0, "\u22121.077");  // the sum over heads
}

namespace {

// Every number a page's matrices show, as their cells write it (each matrix at its own decimals), with the
// slices the projection step shows of each weight.
std::set<std::string> shown_numbers(const Trace& t) {
  std::set<std::string> out;
  const auto add = [&](const Matrix& m, const Matrix* visible = nullptr) {
    const int d = matrix_decimals(m, visible);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      if (std::isfinite(m.data()[i])) out.insert(format_fixed(m.data()[i], d));
  };
  for (const Matrix* m : {&t.x, &t.x_kv, &t.concat, &t.output}) add(*m);
  const int d = t.attention.head_dim;
  for (const WeightId id : kAllWeights)
    if (const SharedMatrix& w = weight_slot(t.weights, id)) {
      add(*w);
      for (Eigen::Index h = 0; h < w->cols() / d; ++h) add(w->middleCols(h * d, d));
      for (Eigen::Index h = 0; h < w->rows() / d; ++h) add(w->middleRows(h * d, d));
    }
  for (const HeadTrace& h : t.heads) {
    for (const Matrix* m : {&h.q, &h.k, &h.v, &h.scores(), &h.scaled(), &h.output, &h.contribution()}) add(*m);
    add(h.masked(), &*h.mask);
    add(h.weights(), &*h.mask);
    for (const Vector* row : {&h.entropy, &h.row_sum})  // the softmax step's row summary
      for (Eigen::Index r = 0; r < row->size(); ++r) out.insert(format_fixed((*row)(r), 3));
  }
  return out;
}

}  // namespace

namespace {

// What the new steps and modes put on screen besides the trace's own matrices: X + P, the turned vectors, the
// indexer, what sparsity lost, the pinned cell's hover, and the sentences and tables of the geometry, shift and
// online modes (their decimals as those texts write them).
void add_step_numbers(const LessonPage& p, const Scenario& s, const Trace& t, std::set<std::string>& out) {
  const auto add = [&](const Matrix& m) {
    const int d = matrix_decimals(m, nullptr);
    for (Eigen::Index i = 0; i < m.size(); ++i)
      if (std::isfinite(m.data()[i])) out.insert(format_fixed(m.data()[i], d));
  };
  const auto add_text = [&](const std::string& text) {
    for (const std::string& q : quoted_decimals(text)) out.insert(q);
  };
  for (const Matrix* m : {&t.positions, &t.input(), &t.input_kv()}) add(*m);
  for (const HeadTrace& h : t.heads)
    for (const Matrix* m : {&h.q_rope, &h.k_rope, &h.q_r, &h.k_r}) add(*m);
  if (t.indexer) {
    for (const Matrix* m : {&t.indexer->q, &t.indexer->k, &t.indexer->w, &t.indexer->scores}) add(*m);
    const Matrix dense = compute_trace(dense_version(s)).output;
    add(dense);
    add(t.output - dense);
    add_text(short_number((t.output - dense).cwiseAbs().maxCoeff()));
  }
  if (!p.highlight.empty())
    add_text(explain_cell(t, p.step, p.head, p.highlight.front().first, p.highlight.front().second));
  if (p.geometry) {
    const PlaneGeometry g = plane_geometry(t, p.head, p.geometry->pair,
                                           p.geometry->query < 0 ? t.n_q() - 1 : p.geometry->query, p.geometry->key);
    add_text(explain_geometry(t, g));
  }
  if (p.shift_experiment) {
    const Trace from_0 = compute_trace(unshifted_version(s));
    add_text(explain_shift(t.attention, (t.heads[0].scores() - from_0.heads[0].scores()).cwiseAbs().maxCoeff()).text);
  }
  if (p.online) {
    const OnlineSoftmax o = online_softmax(t, p.head, p.online->row < 0 ? t.n_q() - 1 : p.online->row, p.online->block);
    for (const OnlineBlock& b : o.blocks)
      for (const double x : {b.block_max, b.m, b.rescale, b.l}) out.insert(short_number(x));
  }
}

}  // namespace

TEST_CASE("every decimal a lesson page quotes is a number on its screen, written as its cell writes it") {
  // The square root the scale step divides by and the softmax row summary (Z, entropy) are on screen too.
  for (const std::filesystem::path& file : lesson_files(kLessons)) {
    const Lesson l = load_lesson_file(file, kScenarios);
    for (std::size_t i = 0; i < l.pages.size(); ++i) {
      const LessonPage& p = l.pages[i];
      if (p.experiment || (p.view != View::Pipeline && p.view != View::Decode)) continue;
      const Scenario s = lesson_page_scenario(p, kScenarios);
      const Trace t = compute_trace(s);
      std::set<std::string> shown = shown_numbers(t);
      add_step_numbers(p, s, t, shown);
      shown.insert(format_fixed(std::sqrt(static_cast<double>(t.attention.head_dim)), 3));
      if (i > 0) {  // a page may compare with what the page before it showed
        const std::set<std::string> before =
            shown_numbers(compute_trace(lesson_page_scenario(l.pages[i - 1], kScenarios)));
        shown.insert(before.begin(), before.end());
      }
      for (const std::string& quoted : quoted_decimals(p.text)) {
        CAPTURE(l.name);
        CAPTURE(i + 1);
        CHECK_MESSAGE(shown.count(quoted) == 1,
                      "page text quotes " << quoted << ", which no matrix on its screen shows");
      }
    }
  }
}

TEST_CASE("a page's scenario applies its overrides as the command line does") {
  LessonPage page;
  page.scenario = "the_lazy_dog.json";
  page.overrides.kv_heads = 2;  // alone it implies gqa, and the seeded weights are those of the_lazy_dog_gqa.json
  const Scenario gqa = lesson_page_scenario(page, kScenarios);
  CHECK(gqa.attention.variant == Variant::Gqa);
  const Trace expected = compute_trace(load_scenario_file(asset("the_lazy_dog_gqa.json")));
  check_matrix(compute_trace(gqa).output, expected.output, 0.0, "output");

  page = LessonPage{};
  page.scenario = "the_cat_sat.json";
  page.overrides.window = 2;  // alone it implies sliding_window
  CHECK(lesson_page_scenario(page, kScenarios).attention.mask == MaskKind::SlidingWindow);

  page.overrides = ConfigOverrides{};
  page.overrides.variant = Variant::Mla;
  CHECK_THROWS_WITH_AS(lesson_page_scenario(page, kScenarios),
                       "overrides.latent_dim: missing (required for variant mla: the width of the cached latent)",
                       InputError);
}

TEST_CASE("the induction lesson names the part of the Train view each page is about") {
  const Lesson l = shipped("11_induction.json");
  REQUIRE(l.pages.size() == 5);
  CHECK(l.pages[0].train_chart == TrainChart::Heads);
  CHECK(l.pages[1].train_chart == TrainChart::Loss);
  CHECK(l.pages[2].train_chart == TrainChart::LossAndScores);  // its text is about the loss and the heads
  CHECK(l.pages[3].train_chart == TrainChart::Heads);
  CHECK(l.pages[4].train_chart == TrainChart::All);  // the gradient page
  CHECK(parse_train_chart("scores") == TrainChart::Scores);
  CHECK(parse_train_chart("loss_and_scores") == TrainChart::LossAndScores);
  CHECK(parse_train_chart("Scores") == std::nullopt);
}

TEST_CASE("the real model lesson types its texts, ranks by each score and knocks out the top induction heads") {
  const Lesson l = shipped("12_real_model.json");
  REQUIRE(l.pages.size() == 6);
  for (std::size_t i = 0; i < 5; ++i) CHECK(l.pages[i].view == View::Real);
  // The last measures what GQA and MLA cost the model, on the sonnets, in the Compare view.
  CHECK(l.pages[5].view == View::Compare);
  CHECK(l.pages[5].real_measure_sonnets == true);
  CHECK(l.pages[5].scenario.empty());
  CHECK_FALSE(l.pages[4].real_measure_sonnets);
  const std::string cat = "The cat sat on the mat. The cat sat on the mat.";
  const std::string lamps = "Purple lamps eat quiet bridges. Purple lamps eat quiet bridges.";
  CHECK(l.pages[0].real_text == cat);
  CHECK_FALSE(l.pages[0].real_ranked);
  CHECK(l.pages[1].real_ranked == HeadRole::PreviousToken);
  CHECK(l.pages[2].real_text == lamps);
  CHECK(l.pages[2].real_ranked == HeadRole::Induction);
  CHECK(l.pages[2].real_knock_out_top == 0);
  CHECK(l.pages[3].real_ranked == HeadRole::FirstToken);
  CHECK(l.pages[4].real_text == lamps);
  CHECK(l.pages[4].real_ranked == HeadRole::Induction);
  CHECK(l.pages[4].real_knock_out_top == 3);
  CHECK(l.pages[0].scenario.empty());
  CHECK(parse_head_score_name("previous_token") == HeadRole::PreviousToken);
  CHECK(parse_head_score_name("duplicate_token") == HeadRole::DuplicateToken);
  CHECK(parse_head_score_name("first_token") == HeadRole::FirstToken);
  CHECK(parse_head_score_name("previous-token") == std::nullopt);
}

TEST_CASE("every malformed lesson file gets its own message naming the field") {
  for (const BadLesson& bad : kBadLessons) {
    const std::filesystem::path path = data(std::string("bad_lessons/") + bad.file);
    CAPTURE(path);
    CHECK_THROWS_WITH_AS(load_lesson_file(path, kScenarios), bad.message, InputError);
  }
}

TEST_CASE("lesson files are ordered by their leading number, the rest after them by name") {
  const std::filesystem::path dir = fresh_dir("lesson-order");
  std::filesystem::create_directories(dir / "9_a_folder.json");
  for (const char* name : {"10_last.json", "2_second.json", "1_first.json", "notes.json", "readme.txt"})
    std::ofstream(dir / name) << "{}";
  std::vector<std::string> names;
  for (const auto& p : lesson_files(dir)) names.push_back(p.filename().string());
  CHECK(names == std::vector<std::string>{"1_first.json", "2_second.json", "10_last.json", "notes.json"});
  std::filesystem::remove_all(dir);
  CHECK(lesson_files(dir).empty());  // a missing folder has no lessons
}

// --- the sqrt(d_k) experiment --------------------------------------------------------------------------

TEST_CASE("dot products of random vectors: variance d_k raw, 1 scaled, the same on every machine") {
  const DotProductSample s = sample_dot_products(64, kSqrtDkPairs, kSqrtDkSeed);
  REQUIRE(s.raw.size() == 20000);
  REQUIRE(s.scaled.size() == 20000);
  // Pinned to catch any change to the generator; the tolerance only allows for libm's last bit.
  CHECK(s.raw[0] == doctest::Approx(-7.6036623854160599).epsilon(1e-12));
  CHECK(s.raw[1] == doctest::Approx(-1.3453627340345586).epsilon(1e-12));
  CHECK(s.raw[2] == doctest::Approx(-3.8823303814504637).epsilon(1e-12));
  CHECK(s.scaled[0] == s.raw[0] / 8.0);

  const double raw = sample_variance(s.raw), scaled = sample_variance(s.scaled);
  CHECK(std::abs(raw - 64.0) < 0.05 * 64.0);
  CHECK(std::abs(scaled - 1.0) < 0.05);
  CHECK(raw == doctest::Approx(64.615716328967963).epsilon(1e-12));     // the 64.6 of the lesson
  CHECK(scaled == doctest::Approx(1.0096205676401244).epsilon(1e-12));  // the 1.01 of the lesson
  const auto within = std::count_if(s.raw.begin(), s.raw.end(), [](double v) { return std::abs(v) < 16.0; });
  CHECK(within == 19049);                                    // the lesson's "95% between -16 and +16"
  CHECK(fraction_within(s.raw, 16.0) == 19049.0 / 20000.0);  // the caption's 95.2%
  CHECK(fraction_within(s.scaled, 2.0) == 19049.0 / 20000.0);

  const DotProductSample again = sample_dot_products(64, 3, kSqrtDkSeed);
  CHECK(again.raw == std::vector<double>(s.raw.begin(), s.raw.begin() + 3));
  CHECK(sample_dot_products(64, 3, 2).raw != again.raw);
  CHECK_THROWS_AS(sample_dot_products(0, 3, 1), std::invalid_argument);
  CHECK_THROWS_AS(sample_dot_products(4, -1, 1), std::invalid_argument);
}

TEST_CASE("histogram: equal bins, values outside [lo, hi] counted in the end bins") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-10, -1, 0, 0.999, 1, 10, inf, -inf, std::nan("")};
  const Histogram h = histogram(values, -1, 1, 4);
  CHECK(h.lo == -1.0);
  CHECK(h.hi == 1.0);
  CHECK(h.counts == std::vector<int>{3, 0, 1, 4});  // NaN is the only value left out

  const DotProductSample s = sample_dot_products(64, kSqrtDkPairs, kSqrtDkSeed);
  const Histogram narrow = histogram(s.raw, -4, 4, 16);  // most of the raw values lie outside
  CHECK(std::accumulate(narrow.counts.begin(), narrow.counts.end(), 0) == kSqrtDkPairs);
  CHECK_THROWS_AS(histogram(values, 1, 1, 4), std::invalid_argument);
  CHECK_THROWS_AS(histogram(values, -1, 1, 0), std::invalid_argument);
}

TEST_CASE("the share within a bound: strictly inside, either sign") {
  const std::vector<double> v = {-3, -2, -1, 0, 1, 2, 3, 4};
  CHECK(fraction_within(v, 2.0) == 3.0 / 8.0);  // -1, 0, 1: the bound itself is outside
  CHECK(fraction_within(v, 10.0) == 1.0);
  CHECK(fraction_within(std::vector<double>{}, 1.0) == 0.0);
}

TEST_CASE("sample variance divides by n - 1") {
  const std::vector<double> v = {1, 2, 3, 4};
  CHECK(sample_variance(v) == doctest::Approx(5.0 / 3.0));
  CHECK(sample_variance(std::vector<double>{5}) == 0.0);
  CHECK(sample_variance(std::vector<double>{}) == 0.0);
}

TEST_CASE("softmax of a random row saturates at large d_k unless the scores are scaled") {
  const SoftmaxRow raw = softmax_of_sample_row(256, kSqrtDkKeys, false, kSqrtDkSeed);
  const SoftmaxRow scaled = softmax_of_sample_row(256, kSqrtDkKeys, true, kSqrtDkSeed);
  REQUIRE(raw.weights.size() == 8);
  CHECK(std::accumulate(raw.weights.begin(), raw.weights.end(), 0.0) == doctest::Approx(1.0));
  CHECK(std::accumulate(scaled.weights.begin(), scaled.weights.end(), 0.0) == doctest::Approx(1.0));
  // The lesson quotes these: 0.0008 nats and 0.9999 unscaled, 1.822 nats and 0.333 scaled.
  CHECK(raw.entropy == doctest::Approx(0.00079306636715465394).epsilon(1e-9));
  CHECK(raw.max_weight == doctest::Approx(0.99992905171278046).epsilon(1e-12));
  CHECK(scaled.entropy == doctest::Approx(1.8220995395082364).epsilon(1e-12));
  CHECK(scaled.max_weight == doctest::Approx(0.33286080240814325).epsilon(1e-12));
  CHECK(raw.entropy < scaled.entropy / 1000);
  CHECK(scaled.entropy < std::log(8.0));  // an even row would reach ln 8

  // d_k = 1: dividing by sqrt(1) changes nothing.
  CHECK(softmax_of_sample_row(1, 8, false, 5).weights == softmax_of_sample_row(1, 8, true, 5).weights);
  CHECK_THROWS_AS(softmax_of_sample_row(4, 0, true, 1), std::invalid_argument);
}

TEST_CASE("opening a page sets the step's mode: the shift experiment, the geometry, the online softmax") {
  AppState state(cat_sat(), "");
  state.lesson.scenarios_dir = kScenarios;
  state.lesson.lessons = {shipped("7_positions.json"), shipped("9_online_softmax.json")};
  REQUIRE(ApplyLessonPage(state, 0, 4));  // positions page 5: the geometry of the second "the" against the first
  CHECK(state.pipeline.geometry);
  CHECK(state.pipeline.geometry_view.row == 3);
  CHECK(state.pipeline.geometry_view.col == 0);
  CHECK_FALSE(state.pipeline.shift);
  REQUIRE(ApplyLessonPage(state, 0, 5));  // page 6: the shift experiment, shifted by 5
  CHECK(state.pipeline.shift);
  CHECK_FALSE(state.pipeline.geometry);
  CHECK(state.scenario().attention.position_offset == 5);
  REQUIRE(ApplyLessonPage(state, 0, 7));  // page 8: mla's naive rope
  CHECK(state.pipeline.naive_rope);
  REQUIRE(ApplyLessonPage(state, 1, 2));  // online page 3: two blocks of 2 done
  CHECK(state.pipeline.online.on);
  CHECK(state.pipeline.online.row == 4);
  CHECK(state.pipeline.online.block == 2);
  CHECK(state.pipeline.online.shown == 2);
  CHECK_FALSE(state.pipeline.naive_rope);
  REQUIRE(ApplyLessonPage(state, 1, 0));  // page 1: the plain softmax step
  CHECK_FALSE(state.pipeline.online.on);
}

TEST_CASE("opening a page sets what its text talks about: the absorbed form, the decode section") {
  AppState state(cat_sat(), "");
  state.lesson.scenarios_dir = kScenarios;
  state.lesson.lessons = {shipped("5_kv_cache.json"), shipped("6_variants.json")};
  REQUIRE(ApplyLessonPage(state, 1, 3));  // variants page 4: MLA scores, absorbed
  CHECK(state.pipeline.show_absorbed);
  CHECK(state.pipeline.step == Step::Scores);
  CHECK(state.decode.scroll_to_section == 0);
  REQUIRE(ApplyLessonPage(state, 1, 2));  // page 3: the absorbed form is the page's to set, so it is off again
  CHECK_FALSE(state.pipeline.show_absorbed);
  REQUIRE(ApplyLessonPage(state, 0, 4));  // kv_cache page 5: the output row
  CHECK(state.view == View::Decode);
  CHECK(state.decode.token == 3);
  CHECK(state.decode.scroll_to_section == 4);
  REQUIRE(ApplyLessonPage(state, 0, 0));  // page 1: the top of the view
  CHECK(state.decode.scroll_to_section == 0);
  // The projection drawn is the page's, whatever the user picked before: GQA's keys, then MLA's latent (the first).
  state.pipeline.projection = 2;
  REQUIRE(ApplyLessonPage(state, 1, 0));  // variants page 1: KV head 0's keys
  CHECK(state.pipeline.projection == 1);
  REQUIRE(ApplyLessonPage(state, 1, 2));  // page 3: the latent
  CHECK(state.pipeline.projection == 0);
}

TEST_CASE("a page's projection stands where the projections step draws it: after MLA's latent") {
  CHECK(projection_slot("", false) == 0);
  CHECK(projection_slot("q", false) == 0);
  CHECK(projection_slot("v", false) == 2);
  CHECK(projection_slot("latent", false) == -1);
  CHECK(projection_slot("latent", true) == 0);
  CHECK(projection_slot("k", true) == 2);
  CHECK(projection_slot("K", true) == -1);
}
