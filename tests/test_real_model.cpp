// A model folder opened in the window (ui/logic/real_model.h): its text and ablation as an undoable document, computed
// on the worker, a text it cannot read said while the last result stays.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "app/cli/args.h"
#include "app/gui/gui_options.h"
#include "app/gui/start_state.h"
#include "checkpoint_folders.h"
#include "helpers.h"
#include "ui/logic/app_state.h"
#include "ui/logic/document_files.h"
#include "ui/logic/hub_scan.h"
#include "ui/logic/real_model.h"

namespace attn::test {
namespace {

// Waits for the worker and shows what it gave; returns why the newest state failed, if it did.
std::optional<std::string> settle(ui::RealModelDocument& doc) {
  doc.wait();
  std::optional<std::string> failure;
  doc.poll(failure);
  return failure;
}

}  // namespace

TEST_CASE("a model folder opened in the window: the text's pieces, each next token's loss and every head's scores") {
  ui::RealModelDocument doc;
  doc.open(gpt2_folder("window-zero", gpt2_tensors()), "abc");
  CHECK_FALSE(settle(doc));
  REQUIRE(doc.loaded());
  const ui::RealModelRun& r = doc.shown();
  CHECK(r.text.pieces == std::vector<std::string>{"a", "b", "c"});
  CHECK(r.text.ids == std::vector<int>{0, 1, 2});
  REQUIRE(r.losses.size() == 2);
  CHECK(r.losses[1] == doctest::Approx(std::log(4.0)).epsilon(1e-15));  // zero weights: every token 1/4
  REQUIRE(r.trace->layers.size() == 1);
  REQUIRE(r.trace->layers[0].head_scores.size() == 2);
  CHECK(*r.trace->layers[0].head_scores[0].previous_token == doctest::Approx(0.5 * (1.0 / 2 + 1.0 / 3)));
  CHECK_FALSE(r.trace->layers[0].head_scores[0].induction);  // no token repeats
  CHECK(r.trace->layers[0].weights_overview.size() == 2);
  CHECK(r.baseline == nullptr);
  CHECK(ui::progress_text(doc.progress()).empty());
}

TEST_CASE("the window's ablation is a step of the document: the unablated run beside it, undone like an edit") {
  ui::RealModelDocument doc;
  doc.open(gpt2_folder("window-ablate", gpt2_tensors()), "aba");
  settle(doc);
  doc.set_ablation({.heads = {{0, 1}}, .mode = AblationMode::Mean});
  CHECK_FALSE(settle(doc));
  REQUIRE(doc.shown().baseline != nullptr);
  CHECK(doc.shown().baseline_losses.size() == 2);
  const std::shared_ptr<const ModelTrace> unablated = doc.shown().baseline;
  CHECK(doc.shown().trace->layers[0].attention.ablated_heads == std::vector<int>{1});
  CHECK(*doc.shown().trace->layers[0].head_scores[0].duplicate_token == doctest::Approx(1.0 / 3));
  REQUIRE(doc.undo());
  CHECK(doc.state().ablation.empty());
  settle(doc);
  CHECK(doc.shown().baseline == nullptr);
  CHECK(doc.shown().trace == unablated);  // the unablated run shown again, not run again
  REQUIRE(doc.redo());
  CHECK(doc.ablated());
}

TEST_CASE("the window's ablation is kept in order and held to the model's heads") {
  ui::RealModelDocument doc;
  doc.open(gpt2_folder("window-heads", gpt2_tensors()), "ab");
  settle(doc);
  doc.set_ablation({.heads = {{0, 1}, {0, 0}, {0, 1}}});
  CHECK(doc.state().ablation.heads == std::vector<HeadRef>{{0, 0}, {0, 1}});
  CHECK(doc.state().ablation.ablates({0, 1}));
  CHECK_FALSE(settle(doc));
  doc.set_ablation({.heads = {{9, 0}}});
  const std::optional<std::string> failure = settle(doc);
  REQUIRE(failure);
  CHECK(*failure == "ablation: head 9.0 is not one of the model's");
}

TEST_CASE("another folder opened: its results name it, and a text it refuses is said without the path") {
  ui::RealModelDocument doc;
  doc.open(gpt2_folder("window-first", gpt2_tensors()), "ab");
  settle(doc);
  const std::string second = gpt2_folder("window-second", gpt2_tensors());
  doc.open(second, "abcd");  // 4 tokens, 3 positions
  const std::optional<std::string> refused = settle(doc);
  REQUIRE(refused);
  CHECK(*refused == "text: 4 tokens, more than the model's 3 positions (config.json's n_positions)");
  CHECK(contains(doc.shown().folder.string(), "window-first"));  // the last result stays
  doc.set_text("ba");
  CHECK_FALSE(settle(doc));
  CHECK(doc.shown().folder == second);
  CHECK(doc.shown().text.pieces == std::vector<std::string>{"b", "a"});
}

TEST_CASE("a text the model cannot read is said, and the last result stays on screen") {
  ui::RealModelDocument doc;
  doc.open(gpt2_folder("window-long", gpt2_tensors()), "ab");
  settle(doc);
  doc.set_text("abcd", 1);
  doc.set_text("abcda", 1);  // typing: one undo step
  const std::optional<std::string> failure = settle(doc);
  REQUIRE(failure);
  CHECK(*failure == "text: 5 tokens, more than the model's 3 positions (config.json's n_positions)");
  CHECK(doc.failure() == *failure);
  CHECK(doc.shown().text.pieces == std::vector<std::string>{"a", "b"});
  doc.end_gesture();
  REQUIRE(doc.undo());
  CHECK(doc.state().text == "ab");
  CHECK_FALSE(doc.can_undo());
  CHECK_FALSE(settle(doc));
  CHECK(doc.failure().empty());

  ui::RealModelDocument missing;
  missing.open(std::filesystem::temp_directory_path() / "attention-lab-no-such-model", "ab");
  const std::optional<std::string> why = settle(missing);
  REQUIRE(why);
  INFO(*why);
  CHECK(contains(*why, "attention-lab-no-such-model"));
  CHECK_FALSE(missing.loaded());
}

// A vocabulary of 100 pieces: id 0 the unknown token, 97 an added token that is not special, 98 and 99 special,
// 98 the template's BOS.
Tokenizer hundred_pieces() {
  Tokenizer t;
  for (int i = 0; i < 100; ++i) {
    t.pieces.push_back("t" + std::to_string(i));
    t.vocab[t.pieces.back()] = i;
  }
  t.unk = 0;
  t.added = {{.id = 97, .content = "t97"},
             {.id = 98, .content = "<s>", .special = true},
             {.id = 99, .content = "</s>", .special = true}};
  t.prefix = {98};
  return t;
}

TEST_CASE("a random repeated sequence: the BOS, 20 drawn ids, the same 20 again, never a special id") {
  const Tokenizer t = hundred_pieces();
  const std::vector<int> ids = ui::random_repeated_ids(t, 100, 1024, 1);
  REQUIRE(ids.size() == 41);
  CHECK(ids[0] == 98);
  // mt19937_64 seeded 1, each number mod 100, the unknown and special ids skipped: from the generator's published
  // definition (its 10,000th number from the default seed checked against the standard's 9981545732273789042).
  const std::vector<int> half{28, 62, 30, 46, 84, 9, 28, 65, 48, 24, 76, 63, 77, 7, 80, 33, 69, 10, 23, 83};
  CHECK(std::vector<int>(ids.begin() + 1, ids.begin() + 21) == half);
  CHECK(std::vector<int>(ids.begin() + 21, ids.end()) == half);
  CHECK(ui::random_repeated_ids(t, 100, 1024, 1) == ids);  // the same seed, the same draw
  const std::vector<int> second = ui::random_repeated_ids(t, 100, 1024, 2);
  CHECK(std::vector<int>(second.begin() + 1, second.begin() + 6) == std::vector<int>{28, 45, 17, 43, 36});
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const std::vector<int> drawn = ui::random_repeated_ids(t, 100, 1024, seed);
    for (std::size_t i = 1; i < drawn.size(); ++i) CHECK((drawn[i] != 0 && drawn[i] != 98 && drawn[i] != 99));
  }
  // Fewer embedding rows than pieces: drawn from the rows; fewer positions: a shorter half.
  for (const int id : ui::random_repeated_ids(t, 50, 1024, 3)) CHECK((id == 98 || id < 50));
  CHECK(ui::random_repeated_ids(t, 100, 12, 3).size() == 11);
  CHECK(ui::random_repeated_ids(t, 100, 1024, 3, 5).size() == 11);
  CHECK_THROWS_WITH(ui::random_repeated_ids(t, 100, 2, 3), "random sequence: the model's 2 positions hold no repeat");
  Tokenizer all_special = t;
  all_special.pieces.resize(1);
  CHECK_THROWS_WITH(ui::random_repeated_ids(all_special, 100, 1024, 3),
                    "random sequence: the vocabulary has no token that is not a special one");
}

TEST_CASE("a random repeated sequence in the window: its ids run as drawn, a typed text replaces them, undo") {
  ui::RealModelDocument doc;
  CHECK_FALSE(doc.set_random_repeat(7));
  CHECK(doc.failure() == "random sequence: open a model folder first");
  doc.open(gpt2_folder("window-random", gpt2_tensors()), "ab");
  settle(doc);
  doc.set_ablation({.heads = {{0, 1}}});
  settle(doc);
  // 3 positions, no BOS: one id drawn (mt19937_64 seeded 7: 3 mod 4, "d") and repeated.
  REQUIRE(doc.set_random_repeat(7));
  CHECK(doc.state().ids == std::vector<int>{3, 3});
  CHECK(doc.state().text == "dd");
  CHECK(ablation_list(doc.state().ablation) == "0.1");  // the heads knocked out stay
  CHECK_FALSE(settle(doc));
  CHECK(doc.shown().text.ids == std::vector<int>{3, 3});
  CHECK(doc.shown().text.pieces == std::vector<std::string>{"d", "d"});
  doc.set_ablation({});
  CHECK(doc.state().ids == std::vector<int>{3, 3});  // an ablation keeps the ids
  doc.set_text("ba");
  CHECK_FALSE(doc.state().ids);
  CHECK_FALSE(settle(doc));
  CHECK(doc.shown().text.ids == std::vector<int>{1, 0});
  REQUIRE(doc.undo());
  CHECK(doc.state().ids == std::vector<int>{3, 3});
  CHECK(doc.state().text == "dd");
  CHECK_FALSE(doc.ablated());
  REQUIRE(doc.undo());
  CHECK(doc.state().ids == std::vector<int>{3, 3});
  CHECK(doc.ablated());
  REQUIRE(doc.undo());
  CHECK_FALSE(doc.state().ids);
  CHECK(doc.state().text == "ab");
  CHECK_FALSE(settle(doc));
  CHECK(doc.shown().text.ids == std::vector<int>{0, 1});
}

TEST_CASE("the models on this computer are looked for on a worker: looking until done, the last list meanwhile") {
  const std::filesystem::path hub = fresh_dir("hub-scan");
  std::filesystem::create_directories(hub / "models--org--b");
  std::filesystem::create_directories(hub / "models--a");
  ui::HubScan scan;
  CHECK_FALSE(scan.looking());
  CHECK_FALSE(scan.poll());
  scan.start(hub, limits::kDefaultMemoryBudget);
  CHECK(scan.looking());
  CHECK_FALSE(scan.models());
  scan.wait();
  CHECK_FALSE(scan.looking());
  REQUIRE(scan.models());
  REQUIRE(scan.models()->size() == 2);
  CHECK((*scan.models())[0].id == "a");
  CHECK((*scan.models())[1].id == "org/b");
  CHECK((*scan.models())[1].why_not == "no snapshot: nothing was downloaded");
  std::filesystem::create_directories(hub / "models--c");
  scan.start(hub, limits::kDefaultMemoryBudget);
  CHECK(scan.looking());
  CHECK(scan.models()->size() == 2);  // the last list stays until the new one is taken
  scan.wait();
  CHECK(scan.models()->size() == 3);
  CHECK(scan.error().empty());
}

}  // namespace attn::test

namespace attn::test {

TEST_CASE("the window on --model FOLDER: the Real model view on --model-text, --ablate held to the model") {
  const std::string folder = gpt2_folder("window-start", gpt2_tensors());
  const auto start = [](const std::vector<std::string>& args) {
    std::ostringstream err;
    std::unique_ptr<ui::AppState> state = gui::start_state(gui::parse_gui_args(args), err);
    return std::pair{std::move(state), err.str()};
  };
  const auto [state, none] =
      start({"--model", folder, "--model-text", "abc", "--ablate", "0.1", "--ablate-mode", "mean"});
  REQUIRE(state);
  CHECK(none.empty());
  CHECK(state->view == ui::View::Real);
  CHECK(state->real_model.shown().text.pieces == std::vector<std::string>{"a", "b", "c"});
  CHECK(ablation_list(state->real_model.state().ablation) == "0.1");
  CHECK(state->real_model.state().ablation.mode == AblationMode::Mean);
  CHECK(state->model_doc.loaded());  // the Model view keeps the shipped model
  CHECK(state->window_title() ==
        "Attention Lab \u2014 " + std::filesystem::path(folder).filename().string() + " (ablated)");
  CHECK(start({"--model", folder, "--model-text", "ab", "--ablate", "0.2"}).second ==
        "attention-lab: --ablate: \"0.2\": layer 0 has 2 heads (0-1)\n");
  CHECK(start({"--model", folder, "--model-text", "abcd"}).second ==
        "attention-lab: " + folder +
            ": --model-text: 4 tokens, more than the model's 3 positions (config.json's n_positions)\n");
  CHECK(start({"--model-text", "abc"}).second ==
        "attention-lab: --model-text, --ablate, --ablate-mode, --measure and --to are for --model FOLDER (a Hugging "
        "Face model)\n");
  CHECK(start({"--model", folder, "--model-text", "ab", "--ablate", "0.1", "--ablate-mode", "half"}).second ==
        "attention-lab: --ablate-mode: must be zero | mean (found \"half\")\n");
  // Options that would do nothing on a folder.
  CHECK_THROWS_WITH(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--ablate-mode", "mean"}),
                    "--ablate-mode: only with --ablate LIST (the heads knocked out)");
  CHECK(start({"--model", folder, "--model-tokens", "a b"}).second ==
        "attention-lab: --model-tokens: for a model file; a model folder reads --model-text \"...\"\n");
  CHECK(
      start({"--model", folder, "--step", "softmax"}).second ==
      "attention-lab: --step: with --model FOLDER, only beside --layer L (that layer of the model in the pipeline)\n");
}

TEST_CASE("the memory views take the opened folder's model: its shape from config.json, first among the presets") {
  const std::string folder = gpt2_folder("window-shape", gpt2_tensors());
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state =
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "ab"}), err);
  REQUIRE(state);
  const std::size_t shipped = state->models.presets.size();
  state->poll();
  state->poll();  // listed once
  REQUIRE(state->models.presets.size() == shipped + 1);
  const ModelShape& m = state->models.presets.front();
  const std::string name = std::filesystem::path(folder).filename().string() + " (open)";
  CHECK(m.name == name);
  CHECK(m.source == "its config.json");
  CHECK(m.variant == Variant::Mha);
  CHECK(m.layers == 1);
  CHECK(m.d_model == 4);
  CHECK(m.heads == 2);
  CHECK(m.kv_heads == 2);
  CHECK(m.head_dim == 2);
  CHECK(state->models.preset == name);
  CHECK(state->models.opened_shape == name);
  // Another folder opened: it takes the first one's place.
  const std::string other = gpt2_folder("window-shape-2", gpt2_tensors());
  ui::open_model_folder(*state, other);
  state->wait();
  state->poll();
  const std::string other_name = std::filesystem::path(other).filename().string() + " (open)";
  REQUIRE(state->models.presets.size() == shipped + 1);
  CHECK(state->models.presets.front().name == other_name);
  CHECK(state->models.opened_shape == other_name);
  CHECK(std::none_of(state->models.presets.begin(), state->models.presets.end(),
                     [&](const ModelShape& m) { return m.name == name; }));
}

TEST_CASE("a head of the real model opened in the pipeline: the layer as trained, the way back to the Real view") {
  const std::string folder = gpt2_folder("window-visit", gpt2_tensors());
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state = gui::start_state(
      gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "abc", "--ablate", "0.0"}), err);
  REQUIRE(state);
  const std::string before = state->scenario().name;
  const ui::RealModelRun& r = state->real_model.shown();
  REQUIRE(r.baseline != nullptr);
  const Matrix x = r.baseline->layers[0].attention.x;  // (3, 4): what the unablated layer read
  REQUIRE(state->visit_real_layer(0, 1));
  CHECK(state->view == ui::View::Pipeline);
  CHECK(state->pipeline.head == 1);
  CHECK(state->scenario().name == std::filesystem::path(folder).filename().string() + ", layer 0");
  CHECK(state->scenario().input.tokens == std::vector<std::string>{"a", "b", "c"});
  CHECK(state->scenario().input.embeddings == x);
  CHECK(state->scenario().attention.heads == 2);
  CHECK(contains(state->scenario().description, "knocked out in the Real model view are back"));
  REQUIRE(state->layer_visit());
  CHECK(state->layer_visit()->from == ui::View::Real);
  state->end_layer_visit();
  CHECK(state->view == ui::View::Real);
  CHECK(state->scenario().name == before);
  CHECK_FALSE(state->visit_real_layer(1, 0));
  CHECK(state->message ==
        "No layer 1 in " + std::filesystem::path(folder).filename().string() + " to open in the pipeline");
  CHECK(state->view == ui::View::Real);
}

}  // namespace attn::test

TEST_CASE("the progress bar goes once across a run with an ablation: the knocked-out pass, then the one as trained") {
  ui::RealModelProgress p;
  p.phase = ui::RealModelProgress::Opening;
  CHECK(ui::progress_fraction(p) == 0.0);
  p.layers = 4;
  p.phase = ui::RealModelProgress::Running;
  p.layer = 2;
  CHECK(ui::progress_fraction(p) == 0.5);  // one pass
  p.passes = 2;
  CHECK(ui::progress_fraction(p) == 0.25);
  p.phase = ui::RealModelProgress::Baseline;
  p.pass = 1;
  p.layer = 0;
  CHECK(ui::progress_fraction(p) == 0.5);  // the second pass starts where the first ended
  p.layer = 4;
  CHECK(ui::progress_fraction(p) == 1.0);
  p.phase = ui::RealModelProgress::Idle;
  CHECK(ui::progress_fraction(p) == 0.0);
}

TEST_CASE("the window writes its screenshot and state nowhere in the model folder it reads") {
  const std::string folder = gpt2_folder("window-outputs", gpt2_tensors());
  const auto refusal = [&](const std::vector<std::string>& args) {
    try {
      gui::parse_gui_args(args);
    } catch (const cli::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string config = folder + "/config.json";
  CHECK(refusal({"--model", folder, "--screenshot", config}) ==
        "--screenshot: " + shown_path(config) +
            " is also the model file config.json this command reads: write to another file (nothing was written)");
  // Through a link from elsewhere: the file it leads to is the folder's.
  const std::filesystem::path link = fresh_dir("window-outputs-link") / "shot.png";
  std::filesystem::create_symlink(config, link);
  CHECK(refusal({"--model", folder, "--dump-state", link.string()}) ==
        "--dump-state: " + shown_path(link.string()) +
            " is also the model file config.json this command reads: write to another file (nothing was written)");
  // A new file in the folder: the folder is the model's, nothing is written in it.
  const std::string fresh = folder + "/shot.png";
  CHECK(refusal({"--model", folder, "--screenshot", fresh}) ==
        "--screenshot: " + shown_path(fresh) + " is in the model folder (" + shown_path(folder) +
            ") the lab reads: write to another file (nothing was written)");
  CHECK(refusal({"--model", folder, "--screenshot", link.parent_path().string() + "/other.png"}) == "accepted");
}

TEST_CASE("the Real model view saved to a file and opened again: its folder, text and heads knocked out") {
  const std::string folder = gpt2_folder("window-save", gpt2_tensors());
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state =
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "abc",
                                                                    "--ablate", "0.1", "--ablate-mode", "mean"}),
                       err);
  REQUIRE(state);
  const std::filesystem::path file = fresh_dir("window-save-file") / "lesson demo.json";
  ui::save_real_model(*state, file);
  CHECK(state->message == "Saved " + shown_path(file.string()));
  CHECK(state->real_view.file == file);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text ==
        "{\n  \"real_model\": {\n    \"folder\": \"" + folder +
            "\",\n    \"text\": \"abc\",\n    \"ablation\": [\n      [\n        0,\n        1\n      ]\n    ],\n"
            "    \"ablation_mode\": \"mean\"\n  }\n}\n");
  // Another window opens it: the same state, on the Real model view, the file remembered.
  std::unique_ptr<ui::AppState> other = gui::start_state(gui::parse_gui_args(std::vector<std::string>{}), err);
  REQUIRE(other);
  ui::open_document(*other, file);
  other->wait();
  REQUIRE(other->real_model.loaded());
  CHECK(other->view == ui::View::Real);
  CHECK(other->real_model.state().text == "abc");
  CHECK(ablation_list(other->real_model.state().ablation) == "0.1");
  CHECK(other->real_model.state().ablation.mode == AblationMode::Mean);
  CHECK(other->real_view.file == file);
  CHECK(other->recent_files.front() == file.string());
  // Saving again writes its own file; another file that exists is never written over.
  ui::save_real_model(*other, file);
  CHECK(other->message == "Saved " + shown_path(file.string()));
  const std::filesystem::path taken = file.parent_path() / "taken.json";
  std::ofstream(taken) << "mine";
  ui::save_real_model(*other, taken);
  CHECK(other->message ==
        "Not saved: " + shown_path(taken.string()) + " already exists; choose another name with Save As");
  std::ifstream mine(taken);
  std::string kept;
  std::getline(mine, kept);
  CHECK(kept == "mine");
  // A broken one is said, field and all, and nothing else changes.
  const std::filesystem::path broken = file.parent_path() / "broken.json";
  std::ofstream(broken) << R"({"real_model": {"folder": "x", "ablation": [[1]]}})";
  ui::open_document(*other, broken);
  CHECK(other->message == "Could not open " + shown_path(broken.string()) +
                              ": real_model.ablation[0]: expected [layer, head] (the current scenario is kept)");
  CHECK(other->real_view.file == file);
  // As the window's SCENARIO: the Real model view on it, the shipped scenario beside.
  std::ostringstream start_err;
  std::unique_ptr<ui::AppState> started =
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{file.string()}), start_err);
  REQUIRE(started);
  CHECK(start_err.str().empty());
  CHECK(started->view == ui::View::Real);
  CHECK(ablation_list(started->real_model.shown().state->ablation) == "0.1");
  CHECK(gui::start_state(gui::parse_gui_args(std::vector<std::string>{file.string(), "--model", folder}), start_err) ==
        nullptr);
  CHECK(start_err.str() ==
        "attention-lab: " + shown_path(file.string()) + " and --model both name a model: give one\n");
  // The commands that read a scenario say what it is.
  const Run traced = run({"trace", file.string()});
  CHECK(traced.code == 2);
  CHECK(traced.err == "attention-lab: " + shown_path(file.string()) +
                          ": a Real model view the window saved: open it with attention-lab FILE, or give the model "
                          "folder it names\n");
}

TEST_CASE("a point of the measured trade-off opens that converted model, and its file and recovery keep it") {
  const std::string folder = gpt2_folder("window-point", gpt2_tensors());
  const std::string name = std::filesystem::path(folder).filename().string();
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state = gui::start_state(
      gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "abc", "--measure", "text"}),
      err);
  REQUIRE(state);
  REQUIRE(state->tradeoff.loaded());
  const ui::TradeoffRun& t = state->tradeoff.shown();
  REQUIRE(t.trace->size() > 2);
  CHECK(state->tradeoff.asked_for(t.model, folder, ui::kTypedTextName, &state->real_model.shown().text.ids));
  CHECK_FALSE(state->tradeoff.asked_for(t.model, folder, ui::kSonnetsName));
  const std::optional<KvConversion> mqa = (*t.trace)[1].conversion;
  REQUIRE(mqa);
  CHECK(tradeoff_point_name(mqa) == "mqa");
  ui::open_tradeoff_point(*state, 1);
  CHECK(state->view == ui::View::Real);
  state->wait();
  state->poll();
  REQUIRE(state->real_model.loaded());
  {
    const ui::RealModelRun& r = state->real_model.shown();
    CHECK(r.model->name() == name + " as mqa");
    CHECK(r.source == t.model);  // converted from the model measured, not read again
    CHECK(r.folder == folder);
    CHECK(r.model->model().layers[0].attention.variant == Variant::Mqa);
    CHECK(ui::conversion_text(*r.model) == "made from " + name + ": layer 0 as mqa");
    CHECK(r.state->text == "abc");
  }
  CHECK(state->real_model.conversion() == mqa);
  CHECK(state->real_view.folder_text == folder);
  // The recovery file and a saved file keep the conversion; opening the file converts again.
  const std::optional<ui::RecoveryOffer> offer = ui::unsaved_work(*state);
  REQUIRE(offer);
  REQUIRE(offer->real_model);
  CHECK(offer->real_model->conversion == mqa);
  const std::filesystem::path file = fresh_dir("window-point-file") / "mqa.json";
  ui::save_real_model(*state, file);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"converted\": {\n      \"to\": \"gqa\",\n      \"kv_heads\": 1,\n      \"layers\": [\n        0\n"
                  "      ]\n    }") != std::string::npos);
  std::unique_ptr<ui::AppState> other = gui::start_state(gui::parse_gui_args(std::vector<std::string>{}), err);
  REQUIRE(other);
  ui::open_document(*other, file);
  other->wait();
  other->poll();
  REQUIRE(other->real_model.loaded());
  CHECK(other->real_model.shown().model->name() == name + " as mqa");
  CHECK(other->real_model.conversion() == mqa);
  // A conversion the model cannot take is said with the model and the key.
  std::ofstream(file.parent_path() / "bad.json")
      << R"({"real_model": {"folder": ")" + folder + R"(", "text": "ab", "converted": {"to": "gqa", "kv_heads": 3, )"
      << R"("layers": [0]}}})";
  ui::open_document(*other, file.parent_path() / "bad.json");
  other->wait();
  other->poll();
  CHECK(other->real_model.failure() ==
        name + " as gqa 3: kv_heads: must divide the 2 key/value heads of layer 0 (1, 2) but found 3");
  std::ofstream(file.parent_path() / "twice.json")
      << R"({"real_model": {"folder": ")" + folder + R"(", "converted": {"to": "mla", "latent_dim": 2, )"
      << R"("layers": [0, 0]}}})";
  ui::open_document(*other, file.parent_path() / "twice.json");
  CHECK(other->message == "Could not open " + shown_path((file.parent_path() / "twice.json").string()) +
                              ": real_model.converted.layers[1]: layers are listed once each, in ascending order (the "
                              "current scenario is kept)");
  // The model as shipped: the folder's own, the row of the model shown moving with it.
  ui::open_tradeoff_point(*state, 0);
  state->wait();
  state->poll();
  CHECK(state->real_model.shown().model->name() == name);
  CHECK(state->real_model.shown().model == state->real_model.shown().source);
  CHECK_FALSE(state->real_model.conversion());
}

TEST_CASE("the window on --model FOLDER --to: the folder's model converted in memory, the options checked") {
  const std::string folder = gpt2_folder("window-to", gpt2_tensors());
  const std::string name = std::filesystem::path(folder).filename().string();
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state =
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "abc", "--to",
                                                                    "mla", "--latent-dim", "2"}),
                       err);
  REQUIRE(state);
  CHECK(state->real_model.shown().model->name() == name + " as mla 2");
  CHECK(state->real_model.conversion() == KvConversion{.to = KvTarget::Mla, .latent_dim = 2, .layers = {0}});
  // Without --to, --kv-heads is the scenario's, as before.
  CHECK(gui::parse_gui_args(std::vector<std::string>{"--kv-heads", "1"}).overrides.config.kv_heads == 1);
  CHECK_THROWS_WITH(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--to", "mla"}),
                    "--to mla needs --latent-dim C");
  CHECK_THROWS_WITH(
      gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--to", "gqa", "--latent-dim", "2"}),
      "--latent-dim is for --to mla");
  err.str("");
  CHECK_FALSE(
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{"--model", folder, "--model-text", "abc", "--to",
                                                                    "gqa", "--kv-heads", "1", "--layers", "3"}),
                       err));
  CHECK(err.str() == "attention-lab: --layers: the model has layers 0..0 but found 3\n");
}

TEST_CASE("the facts of a RoPE model converted to mla say why its keys are expanded again, and the FLOPs") {
  Model m;
  m.layers.resize(2);
  for (ModelLayer& l : m.layers) {
    l.attention.variant = Variant::Mla;
    l.attention.positions = Positions::Rope;
    l.attention.heads = 12;
    l.attention.head_dim = 64;
    l.attention.latent_dim = 96;
  }
  // 2 x 96 x 768 = 147,456 FLOPs a cached token and layer; two layers at 4,096 tokens: 1,207,959,552.
  CHECK(ui::reexpansion_text(m, 4096) ==
        "RoPE turns its keys after the up-projection, so W_UK cannot be absorbed: each new token expands every cached "
        "latent into keys again, 1.21 GFLOP a token at 4,096 cached tokens");
  m.layers[0].attention.positions = m.layers[1].attention.positions = Positions::Learned;
  CHECK(ui::reexpansion_text(m, 4096).empty());
}

TEST_CASE("a Real model file as SCENARIO takes --layer for its model; --measure is refused beside a page or a layer") {
  const std::string folder = gpt2_folder("window-file-layer", gpt2_tensors());
  const std::filesystem::path file = fresh_dir("window-file-layer-file") / "view.json";
  std::ofstream(file) << R"({"real_model": {"folder": ")" + folder + R"(", "text": "abc"}})";
  std::ostringstream err;
  std::unique_ptr<ui::AppState> state =
      gui::start_state(gui::parse_gui_args(std::vector<std::string>{file.string(), "--layer", "0"}), err);
  REQUIRE(state);
  CHECK(state->view == ui::View::Pipeline);
  CHECK(state->document().scenario->name.find(std::filesystem::path(folder).filename().string()) == 0);
  CHECK_FALSE(gui::start_state(gui::parse_gui_args(std::vector<std::string>{file.string(), "--step", "softmax"}), err));
  CHECK(err.str() ==
        "attention-lab: --step: with a Real model file, only beside --layer L (that layer of its model in the "
        "pipeline)\n");
  // A file without a text says so of the file, not of --model-text.
  const std::filesystem::path bare = file.parent_path() / "bare.json";
  std::ofstream(bare) << R"({"real_model": {"folder": ")" + folder + R"("}})";
  err.str("");
  CHECK_FALSE(gui::start_state(gui::parse_gui_args(std::vector<std::string>{bare.string()}), err));
  CHECK(err.str() ==
        "attention-lab: " + shown_path(bare.string()) + ": real_model.text: empty: give the text the model reads\n");
  for (const std::vector<std::string>& beside :
       {std::vector<std::string>{"--lesson", "real_model", "--page", "6"}, std::vector<std::string>{"--layer", "0"}}) {
    std::vector<std::string> args{"--model", folder, "--model-text", "abc", "--measure", "text"};
    args.insert(args.end(), beside.begin(), beside.end());
    err.str("");
    CHECK_FALSE(gui::start_state(gui::parse_gui_args(args), err));
    CHECK(err.str() == std::string("attention-lab: --measure: its measurement is shown by the Compare view, not the ") +
                           (beside[0] == "--lesson" ? "lesson page --lesson opens\n" : "pipeline --layer opens\n"));
  }
}
