// The Model view without a window (ui/logic/model_document, model_text, AppState's layer visits): the model as a
// document with undo, its refusals, its files, the texts the view shows, and a layer opened in the pipeline.
#include <fstream>

#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/text_format.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/document_files.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/lessons.h"
#include "ui/logic/model_text.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

const fs::path kTiny = fs::path(ATTN_ASSETS_DIR) / "models" / "tiny.json";

void open_tiny(ModelDocument& doc) {
  const Model m = load_model_file(kTiny);
  REQUIRE_FALSE(doc.open({m, starting_tokens(m)}, kTiny).has_value());
}

std::vector<std::string> words(const std::string& text) { return split_words(text); }

}  // namespace

TEST_CASE("a model document starts on its vocabulary's first tokens and computes the forward pass") {
  ModelDocument doc;
  open_tiny(doc);
  CHECK(doc.input().tokens == words("<s> a b c d e f g"));
  CHECK(doc.trace().layers.size() == 2);
  CHECK(doc.trace().probabilities.rows() == 8);
  CHECK(doc.trace().probabilities.cols() == 8);
  CHECK_FALSE(doc.dirty());
  CHECK(doc.path() == kTiny);
  CHECK(doc.resolved().embedding.has_value());     // drawn from the seed
  CHECK_FALSE(doc.model().embedding.has_value());  // but the file gives none
  Model few = load_model_file(kTiny);
  few.max_positions = 3;
  few.W_P.reset();
  CHECK(starting_tokens(few) == words("<s> a b"));
}

TEST_CASE("model edits are undone and redone exactly, a gesture is one step, and a refused edit changes nothing") {
  ModelDocument doc;
  open_tiny(doc);
  const Matrix first_logits = doc.trace().logits;
  CHECK_FALSE(doc.edit([](ModelInput& in) { in.tokens = words("a b a"); }).has_value());
  CHECK(doc.trace().tokens == words("a b a"));
  CHECK(doc.dirty());
  // A drag of one widget (gesture 7): three edits, one undo step.
  for (int seed = 2; seed <= 4; ++seed)
    CHECK_FALSE(doc.edit([seed](ModelInput& in) { in.model.seed = static_cast<std::uint64_t>(seed); }, 7).has_value());
  CHECK(doc.model().seed == 4);
  const std::optional<std::string> refused = doc.edit([](ModelInput& in) { in.tokens = words("a zebra"); });
  REQUIRE(refused.has_value());
  CHECK(*refused == "Not applied: tokens[1]: \"zebra\" is not in the vocabulary of 8 tokens");
  CHECK(doc.trace().tokens == words("a b a"));
  CHECK(doc.edit([](ModelInput& in) { in.tokens.clear(); }) ==
        std::optional<std::string>("Not applied: tokens: expected at least one token but found none"));
  CHECK(doc.edit([](ModelInput& in) { in.model.d_model = 0; })->starts_with("Not applied: d_model: "));
  CHECK(doc.model().d_model == 8);

  REQUIRE(doc.undo());  // the drag
  CHECK(doc.model().seed == 1);
  CHECK(doc.trace().tokens == words("a b a"));
  REQUIRE(doc.undo());  // the tokens
  CHECK(doc.trace().tokens == words("<s> a b c d e f g"));
  CHECK(doc.trace().logits == first_logits);
  CHECK_FALSE(doc.dirty());
  CHECK_FALSE(doc.undo());
  REQUIRE(doc.redo());
  REQUIRE(doc.redo());
  CHECK(doc.model().seed == 4);
  CHECK_FALSE(doc.redo());
}

TEST_CASE("the model document's undo history keeps at most its bound of bytes") {
  const Model m = load_model_file(kTiny);
  ModelInput one{m, starting_tokens(m)};
  one.model.embedding = Matrix::Zero(8, 8);
  CHECK(model_input_bytes(one) == 8 * 8 * 8 + 10);  // the given embedding and the tokens' 10 characters
  ModelDocument doc(4 * 522);
  REQUIRE_FALSE(doc.open({m, starting_tokens(m)}, kTiny).has_value());
  for (int i = 1; i <= 10; ++i)
    REQUIRE_FALSE(doc.edit([i](ModelInput& in) { in.model.embedding = Matrix::Constant(8, 8, i); }).has_value());
  int depth = 0;
  while (doc.undo()) ++depth;
  CHECK(depth == 4);                             // 4 x 522 bytes
  CHECK((*doc.model().embedding)(0, 0) == 6.0);  // the first state and edits 1-5 fell off the end
}

TEST_CASE("re-seeding a model moves to the next seed and draws every weight from it") {
  Model m = load_model_file(kTiny);
  m.embedding = Matrix::Zero(8, 8);
  m.layers[1].own.W_1 = Matrix::Zero(8, 32);
  m.layers[0].weights.W_Q = Matrix::Zero(8, 8);
  reseed_model(m);
  CHECK(m.seed == 2);
  CHECK_FALSE(m.embedding.has_value());
  CHECK_FALSE(m.layers[1].own.W_1.has_value());
  CHECK_FALSE(m.layers[0].weights.W_Q.has_value());
}

TEST_CASE("the Model view's texts: the model in a line, each layer's parts in order, a head's weight, predictions") {
  ModelDocument doc;
  open_tiny(doc);
  CHECK(doc.parameters() == 2080);
  CHECK(model_summary(doc.model(), doc.parameters()) ==
        "2 layers \u00B7 d_model 8 \u00B7 Pre-LN \u00B7 GELU feed-forward (d_ff 32) \u00B7 learned positions \u00B7 "
        "2,080 parameters");
  Model variant = doc.model();
  for (ModelLayer& l : variant.layers) l.attention.variant = Variant::Mqa;
  CHECK(model_summary(variant, 2080) ==
        "2 layers \u00B7 d_model 8 \u00B7 MQA \u00B7 Pre-LN \u00B7 GELU feed-forward "
        "(d_ff 32) \u00B7 learned positions \u00B7 2,080 parameters");
  variant.layers[1].attention.variant = Variant::Mla;
  variant.layers[1].attention.latent_dim = 4;
  CHECK(contains(model_summary(variant, 1), " \u00B7 attention variants mixed \u00B7 "));
  variant.layers[0] = variant.layers[1];
  CHECK(contains(model_summary(variant, 1), " \u00B7 MLA (latent 4) \u00B7 "));
  Model m = doc.resolved();
  const LayerTrace& t = doc.trace().layers[1];
  const auto titles = [&](const Model& model) {
    std::string s;
    for (const auto& row : layer_parts(model, t)) {
      for (const StreamPart& p : row) s += p.title + (p.attention ? "*" : "") + " | ";
      s += "/ ";
    }
    return s;
  };
  CHECK(titles(m) == "LN1(x) | Attn(LN1(x))* | x + Attn(LN1(x)) | / LN2(x) | FFN(LN2(x)) | x + FFN(LN2(x)) | / ");
  CHECK(layer_parts(m, t)[0][1].values == &t.attention.output);
  CHECK(layer_parts(m, t)[1][2].values == &t.residual_out);
  m.norm = Norm::Post;
  CHECK(titles(m) == "Attn(x)* | LN1(x + Attn(x)) | / FFN(x) | LN2(x + FFN(x)) | / ");
  m.norm = Norm::None;
  m.ffn.kind = FfnKind::None;
  CHECK(titles(m) == "Attn(x)* | x + Attn(x) | / ");

  CHECK(head_weight_text(1, 0, doc.input().tokens, 3, 1, 0.41234567) ==
        "layer 1, head 0: \"c\" (query 3) looks at \"a\" (key 1) with weight 0.412");

  // An overview of 130 tokens in 64 x 64 blocks: block i covers tokens [i 130 / 64, (i + 1) 130 / 64).
  Matrix overview = Matrix::Zero(64, 64);
  overview(63, 1) = 0.0123456;
  const std::vector<std::string> many(130, "a");
  CHECK(head_cell_text(2, 5, many, overview, 63, 1) ==
        "layer 2, head 5: queries 127\u2013129 look at keys 2\u20133 with mean weight 0.012");
  CHECK(head_cell_text(1, 0, doc.input().tokens, Matrix::Constant(8, 8, 0.41234567), 3, 1) ==
        head_weight_text(1, 0, doc.input().tokens, 3, 1, 0.41234567));  // the weights themselves
  AttentionConfig gqa;
  gqa.variant = Variant::Gqa;
  gqa.heads = 9;
  gqa.kv_heads = 3;
  CHECK(kv_group_text(gqa, 4) == "reads key/value head 1 with heads 3\u20135");
  gqa.variant = Variant::Mqa;
  CHECK(kv_group_text(gqa, 8) == "reads key/value head 0 with all 9 heads");
  gqa.variant = Variant::Mha;
  CHECK(kv_group_text(gqa, 8).empty());

  // The top 3 after position 7 against a sort of the row done here.
  const Matrix& p = doc.trace().probabilities;
  std::vector<std::pair<double, int>> row;
  for (int v = 0; v < 8; ++v) row.push_back({-p(7, v), v});
  std::sort(row.begin(), row.end());
  const std::vector<Prediction> top = top_predictions(doc.trace(), doc.model().vocab, 7, 3);
  REQUIRE(top.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(top[i].token == doc.model().vocab[static_cast<std::size_t>(row[i].second)]);
    CHECK(top[i].probability == -row[i].first);
  }
  CHECK(top_predictions(doc.trace(), doc.model().vocab, 0, 20).size() == 8);
}

TEST_CASE("a layer of the model opens in the pipeline on its real inputs, and the way back restores the document") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  open_tiny(state.model_doc);
  REQUIRE(state.scenario().seed == 7);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 5; }));         // something to undo after the visit
  save_document(state, fresh_dir("model-visit") / "cat.json");  // a visit starts from a saved document
  state.view = View::Model;
  REQUIRE_FALSE(state.model_doc.show_layer(1).has_value());  // its heads kept whole, to compare with the pipeline's
  REQUIRE(state.visit_model_layer(1));
  CHECK(state.view == View::Pipeline);
  REQUIRE(state.layer_visit().has_value());
  CHECK(state.layer_visit()->layer == 1);
  CHECK(state.layer_visit()->model_name == "tiny");
  CHECK(state.scenario().name == "tiny, layer 1");
  const LayerTrace& layer = state.model_doc.trace().layers[1];
  CHECK(state.scenario().input.embeddings == layer.attention.x);
  state.wait();
  state.poll();
  REQUIRE(state.trace().heads.size() == layer.attention.heads.size());
  for (std::size_t h = 0; h < layer.attention.heads.size(); ++h)
    CHECK(state.trace().heads[h].weights() == layer.attention.heads[h].weights());
  CHECK(state.trace().output == layer.attention.output);
  CHECK_FALSE(state.can_undo());

  REQUIRE(state.edit([](Scenario& s) { s.attention.scale = false; }));  // an edit of the layer, then back
  state.end_layer_visit();
  CHECK_FALSE(state.layer_visit().has_value());
  CHECK(state.view == View::Model);
  CHECK(state.scenario().name == "the cat sat");
  CHECK(state.scenario().seed == 5);
  CHECK(state.scenario().attention.scale);
  CHECK_FALSE(state.document().dirty());
  REQUIRE(state.undo());  // its history came back too
  CHECK(state.scenario().seed == 7);

  CHECK_FALSE(state.visit_model_layer(2));
  CHECK(state.message == "No layer 2 in the model to open in the pipeline");
  REQUIRE(state.visit_model_layer(0));
  open_document(state, asset("the_lazy_dog.json"));  // another document ends the visit
  CHECK_FALSE(state.layer_visit().has_value());
  CHECK(state.scenario().name == "the lazy dog");
}

TEST_CASE("undo, redo and re-seed act on the model in the Model view and on the document elsewhere") {
  AppState state(cat_sat(), "");
  open_tiny(state.model_doc);
  state.view = View::Model;
  state.reseed_in_view();
  CHECK(state.model_doc.model().seed == 2);
  CHECK(state.scenario().seed == 7);
  CHECK(state.can_undo_in_view());
  CHECK_FALSE(state.can_redo_in_view());
  REQUIRE(state.undo_in_view());
  CHECK(state.model_doc.model().seed == 1);
  REQUIRE(state.redo_in_view());
  CHECK(state.model_doc.model().seed == 2);
  state.view = View::Pipeline;
  CHECK_FALSE(state.can_undo_in_view());
  state.reseed_in_view();
  CHECK(state.scenario().seed == 8);
  REQUIRE(state.undo_in_view());
  CHECK(state.scenario().seed == 7);
  CHECK(state.model_doc.model().seed == 2);
}

TEST_CASE("File > Open takes a model file into the Model view, and a saved model loads back the same") {
  const fs::path dir = fresh_dir("model-files");
  AppState state(cat_sat(), "");
  open_document(state, kTiny);
  CHECK(state.message.empty());
  CHECK(state.view == View::Model);
  REQUIRE(state.model_doc.loaded());
  CHECK(state.model_doc.model().name == "tiny");
  CHECK(state.scenario().name == "the cat sat");  // the document is not replaced
  REQUIRE_FALSE(state.model_doc.edit([](ModelInput& in) { in.model.name = "tiny, edited"; }).has_value());
  CHECK(state.model_doc.dirty());
  save_model_document(state, dir / "edited.json");
  CHECK(state.message == "Saved " + (dir / "edited.json").string());
  CHECK_FALSE(state.model_doc.dirty());
  CHECK(state.model_doc.path() == dir / "edited.json");
  CHECK(load_model_file(dir / "edited.json").name == "tiny, edited");

  std::ofstream(dir / "bad.json") << R"({"name": "bad", "vocab": ["a", "a"], "d_model": 2, "layers": [{}]})";
  open_document(state, dir / "bad.json");
  CHECK(state.message == "Could not open " + (dir / "bad.json").string() +
                             ": vocab[1]: \"a\" is already in the vocabulary (the current model is kept)");
  CHECK(state.model_doc.model().name == "tiny, edited");
  save_model_document(state, dir / "no such folder" / "x.json");
  CHECK(state.message.starts_with("Not saved: "));
}

TEST_CASE("split_words splits at runs of white space") {
  CHECK(split_words("  a b\t\tc\n") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_words("").empty());
  CHECK(split_words(" \t ").empty());
  CHECK(split_words("<s>") == std::vector<std::string>{"<s>"});
}

TEST_CASE(
    "a lesson page with a model opens it, or one of its layers in the pipeline, and the next page ends the visit") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  state.lesson.scenarios_dir = fs::path(ATTN_ASSETS_DIR) / "scenarios";
  state.lesson.lessons.push_back(
      load_lesson_file(fs::path(ATTN_ASSETS_DIR) / "lessons" / "10_model.json", state.lesson.scenarios_dir));
  REQUIRE(ApplyLessonPage(state, 0, 2));  // layer 1 of tiny
  CHECK(state.view == View::Pipeline);
  REQUIRE(state.layer_visit().has_value());
  CHECK(state.layer_visit()->layer == 1);
  CHECK(state.scenario().name == "tiny, layer 1");
  CHECK(state.model_doc.input().tokens == words("<s> a b c a b c"));
  REQUIRE(ApplyLessonPage(state, 0, 4));  // the Post-LN model on view model
  CHECK_FALSE(state.layer_visit().has_value());
  CHECK(state.view == View::Model);
  CHECK(state.scenario().name == "the cat sat");  // what was open before the visit
  CHECK(state.model_doc.model().name == "tiny post-LN");
  REQUIRE(ApplyLessonPage(state, 0, 5));
  CHECK(state.model_view.scroll_to_output);
  CHECK(state.model_doc.model().name == "tiny");
}

TEST_CASE(
    "what a view read before its own model edit stays readable until the frame ends, and bad shapes are refused") {
  ModelDocument doc;
  open_tiny(doc);
  const Model& before = doc.resolved();  // what the inputs panel holds while it draws
  const ModelTrace& trace = doc.trace();
  REQUIRE_FALSE(doc.edit([](ModelInput& in) { set_layer_count(in.model, 3); }).has_value());
  CHECK(before.layers.size() == 2);  // under ASan a freed model fails here
  CHECK(trace.layers.size() == 2);
  CHECK(doc.resolved().layers.size() == 3);
  std::optional<std::string> failure;
  doc.poll(failure);
  CHECK(doc.edit([](ModelInput& in) { set_layer_count(in.model, 0); }) ==
        std::optional<std::string>("Not applied: layers: must be >= 1 (found 0)"));
  CHECK(doc.model().layers.size() == 3);
}

TEST_CASE("a model's positions: added before the layers, or turned inside every one of them") {
  Model m = load_model_file(kTiny);
  for (const Positions p : {Positions::Sinusoidal, Positions::None, Positions::Rope, Positions::Learned}) {
    set_model_positions(m, p);
    drop_unfit_model_weights(m);
    CAPTURE(to_string(p));
    CHECK(m.positions == p);
    for (const ModelLayer& l : m.layers)
      CHECK(l.attention.positions == (p == Positions::Rope ? Positions::Rope : Positions::None));
    CHECK_NOTHROW(run_model(resolve_model(m), words("<s> a b")));
  }
}

TEST_CASE("a visit keeps the document's unsaved changes for the way back, and from layer to layer leads to it") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  open_tiny(state.model_doc);
  REQUIRE(state.edit([](Scenario& s) { s.seed = 5; }));  // not saved
  REQUIRE(state.visit_model_layer(1));
  CHECK_FALSE(state.document().dirty());
  CHECK(state.recoverable_document().dirty());  // the recovery file keeps the unsaved document
  CHECK(state.recoverable_document().scenario->seed == 5);
  REQUIRE(state.visit_model_layer(0));
  CHECK(state.layer_visit()->layer == 0);
  state.end_layer_visit();
  CHECK(state.scenario().name == "the cat sat");
  CHECK(state.scenario().seed == 5);
  CHECK(state.document().dirty());
  CHECK(&state.recoverable_document() == &state.document());
}

TEST_CASE("a weight edit keeps the other weights as drawn: the same model as resolving it again, bit for bit") {
  ModelDocument doc;
  open_tiny(doc);
  const auto w_1 = [](Model& m) -> SharedMatrix& { return m.layers[1].own.W_1; };
  Matrix edited = *doc.resolved().layers[1].own.W_1;
  edited(2, 3) = 0.75;
  REQUIRE_FALSE(doc.edit_weight(w_1, edited, 9).has_value());
  edited(2, 4) = -0.5;
  REQUIRE_FALSE(doc.edit_weight(w_1, edited, 9).has_value());  // the same drag: one undo step
  CHECK(doc.model().layers[1].own.W_1 == edited);
  const Model again = resolve_model(doc.model());
  CHECK(model_to_text(doc.resolved()) == model_to_text(again));
  CHECK(doc.trace().logits == run_model(again, doc.input().tokens).logits);
  Matrix bad = edited;
  bad(0, 0) = std::nan("");
  CHECK(doc.edit_weight(w_1, bad)->starts_with("Not applied: layers[1].weights.W_1"));
  REQUIRE(doc.undo());
  CHECK_FALSE(doc.model().layers[1].own.W_1.has_value());
  CHECK(model_to_text(doc.resolved()) == model_to_text(resolve_model(doc.model())));
}

namespace {

// Two layers of d_model 128 with a GELU FFN of 512: 400K parameters at 8 tokens, over kModelBackgroundWork.
Model wide_model(const std::string& norm = "pre") {
  return parse_model(R"({"name": "wide", "vocab": ["<s>", "a", "b", "c", "d", "e", "f", "g"], "d_model": 128,
    "max_positions": 16, "positions": "learned", "norm": ")" +
                     norm + R"(", "ffn": {"kind": "gelu", "d_ff": 512},
    "layers": [{"attention": {"heads": 2, "head_dim": 64}}, {"attention": {"heads": 2, "head_dim": 64}}]})");
}

std::optional<std::string> poll_after_wait(ModelDocument& doc) {
  doc.wait();
  std::optional<std::string> failure;
  doc.poll(failure);
  return failure;
}

}  // namespace

TEST_CASE("a model's forward pass is computed on the worker when it is big: the last one stays shown until then") {
  CHECK(model_work(load_model_file(kTiny), 2080, 8) == 2080 * 8 + 2 * (2 * 2 * 4 * 8 * 8));
  ModelDocument doc;
  const Model wide = wide_model();
  REQUIRE_FALSE(doc.open({wide, starting_tokens(wide)}, "").has_value());
  CHECK(doc.parameters() ==
        8 * 128 + 16 * 128 + 2 * 128 + 128 * 8 + 2 * (4 * 128 * 128 + 4 * 128 + 2 * 128 * 512 + 512 + 128));
  REQUIRE(model_work(doc.resolved(), doc.parameters(), 8) >= kModelBackgroundWork);
  CHECK_FALSE(doc.computing());  // opening computes before it returns
  CHECK(doc.trace().tokens == words("<s> a b c d e f g"));
  const std::uint64_t opened = doc.shown().ticket;

  const auto w_q = [](Model& m) -> SharedMatrix& { return m.layers[0].weights.W_Q; };
  Matrix edited = *doc.resolved().layers[0].weights.W_Q;
  edited(0, 0) = 3.0;
  REQUIRE_FALSE(doc.edit_weight(w_q, edited, 4).has_value());
  CHECK((*doc.resolved().layers[0].weights.W_Q)(0, 0) == 3.0);         // the newest state, for the next edit
  CHECK((*doc.shown().resolved->layers[0].weights.W_Q)(0, 0) != 3.0);  // what is drawn: the last forward pass
  CHECK(doc.shown().ticket == opened);
  REQUIRE_FALSE(doc.edit_tokens(words("a b a b a b"), 5).has_value());
  CHECK(doc.input().tokens == words("a b a b a b"));
  CHECK(doc.computing());
  CHECK_FALSE(poll_after_wait(doc).has_value());
  CHECK_FALSE(doc.computing());
  CHECK(doc.shown().ticket == doc.ticket());
  CHECK(doc.trace().tokens == words("a b a b a b"));
  const Model again = resolve_model(doc.model());
  CHECK(doc.trace().logits == run_model(again, words("a b a b a b")).logits);  // as if computed from the file
  CHECK(doc.shown().input->tokens == words("a b a b a b"));

  // Undone to the first state: its forward pass is the first one again.
  REQUIRE(doc.undo());
  REQUIRE(doc.undo());
  CHECK_FALSE(poll_after_wait(doc).has_value());
  CHECK(doc.trace().tokens == words("<s> a b c d e f g"));
  CHECK(doc.trace().logits == run_model(resolve_model(wide), starting_tokens(wide)).logits);
}

TEST_CASE("a forward pass that overflows is refused in the frame, and reported by the worker with the last one kept") {
  ModelDocument small;  // without a norm the stream grows from layer to layer
  Model tiny = load_model_file(kTiny);
  tiny.norm = Norm::None;
  REQUIRE_FALSE(small.open({tiny, starting_tokens(tiny)}, "").has_value());
  const auto w_2 = [](Model& m) -> SharedMatrix& { return m.layers[0].own.W_2; };
  Matrix huge = *small.resolved().layers[0].own.W_2;
  huge.setConstant(1e12);
  const std::optional<std::string> refused = small.edit_weight(w_2, huge);
  REQUIRE(refused.has_value());
  CHECK_FALSE(small.can_undo());

  ModelDocument doc;
  const Model wide = wide_model("none");
  REQUIRE_FALSE(doc.open({wide, starting_tokens(wide)}, "").has_value());
  const Matrix logits = doc.trace().logits;
  Matrix big = *doc.resolved().layers[0].own.W_2;
  big.setConstant(1e12);
  REQUIRE_FALSE(doc.edit_weight(w_2, big).has_value());  // accepted: only the forward pass can tell
  const std::optional<std::string> failure = poll_after_wait(doc);
  REQUIRE(failure.has_value());
  const std::string grows = "), beyond the 1e12 attention accepts: these weights grow it without bound";
  CHECK(refused->starts_with("Not applied: layers[1]: the residual stream reaches "));
  CHECK(refused->ends_with(grows));
  CHECK(failure->starts_with("layers[1]: the residual stream reaches "));  // the status line says where
  CHECK(failure->ends_with(grows));
  CHECK_FALSE(doc.computing());
  CHECK(doc.trace().logits == logits);  // the last complete one, never an infinity
  REQUIRE(doc.undo());
  CHECK(doc.computing());
  CHECK_FALSE(poll_after_wait(doc).has_value());
  CHECK(doc.trace().logits == logits);
}

TEST_CASE("a weight edit names the weight it refuses by its path in the file") {
  Model m = resolve_model(load_model_file(kTiny));
  CHECK(weight_field(m, &m.embedding) == "embedding");
  CHECK(weight_field(m, &m.layers[1].own.W_1) == "layers[1].weights.W_1");
  CHECK(weight_field(m, &m.layers[0].weights.W_O) == "layers[0].weights.W_O");
  CHECK(weight_field(m, &m.layers[0].weights.W_DQ) == "layers[0].weights.W_DQ");
  const SharedMatrix elsewhere;
  CHECK(weight_field(m, &elsewhere).empty());
}

TEST_CASE("the window title names the document the view on screen edits: the model in the Model view") {
  AppState state(cat_sat(), asset("the_cat_sat.json"));
  open_model_document(state, kTiny);
  REQUIRE(state.view == View::Model);
  CHECK(state.window_title() == "Attention Lab \u2014 tiny (tiny.json)");
  REQUIRE_FALSE(state.model_doc.edit_tokens(words("a b")).has_value());
  CHECK(state.window_title() == "Attention Lab \u2014 tiny (tiny.json) \u2022 unsaved");
  state.view = View::Pipeline;
  CHECK(state.window_title() == "Attention Lab \u2014 the cat sat (the_cat_sat.json)");
}

TEST_CASE("the Model view keeps the shown layer's heads whole and computes another's when it is shown") {
  ui::ModelDocument doc;
  const Model tiny = load_model_file(std::string(ATTN_ASSETS_DIR) + "/models/tiny.json");
  REQUIRE_FALSE(doc.open(ui::model_input(tiny, "<s> a b c a b"), "tiny.json").has_value());
  CHECK(doc.shown().layer == 0);
  CHECK(doc.trace().layers[0].kept);
  CHECK(doc.trace().layers[0].attention.heads.size() == 2);
  CHECK_FALSE(doc.trace().layers[1].kept);
  CHECK(doc.trace().layers[1].attention.heads.empty());
  CHECK(doc.trace().layers[1].weights_overview.size() == 2);  // what the head grid draws of it
  const ModelTrace all = run_model(doc.resolved(), doc.input().tokens);
  REQUIRE_FALSE(doc.show_layer(1).has_value());
  std::optional<std::string> failure;
  doc.wait();
  doc.poll(failure);
  CHECK_FALSE(failure.has_value());
  CHECK(doc.shown().layer == 1);
  CHECK_FALSE(doc.trace().layers[0].kept);
  REQUIRE(doc.trace().layers[1].kept);
  for (std::size_t h = 0; h < 2; ++h)
    CHECK(doc.trace().layers[1].attention.heads[h].weights() == all.layers[1].attention.heads[h].weights());
  // An edit keeps the layer shown.
  REQUIRE_FALSE(doc.edit_tokens(split_words("<s> a b")).has_value());
  doc.wait();
  doc.poll(failure);
  CHECK(doc.trace().layers[1].kept);
  CHECK_FALSE(doc.trace().layers[0].kept);
}

TEST_CASE("a lesson page names the Model view's parts it outlines: input, output, a layer or one sublayer's row") {
  using P = ModelPart::Place;
  CHECK(parse_model_part("input") == ModelPart{P::Input});
  CHECK(parse_model_part("output") == ModelPart{P::Output});
  CHECK(parse_model_part("layer 0") == ModelPart{P::Layer, 0, -1});
  CHECK(parse_model_part("layer 0 attention") == ModelPart{P::Layer, 0, 0});
  CHECK(parse_model_part("layer 12 ffn") == ModelPart{P::Layer, 12, 1});
  for (const char* bad : {"", "Input", " input", "layer", "layer ", "layer -1", "layer +1", "layer x", "layer 1 ",
                          "layer 1 attn", "layers 1", "layer 1ffn", "layer 99999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_model_part(bad).has_value());
  }
  const std::vector<ModelPart> both_rows{{P::Layer, 0, 0}, {P::Layer, 0, 1}};
  CHECK(outlines(both_rows, {P::Layer, 0, 0}));
  CHECK(outlines(both_rows, {P::Layer, 0, 1}));
  CHECK_FALSE(outlines(both_rows, {P::Layer, 1, 0}));
  CHECK_FALSE(outlines(both_rows, {P::Input}));
  const std::vector<ModelPart> layer1{{P::Layer, 1, -1}};
  CHECK(outlines(layer1, {P::Layer, 1, 1}));
  CHECK_FALSE(outlines(layer1, {P::Layer, 0, 1}));
  const std::vector<ModelPart> attention0{{P::Layer, 0, 0}};
  CHECK_FALSE(outlines(attention0, {P::Layer, 0, 1}));
  const std::vector<ModelPart> ends{{P::Input}};
  CHECK(outlines(ends, {P::Input}));
  CHECK_FALSE(outlines(ends, {P::Output}));
  CHECK_FALSE(outlines({}, {P::Input}));
}

TEST_CASE("every token row of a box keeps its label, in smaller type before any is skipped") {
  // A line of 20 px, labels down to 16 px, a budget of 200 px.
  CHECK(fit_row_labels(7, 200, 20, 16) == RowLabelFit{20, 1.0f, 1});       // room for a line each
  CHECK(fit_row_labels(11, 200, 20, 16) == RowLabelFit{18, 0.9f, 1});      // 18.18 px snapped to 18: smaller type
  CHECK(fit_row_labels(32, 200, 20, 16) == RowLabelFit{16, 0.8f, 1});      // tiny's most: the box grows instead
  CHECK(fit_row_labels(64, 200, 20, 16) == RowLabelFit{16, 0.8f, 1});      // still every label
  CHECK(fit_row_labels(80, 1000, 20, 16) == RowLabelFit{12.5f, 0.8f, 2});  // past 64 rows: every other
  CHECK(fit_row_labels(2048, 200, 20, 16) == RowLabelFit{3, 0.8f, 6});     // rows of 3 px, every 6th labelled
  CHECK(fit_row_labels(0, 200, 20, 16) == RowLabelFit{20, 1.0f, 1});
}

TEST_CASE("a box's feature indices: every column while they fit, else every 2nd, 5th, 10th, ...") {
  CHECK(column_label_every(22, 15) == 1);
  CHECK(column_label_every(10, 15) == 2);
  CHECK(column_label_every(4, 15) == 5);
  CHECK(column_label_every(2.5f, 24) == 10);
  CHECK(column_label_every(0.5f, 30) == 100);
}

TEST_CASE("a box's column labels take the body font where its cells have room, smaller down to a floor") {
  CHECK(column_label_scale(30, 20, 6, 0.8f) == 1.0f);  // room to spare: the body font, no larger
  CHECK(column_label_scale(26, 20, 6, 0.8f) == 1.0f);  // just room
  CHECK(column_label_scale(24, 20, 6, 0.8f) == 0.9f);  // 18 px for a label 20 px wide at the body font
  CHECK(column_label_scale(10, 20, 6, 0.8f) == 0.8f);  // no smaller than the floor (column_label_every skips)
  CHECK(column_label_scale(10, 0, 6, 0.8f) == 1.0f);   // nothing to measure
}

TEST_CASE("a scrolling column ends between its items, not on half a line") {
  const std::vector<float> breaks = {100, 200, 300, 450, 520, 700};
  CHECK(fold_height(breaks, 0, 500) == 450);    // the item ending at 520 is left wholly below
  CHECK(fold_height(breaks, 50, 500) == 470);   // scrolled: the ends move up
  CHECK(fold_height(breaks, 250, 500) == 500);  // the rest in sight: the whole height
  CHECK(fold_height({}, 0, 500) == 500);        // nothing measured yet
  const std::vector<float> tall = {100, 600};
  CHECK(fold_height(tall, 0, 500) == 500);  // an item taller than half the column is cut, the column not halved
  const std::vector<float> unordered = {520, 300, 450};
  CHECK(fold_height(unordered, 0, 500) == 450);
}

TEST_CASE("the heads' thumbnails are as large as the room allows, layers side by side where that makes them larger") {
  // tiny (2 layers of 2 heads) beside the column at 1280x720 presentation: all four heads in a row.
  CHECK(fit_head_grid(2, 2, 590, 213, 28, 8) == HeadGridFit{2, 141});
  // ... at 1600x900, taller than wide: a row per layer.
  CHECK(fit_head_grid(2, 2, 540, 360, 26, 8) == HeadGridFit{1, 154});
  // 16 heads in 300 px: the smallest thumbnail, the column scrolls; ties to a layer a row.
  CHECK(fit_head_grid(2, 16, 300, 300, 28, 8) == HeadGridFit{1, kMinHeadCell});
  CHECK(fit_head_grid(1, 1, 1000, 1000, 28, 8) == HeadGridFit{1, kMaxHeadCell});
  CHECK(fit_head_grid(0, 0, 1000, 1000, 28, 8) == HeadGridFit{1, kMaxHeadCell});  // an empty model reads as one head
}
