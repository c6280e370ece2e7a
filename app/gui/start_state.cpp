#include "app/gui/start_state.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/assets.h"
#include "app/cli/commands.h"
#include "app/cli/handout.h"
#include "app/cli/memory_option.h"
#include "app/cli/scenario_input.h"
#include "core/edits.h"
#include "core/io/atomic_file.h"
#include "core/io/model_json.h"
#include "core/io/presets_json.h"
#include "core/io/scenario_json.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "ui/logic/document_files.h"
#include "ui/logic/lesson_nav.h"
#include "ui/logic/preset_check.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/train_actions.h"
#include "ui/logic/window_memory.h"

namespace attn::gui {
namespace {

// The scenario file with the options that override it (the same as trace's) and --tokens.
std::optional<Scenario> load_document(const GuiOptions& o, const std::filesystem::path& path, std::ostream& err) {
  Scenario scenario;
  try {
    scenario = load_scenario_file(path, o.memory_budget.value_or(cli::machine_memory_budget()));
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(path) << ": " << e.what() << '\n';
    return std::nullopt;
  }
  try {
    o.overrides.apply(scenario, err);
    if (o.tokens) set_token_count(scenario, *o.tokens);
    validate(scenario);
    // The settings are read after the document: --memory-budget or the machine's default holds it, in a window of
    // the size asked for.
    ui::check_window_budget(scenario, ui::window_frame_bytes(o.width, o.height),
                            o.memory_budget.value_or(cli::machine_memory_budget()));
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(path) << (o.overrides.any() || o.tokens ? " with the given options: " : ": ")
        << e.what() << '\n';
    return std::nullopt;
  } catch (const cli::UsageError& e) {
    err << "attention-lab: " << e.what() << '\n';
    return std::nullopt;
  }
  return scenario;
}

// A lesson file that could not be read, and why: --lesson names it rather than calling the lesson unknown.
struct LeftOutLesson {
  std::filesystem::path file;
  std::string why;
};

// The model presets and the lessons; a broken file is reported in the status line (each in its turn) and left out,
// and the Memory view says why it has no presets.
std::vector<LeftOutLesson> load_assets(ui::AppState& state) {
  const std::filesystem::path presets = cli::assets_dir() / "presets" / "models.json";
  try {
    for (ModelShape& m : load_presets_file(presets)) {
      if (const std::optional<std::string> beyond = ui::preset_beyond_views(m))
        state.add_message("Preset " + escaped_text(m.name) + " left out (" + shown_path(presets) + "): " + *beyond);
      else state.models.presets.push_back(std::move(m));
    }
  } catch (const InputError& e) {
    state.models.presets_problem = "The model presets could not be read (" + shown_path(presets) + "): " + e.what();
    state.add_message(state.models.presets_problem);
  }
  state.lab_folders = {cli::assets_dir(), config_dir()};
  state.lesson.scenarios_dir = cli::assets_dir() / "scenarios";
  state.train.texts_dir = cli::assets_dir() / "texts";
  std::vector<LeftOutLesson> left_out;
  for (const std::filesystem::path& f : ui::lesson_files(cli::assets_dir() / "lessons")) {
    try {
      state.lesson.lessons.push_back(ui::load_lesson_file(f, state.lesson.scenarios_dir));
    } catch (const InputError& e) {
      state.add_message("Lesson " + shown_path(f.filename()) + " left out: " + e.what());
      left_out.push_back({f, e.what()});
    }
  }
  state.handout = [](std::ostream& out, const Trace& t, bool latex) {
    latex ? cli::write_latex(out, t) : cli::write_markdown(out, t);
  };
  return left_out;
}

bool start_view(const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  if (o.step) {
    // Numbers and names count the steps the scenario has (positions and selection only where they apply).
    const AttentionConfig& a = state.scenario().attention;
    const std::optional<ui::Step> step = ui::parse_step(*o.step, a);
    if (!step) {
      err << "attention-lab: --step: expected 0-" << ui::step_count(a) - 1 << " or a step name (" << ui::step_names(a)
          << ") but found '" << *o.step << "'\n";
      return false;
    }
    state.pipeline.step = *step;
  }
  if (o.view) {
    const std::optional<ui::View> view = ui::parse_view(*o.view);
    if (!view) {
      err << "attention-lab: --view: expected one of " << ui::view_names() << " but found '" << *o.view << "'\n";
      return false;
    }
    state.view = *view;
  }
  return true;
}

// A lesson file's stem without its order number: "masks" for 3_masks, "real_model" for 12_real_model.
std::string unnumbered(const std::string& stem) {
  const std::size_t digits = stem.find_first_not_of("0123456789");
  return digits > 0 && digits != std::string::npos && stem[digits] == '_' ? stem.substr(digits + 1) : stem;
}

// The file of a lesson that was left out, when --lesson names it (by name as its file has it, "masks" for
// 3_masks.json, or by file name): what is wrong with it, instead of "unknown lesson".
bool lesson_left_out(const GuiOptions& o, const std::vector<LeftOutLesson>& left_out, std::ostream& err) {
  const std::string stem = std::filesystem::path(*o.lesson).stem().string();
  for (const LeftOutLesson& l : left_out) {
    const std::string file_stem = l.file.stem().string();
    if (stem == file_stem || *o.lesson == unnumbered(file_stem)) {
      err << "attention-lab: --lesson: the lesson '" << *o.lesson << "' could not be read: " << shown_path(l.file)
          << ": " << l.why << '\n';
      return true;
    }
  }
  return false;
}

// --lesson by name ("sqrt_dk") or file name ("2_sqrt_dk.json"), on --page.
bool start_lesson(const GuiOptions& o, ui::AppState& state, const std::vector<LeftOutLesson>& left_out,
                  std::ostream& err) {
  if (!o.lesson) return true;
  const std::string stem = std::filesystem::path(*o.lesson).stem().string();
  const auto& lessons = state.lesson.lessons;
  const auto it = std::find_if(lessons.begin(), lessons.end(),
                               [&](const ui::Lesson& l) { return l.name == *o.lesson || l.name == unnumbered(stem); });
  if (it == lessons.end() && lesson_left_out(o, left_out, err)) return false;
  if (it == lessons.end()) {
    err << "attention-lab: --lesson: unknown lesson '" << *o.lesson << "' (the lessons are:";
    for (const ui::Lesson& l : lessons) err << ' ' << l.name;
    err << ")\n";
    return false;
  }
  if (o.page > static_cast<int>(it->pages.size())) {
    err << "attention-lab: --page: lesson '" << it->name << "' has " << it->pages.size() << " pages but found "
        << o.page << '\n';
    return false;
  }
  if (!ui::ApplyLessonPage(state, static_cast<int>(it - lessons.begin()), o.page - 1)) {
    err << "attention-lab: --lesson: " << state.message << '\n';
    return false;
  }
  // A capture shows the page's moment of training, not the run on its way there.
  const ui::LessonPage& page = it->pages[static_cast<std::size_t>(o.page - 1)];
  if (page.view == ui::View::Train) state.trainer.run_until(page.train_steps);
  if (page.on_real_model()) ui::SettleRealPage(state);  // likewise the page's text and knock-out
  return true;
}

bool start_model_and_token(const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  if (o.preset) {
    const auto& presets = state.models.presets;
    if (std::none_of(presets.begin(), presets.end(), [&](const ModelShape& m) { return m.name == *o.preset; })) {
      err << "attention-lab: --preset: unknown model '" << *o.preset << "' (see attention-lab kv --list)\n";
      return false;
    }
    state.models.preset = *o.preset;
  }
  if (o.decode_tokens) {
    if (*o.decode_tokens > state.scenario().n_q()) {
      err << "attention-lab: --decode-tokens: the scenario has " << state.scenario().n_q() << " tokens but found "
          << *o.decode_tokens << '\n';
      return false;
    }
    state.decode.token = *o.decode_tokens - 1;
  }
  return true;
}

bool start_cell_and_head(const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  const int heads = static_cast<int>(state.trace().heads.size());
  if (o.cell) {
    const int asked = o.head.value_or(state.pipeline.head);
    const int head = asked < heads ? asked : 0;  // a bad --head is reported below, after the cell
    const ui::StepMatrix r = ui::step_result(state.trace(), state.pipeline.step, head);
    if (o.cell->first >= r.m->rows() || o.cell->second >= r.m->cols()) {
      err << "attention-lab: --cell: the " << r.name << " matrix of step " << ui::step_info(state.pipeline.step).name
          << " is " << r.m->rows() << " x " << r.m->cols() << " (rows and columns numbered from 0) but found "
          << o.cell->first << ',' << o.cell->second << '\n';
      return false;
    }
    state.pipeline.pinned_cell = o.cell;
  }
  if (o.head) {
    if (*o.head >= heads) {
      err << "attention-lab: --head: the scenario has " << plural(heads, "head") << ", numbered from 0, but found "
          << *o.head << '\n';
      return false;
    }
    state.pipeline.head = *o.head;
  }
  return true;
}

// The model file with its tokens (--model-tokens, or its first ones) as the Model view's document; why not if not.
std::optional<std::string> open_model(const GuiOptions& o, ui::AppState& state, const std::filesystem::path& path) {
  try {
    Model m = load_model_file(path, state.memory_budget);
    std::vector<std::string> tokens = o.model_tokens ? split_words(*o.model_tokens) : ui::starting_tokens(m);
    if (o.model_tokens) option_token_ids(m, tokens, "--model-tokens");
    const std::optional<std::string> failed = state.model_doc.open({std::move(m), std::move(tokens)}, path);
    if (failed) return (o.model_tokens ? "--model-tokens: " : shown_path(path) + ": ") + *failed;
  } catch (const InputError& e) {
    return shown_path(path) + ": " + e.what();
  }
  return std::nullopt;
}

// Waits for the real model's worker; false (and why on err, naming the folder and the option) when it failed.
bool settle_real_model(ui::AppState& state, std::ostream& err, const std::filesystem::path* file = nullptr) {
  state.real_model.wait();
  std::optional<std::string> failure;
  state.real_model.poll(failure);
  if (!failure) return true;
  const std::string folder = shown_path(state.real_model.folder());
  // The text is --model-text's, or a Real model file's: said of the file, which names the folder itself.
  if (failure->starts_with("text: "))
    *failure = (file ? shown_path(*file) + ": real_model.text: " : "--model-text: ") + failure->substr(6);
  if (!failure->starts_with(folder + ": ") && !(file && failure->starts_with(shown_path(*file) + ": ")))
    *failure = folder + ": " + *failure;
  err << "attention-lab: " << *failure << '\n';
  return false;
}

// --ablate against the opened folder's layers and heads.
Ablation real_model_ablation(const GuiOptions& o, const Model& m) {
  Ablation a = parse_ablation(*o.ablate, m, "--ablate");
  if (o.ablate_mode) a.mode = parse_ablation_mode(*o.ablate_mode, "--ablate-mode");
  return a;
}

// --measure: the Compare view's measured tab, its measurement done before the window opens.
bool start_measuring(bool sonnets, ui::AppState& state, std::ostream& err) {
  state.compare = {.measured = true, .sonnets = sonnets, .select_tab = true};
  if (!state.measure_cache_tradeoff()) {
    err << "attention-lab: --measure: " << state.message << '\n';
    return false;
  }
  state.tradeoff.wait();
  std::optional<std::string> failure;
  state.tradeoff.poll(failure);
  if (!failure) return true;
  err << "attention-lab: --measure: " << *failure << '\n';
  return false;
}

// --model FOLDER, converted by --to ... when given: the folder's model read (its headers), the conversion checked
// against it, then opened on the worker converted, one pass run.
bool open_real_model(const GuiOptions& o, const std::string& text, ui::AppState& state, std::ostream& err) {
  if (!o.conversion.any()) {
    state.real_model.open(*o.model, text);
    return true;
  }
  try {
    const std::shared_ptr<const CheckpointModel> source = CheckpointModel::open(*o.model, state.memory_budget);
    state.real_model.open(*o.model, ui::RealModelState{text}, cli::conversion_of(o.conversion, source->model()),
                          source);
  } catch (const InputError& e) {
    err << "attention-lab: " << (e.field().starts_with("--") ? "" : shown_path(*o.model) + ": ") << e.what() << '\n';
    return false;
  }
  return true;
}

// --model FOLDER: the Real model view on --model-text (and --ablate), computed before the window opens; --layer opens
// one of its layers in the pipeline.
bool start_real_model(const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  const std::string text = o.model_text.value_or(ui::kRealModelStartingText);
  if (!open_real_model(o, text, state, err)) return false;
  state.real_view.text = text;
  if (!settle_real_model(state, err)) return false;
  if (o.ablate) {
    try {
      state.real_model.set_ablation(real_model_ablation(o, state.real_model.shown().model->model()));
    } catch (const InputError& e) {
      err << "attention-lab: " << e.what() << '\n';
      return false;
    }
    if (!settle_real_model(state, err)) return false;
    state.real_view.mode = state.real_model.state().ablation.mode;
  }
  if (!o.view) state.view = o.measure ? ui::View::Compare : ui::View::Real;
  if (o.measure && (o.lesson || o.layer)) {
    err << "attention-lab: --measure: its measurement is shown by the Compare view, not the "
        << (o.lesson ? "lesson page --lesson opens" : "pipeline --layer opens") << '\n';
    return false;
  }
  if (o.measure && o.view && *o.view != "compare") {
    err << "attention-lab: --measure: its measurement is shown by the Compare view, not the one --view names\n";
    return false;
  }
  if (o.measure && !start_measuring(*o.measure == "sonnets", state, err)) return false;
  if (o.layer && !state.visit_real_layer(*o.layer, o.head.value_or(0))) {
    err << "attention-lab: --layer: " << state.message << '\n';
    return false;
  }
  if (o.layer) state.wait();  // --head and --cell are held to the layer's trace
  return true;
}

// A file File > Save wrote on the Real model view, as SCENARIO: that view, computed before the window opens.
// A Real model file as SCENARIO: its folder's model in the Real model view; --layer opens one of its layers in the
// pipeline, as with --model FOLDER (--step and --cell only beside it).
bool start_real_file(const std::filesystem::path& file, const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  if ((o.step || o.cell) && !o.layer && !o.view) {
    err << "attention-lab: " << (o.step ? "--step" : "--cell") << ": with a Real model file, only beside --layer L "
        << "(that layer of its model in the pipeline)\n";
    return false;
  }
  try {
    ui::open_real_model_file(state, file);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(file) << ": " << e.what() << '\n';
    return false;
  }
  if (!settle_real_model(state, err, &file)) return false;
  if (o.layer && !state.visit_real_layer(*o.layer, o.head.value_or(0))) {
    err << "attention-lab: --layer: " << state.message << '\n';
    return false;
  }
  if (o.layer) state.wait();  // --head and --cell are held to the layer's trace
  return true;
}

// Whether SCENARIO is such a file (one that cannot be read is left for the scenario's reading to say why).
bool is_real_model_file(const std::filesystem::path& path, std::int64_t budget) {
  try {
    return document_file_kind(path, budget) == DocumentKind::RealModel;
  } catch (const InputError&) {
    return false;
  }
}

// The Model view's model: --model, or the shipped tiny one (a broken shipped file is said in the status line);
// --layer opens one of its layers in the pipeline.
bool start_model_view(const GuiOptions& given, ui::AppState& state, std::ostream& err) {
  std::error_code ec;
  GuiOptions o = given;
  if (o.model && std::filesystem::is_directory(*o.model, ec)) {
    // What would do nothing on a folder is said, not dropped.
    if (o.model_tokens) {
      err << "attention-lab: --model-tokens: for a model file; a model folder reads --model-text \"...\"\n";
      return false;
    }
    if ((o.step || o.cell) && !o.layer && !o.view) {
      err << "attention-lab: " << (o.step ? "--step" : "--cell")
          << ": with --model FOLDER, only beside --layer L (that layer of the model in the pipeline)\n";
      return false;
    }
    if (!start_real_model(o, state, err)) return false;
    o.model.reset();  // the Model view keeps the shipped model
    o.layer.reset();  // a layer of the folder's model, opened above
  } else if (o.model_text || o.ablate || o.ablate_mode || o.measure || o.conversion.any()) {
    err << "attention-lab: --model-text, --ablate, --ablate-mode, --measure and --to are for --model FOLDER (a "
           "Hugging Face model)\n";
    return false;
  }
  const std::filesystem::path path = o.model ? std::filesystem::path(*o.model) : cli::default_model();
  if (const std::optional<std::string> failed = open_model(o, state, path)) {
    if (o.model || o.model_tokens || o.layer) {
      err << "attention-lab: " << *failed << '\n';
      return false;
    }
    state.model_unopened = *failed;
    state.add_message("Model not opened: " + *failed);
  }
  if (o.model && !o.view) state.view = ui::View::Model;
  if (o.layer && !state.visit_model_layer(*o.layer)) {
    if (*o.layer < static_cast<int>(state.model_doc.model().layers.size())) {  // it exists: it did not fit
      err << "attention-lab: --layer: layer " << *o.layer << " as the pipeline's document: " << state.message << '\n';
      return false;
    }
    err << "attention-lab: --layer: the model has "
        << plural(static_cast<std::int64_t>(state.model_doc.model().layers.size()), "layer")
        << ", numbered from 0, but found " << *o.layer << '\n';
    return false;
  }
  return true;
}

// --train-steps: the Train view with its run trained that far.
bool start_training(const GuiOptions& o, ui::AppState& state, std::ostream& err) {
  if (!o.train_steps) return true;
  if (!ui::restart_training(state)) {
    err << "attention-lab: --train-steps: " << state.train.error << '\n';
    return false;
  }
  state.trainer.run_until(*o.train_steps);
  if (o.train_gradient) {
    const auto [layer, head] = *o.train_gradient;
    const std::vector<std::vector<Matrix>>& heads = state.trainer.progress().snapshots.back()->probe_attention;
    if (static_cast<std::size_t>(layer) >= heads.size() ||
        static_cast<std::size_t>(head) >= heads[static_cast<std::size_t>(layer)].size()) {
      const auto layers = static_cast<std::int64_t>(heads.size());
      const auto per_layer = static_cast<std::int64_t>(heads.empty() ? 0 : heads[0].size());
      err << "attention-lab: --train-gradient: the run's model has " << plural(layers, "layer") << " of "
          << plural(per_layer, "head") << ", numbered from 0, but found " << layer << '.' << head << '\n';
      return false;
    }
    state.train.gradient_tab = true;
    state.train.layer = layer;
    state.train.head = head;
  }
  if (!o.view && !o.lesson) state.view = ui::View::Train;
  return true;
}

}  // namespace

std::unique_ptr<ui::AppState> start_state(const GuiOptions& o, std::ostream& err) {
  try {
    ui::check_window_fits(o.width, o.height, o.memory_budget.value_or(cli::machine_memory_budget()));
  } catch (const InputError& e) {
    err << "attention-lab: " << e.what() << '\n';
    return nullptr;
  }
  std::filesystem::path path = o.scenario.empty() ? cli::default_scenario() : std::filesystem::path(o.scenario);
  // A Real model view saved (File > Save) opens on that view, beside the shipped scenario.
  std::optional<std::filesystem::path> real_file;
  if (is_real_model_file(path, o.memory_budget.value_or(cli::machine_memory_budget()))) {
    if (o.model) {
      err << "attention-lab: " << shown_path(path) << " and --model both name a model: give one\n";
      return nullptr;
    }
    real_file = std::exchange(path, cli::default_scenario());
  }
  std::optional<Scenario> scenario = load_document(o, path, err);
  if (!scenario) return nullptr;
  auto state = std::make_unique<ui::AppState>(std::move(*scenario), path);
  state->set_memory_budget(o.memory_budget.value_or(cli::machine_memory_budget()));
  state->set_window_size(o.width, o.height);
  const std::vector<LeftOutLesson> left_out = load_assets(*state);
  // The order matters: a lesson page sets the view, step and head, which the options after it refine.
  // --layer is a layer of the file's model then, not of the Model view's.
  GuiOptions model_view = o;
  if (real_file) model_view.layer.reset();
  const bool ok = start_model_view(model_view, *state, err) &&
                  (!real_file || start_real_file(*real_file, o, *state, err)) && start_view(o, *state, err) &&
                  start_lesson(o, *state, left_out, err) && start_model_and_token(o, *state, err) &&
                  start_cell_and_head(o, *state, err) && start_training(o, *state, err);
  return ok ? std::move(state) : nullptr;
}

namespace {

// The Real model view's document as shown: its model (converted: "gpt2 as mla 64"), text, the model's pieces of it and
// the heads knocked out (null if no folder is open).
nlohmann::ordered_json real_model_state(const ui::AppState& state) {
  if (!state.real_model.loaded()) return nullptr;
  const ui::RealModelRun& r = state.real_model.shown();
  return {{"folder", shown_path(r.folder)},
          {"model", r.model->name()},
          {"text", escaped_text(r.state->text)},
          {"pieces", r.text.pieces},
          {"ablated", ablation_list(r.state->ablation)}};
}

// The models the Real model view lists (null until its look at the hub cache finished): id and whether it opens.
nlohmann::ordered_json listed_models(const ui::AppState& state) {
  const auto& models = state.real_view.models.models();
  if (!models) return nullptr;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CachedModel& m : *models) list.push_back({{"id", m.id}, {"opens", m.usable}});
  return list;
}

}  // namespace

void dump_state(const std::string& path, const ui::AppState& state) {
  const ui::StepInfo& info = ui::step_info(state.pipeline.step);
  std::vector<std::string> more_messages;  // waiting behind the message shown
  for (const std::string& m : state.more_messages) more_messages.push_back(escaped_text(m));
  const nlohmann::ordered_json j = {{"view", ui::view_name(state.view)},
                                    {"step", ui::step_index(state.pipeline.step, state.trace().attention)},
                                    {"step_name", info.name},
                                    {"head", state.pipeline.head},
                                    {"decode_tokens", state.decode.token + 1},
                                    {"lesson", state.lesson.open() ? state.lesson.current().name : ""},
                                    {"lesson_page", state.lesson.page + 1},
                                    {"scenario", state.scenario().name},
                                    {"tokens", state.scenario().input.tokens},
                                    {"file", shown_path(state.document().path)},
                                    {"recovered_from", shown_path(state.document().recovered_from)},
                                    {"unsaved", state.document().dirty()},
                                    {"presentation", state.display.presentation},
                                    {"zoom", state.display.zoom},
                                    {"recovery_offered", state.recovery.has_value()},
                                    {"message", escaped_text(state.message)},
                                    {"more_messages", more_messages},
                                    {"real_model", real_model_state(state)},
                                    {"models_on_this_computer", listed_models(state)}};
  // Tokens and names are checked to be UTF-8; should anything not be, it is replaced rather than an exception
  // thrown after the file was created.
  write_file_atomically(path, j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

}  // namespace attn::gui
