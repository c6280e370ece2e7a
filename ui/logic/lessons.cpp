#include "ui/logic/lessons.h"

#include <algorithm>
#include <cctype>
#include <span>
#include <tuple>

#include "core/attention.h"
#include "core/decode.h"
#include "core/init.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/scenario_json.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"
#include "ui/logic/focus.h"
#include "ui/logic/geometry.h"
#include "ui/logic/sqrt_dk.h"
#include "ui/logic/step_matrices.h"
#include "ui/logic/trainer.h"

namespace attn::ui {
namespace {

using nlohmann::json;

constexpr std::string_view kExperimentNames[] = {"sqrt_dk", "sqrt_dk_softmax"};

std::optional<Experiment> parse_experiment(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kExperimentNames); ++i)
    if (kExperimentNames[i] == name) return static_cast<Experiment>(i);
  return std::nullopt;
}

std::string index_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }
std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// --- reading the JSON -------------------------------------------------------------------------------

// A name, or a number among the ten steps of plain attention (the positions and selection steps go by name: whether
// they exist depends on the page's scenario, checked in check_step).
Step read_step(const JsonFields& r) {
  if (!r.has("step")) return Step::Inputs;
  const json& v = r.at("step");
  const AttentionConfig plain;
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() < step_count(plain))
    return step_at(static_cast<int>(v.get<std::int64_t>()), plain);
  if (v.is_string())
    for (const StepInfo& i : all_steps())
      if (i.name == v.get<std::string>()) return i.step;
  std::vector<std::string_view> names;
  for (const StepInfo& i : all_steps()) names.push_back(i.name);
  throw InputError(r.child("step"), "expected one of " + join(names, ", ") + " or 0-" +
                                        std::to_string(step_count(plain) - 1) + " but found " + r.found("step"));
}

// [row, column] with two non-negative integers; whether the cell exists is checked against the trace.
std::pair<int, int> read_cell(const json& j, const std::string& path, const JsonSource* source) {
  const auto index = [](const json& v) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= limits::kMaxTokens;
  };
  if (!j.is_array() || j.size() != 2 || !index(j[0]) || !index(j[1]))
    throw InputError(path,
                     "expected [row, column], two integers from 0, but found " +
                         (j.is_array() && j.size() == 2 ? "[" + written_value(j[0], index_path(path, 0), source) + "," +
                                                              written_value(j[1], index_path(path, 1), source) + "]"
                          : j.is_array() ? j.dump()
                                         : describe_found(j, path, source)));
  return {j[0].get<int>(), j[1].get<int>()};
}

std::vector<std::pair<int, int>> read_highlight(const json& j, const std::string& path, const JsonSource* source) {
  if (!j.is_array()) throw InputError(path, "expected an array of [row, column] cells but found " + describe_found(j));
  std::vector<std::pair<int, int>> cells;
  for (std::size_t i = 0; i < j.size(); ++i) cells.push_back(read_cell(j[i], index_path(path, i), source));
  return cells;
}

// "rows" or "cols" of a focus: a non-empty array of indices from 0; whether they exist is checked against the trace.
std::vector<int> read_focus_indices(const JsonFields& r, const char* key) {
  if (!r.has(key)) return {};
  const json& j = r.at(key);
  const std::string path = r.child(key);
  if (!j.is_array() || j.empty())
    throw InputError(path, "expected a non-empty array of indices from 0 but found " + describe_found(j));
  std::vector<int> indices;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& v = j[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > limits::kMaxTokens)
      throw InputError(index_path(path, i),
                       "expected an index from 0 but found " + describe_found(v, index_path(path, i), r.source()));
    indices.push_back(v.get<int>());
  }
  return indices;
}

// {"concat": {"rows": [3]}, "W_O": {"cols": [0]}}: the matrices named as the step names them (checked against the
// step in check_focus), each with the rows and columns the page talks about.
std::vector<FocusTerm> read_focus(const json& j, const std::string& path, const JsonSource* source) {
  if (!j.is_object() || j.empty())
    throw InputError(path,
                     "expected an object naming matrices of the step, as {\"concat\": {\"rows\": [3]}}, but found " +
                         describe_found(j));
  std::vector<FocusTerm> focus;
  for (const auto& [name, axes] : j.items()) {
    const JsonFields f(axes, child_path(path, name), {"rows", "cols"}, "lesson", source);
    FocusTerm term{name, {read_focus_indices(f, "rows"), read_focus_indices(f, "cols")}};
    if (term.axes.rows.empty() && term.axes.cols.empty())
      throw InputError(child_path(path, name), "expected \"rows\", \"cols\" or both but found neither");
    focus.push_back(std::move(term));
  }
  return focus;
}

// Shape and 0/1 values are checked by validate() once the mask meets the scenario's tokens.
Matrix read_custom_mask(const json& j, const std::string& path) {
  if (!j.is_array() || j.empty() || !j[0].is_array() || j[0].empty())
    throw InputError(path, "expected a non-empty array of rows of 0/1 but found " + describe_found(j));
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j[0].size()));
  for (std::size_t r = 0; r < j.size(); ++r) {
    if (!j[r].is_array() || j[r].size() != j[0].size())
      throw InputError(index_path(path, r), "expected " + plural(static_cast<std::int64_t>(j[0].size()), "number") +
                                                " (as in row 0) but found " +
                                                (j[r].is_array() ? std::to_string(j[r].size()) : describe_found(j[r])));
    for (std::size_t c = 0; c < j[r].size(); ++c) {
      if (!j[r][c].is_number())
        throw InputError(index_path(index_path(path, r), c), "expected 0 or 1 but found " + describe_found(j[r][c]));
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = j[r][c].get<double>();
    }
  }
  return m;
}

ConfigOverrides read_overrides(const json& j, const std::string& path, const JsonSource* source) {
  const JsonFields r(
      j, path,
      {"mask", "window", "custom_mask", "scale", "kernel", "heads", "head_dim", "variant", "kv_heads", "latent_dim",
       "positions", "rope_base", "rope_dim", "position_offset", "top_k", "indexer_heads", "indexer_dim"},
      "lesson", source);
  const auto integer = [&](const char* key, int hi, int lo = 1) {
    return r.has(key) ? std::optional<int>(r.integer(key, lo, lo, hi)) : std::nullopt;
  };
  ConfigOverrides o;
  if (r.has("mask")) o.mask = r.choice("mask", MaskKind::None, parse_mask, mask_names());
  o.window = integer("window", limits::kMaxTokens);
  if (r.has("custom_mask")) o.custom_mask = read_custom_mask(r.at("custom_mask"), r.child("custom_mask"));
  if (r.has("scale")) o.scale = r.boolean("scale", true);
  if (r.has("kernel")) o.kernel = r.choice("kernel", Kernel::Softmax, parse_kernel, kernel_names());
  o.heads = integer("heads", limits::kMaxHeads);
  o.head_dim = integer("head_dim", limits::kMaxHeadDim);
  if (r.has("variant")) o.variant = r.choice("variant", Variant::Mha, parse_variant, variant_names());
  o.kv_heads = integer("kv_heads", limits::kMaxHeads);
  o.latent_dim = integer("latent_dim", limits::kMaxProjectedDim);
  if (r.has("positions")) o.positions = r.choice("positions", Positions::None, parse_positions, positions_names());
  if (r.has("rope_base")) o.rope_base = r.number("rope_base", 10000.0);
  o.rope_dim = integer("rope_dim", limits::kMaxHeadDim, 2);
  o.position_offset = integer("position_offset", limits::kMaxPositionOffset, 0);
  o.top_k = integer("top_k", limits::kMaxTokens, 0);
  o.indexer_heads = integer("indexer_heads", limits::kMaxHeads);
  o.indexer_dim = integer("indexer_dim", limits::kMaxHeadDim);
  return o;
}

// The modes that replace a pipeline step's equation: the shift experiment, MLA's naive RoPE, the online softmax.
void read_step_modes(const JsonFields& r, LessonPage& p) {
  p.shift_experiment = r.boolean("shift_experiment", false);
  p.naive_rope = r.boolean("naive_rope", false);
  p.sparsity_loss = r.boolean("sparsity_loss", false);
  if (p.shift_experiment + p.naive_rope + p.sparsity_loss + r.has("geometry") + r.has("online") > 1)
    throw InputError(r.child("shift_experiment"),
                     "a step shows one mode at a time, but more than one of "
                     "shift_experiment, naive_rope, sparsity_loss, geometry and online is given");
  if (r.has("geometry")) {
    const JsonFields g(r.at("geometry"), r.child("geometry"), {"query", "key", "pair"}, "lesson", r.source());
    p.geometry = LessonPage::Geometry{.query = g.integer("query", -1, 0, limits::kMaxTokens - 1),
                                      .key = g.integer("key", 0, 0, limits::kMaxTokens - 1),
                                      .pair = g.integer("pair", 0, 0, limits::kMaxHeadDim)};
  }
  if (!r.has("online")) return;
  const JsonFields o(r.at("online"), r.child("online"), {"row", "block", "blocks_shown"}, "lesson", r.source());
  p.online = LessonPage::Online{.row = o.integer("row", -1, 0, limits::kMaxTokens - 1),
                                .block = o.integer("block", 2, 1, limits::kMaxTokens),
                                .shown = o.integer("blocks_shown", 1, 1, limits::kMaxTokens)};
}

// A key that does nothing in this view is a mistake in the lesson, like an unknown key.
void check_view_keys(const JsonFields& r, View view) {
  const std::string_view actual = view_name(view);
  if (view != View::Pipeline)
    for (const char* key : {"step", "head", "highlight", "heads_panel", "absorbed", "shift_experiment", "naive_rope",
                            "online", "geometry", "sparsity_loss", "focus", "projection"})
      r.only_for(key, "view pipeline", actual);
  if (view != View::Decode)
    for (const char* key : {"decode_tokens", "decode_section", "decode_last_section"})
      r.only_for(key, "view decode", actual);
  if (view != View::Model)
    for (const char* key : {"model_section", "model_outline"}) r.only_for(key, "view model", actual);
  if (view != View::Train)
    for (const char* key : {"train_steps", "train_gradient", "train_chart"}) r.only_for(key, "view train", actual);
  if (view != View::Real)
    for (const char* key : {"real_text", "real_ranked", "real_knock_out_top"}) r.only_for(key, "view real", actual);
  if (view != View::Compare && view != View::Memory && view != View::Cost)
    r.only_for("preset", "views compare, memory and cost", actual);
  if (view != View::Compare) r.only_for("real_measure", "view compare", actual);
}

// The Model view's parts a page outlines, by name; whether the model has them is checked with the model.
std::vector<ModelPart> read_model_outline(const json& j, const std::string& path) {
  if (!j.is_array() || j.empty())
    throw InputError(path, std::string("expected an array of one or more of ") + kModelPartNames + " but found " +
                               describe_found(j));
  std::vector<ModelPart> parts;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::optional<ModelPart> part = j[i].is_string() ? parse_model_part(j[i].get<std::string>()) : std::nullopt;
    if (!part)
      throw InputError(index_path(path, i),
                       std::string("expected ") + kModelPartNames + " but found " + describe_found(j[i]));
    parts.push_back(*part);
  }
  return parts;
}

// A page shows a scenario, or a model: on view model, or one of its layers on view pipeline.
void read_model_keys(const JsonFields& r, LessonPage& p) {
  // The Train and Real model views show their own run; the measured tab the Real model view's model.
  if (p.view == View::Train || p.on_real_model()) {
    for (const char* key : {"scenario", "model", "model_tokens", "layer", "overrides"})
      r.only_for(key, "pages with a scenario or a model", "a page on view " + std::string(view_name(p.view)));
    return;
  }
  if (!r.has("model")) {
    if (p.view == View::Model) throw InputError(r.child("model"), "a page on view model names its model file");
    for (const char* key : {"model_tokens", "layer"}) r.only_for(key, "pages with a model", "a page without one");
    p.scenario = r.nonempty_string("scenario");
    return;
  }
  if (r.has("scenario"))
    throw InputError(r.child("scenario"), "a page with a model shows the model (or one of its layers), not a scenario");
  r.only_for("overrides", "pages with a scenario", "a page with a model");
  p.model = r.nonempty_string("model");
  if (r.has("model_tokens")) p.model_tokens = r.nonempty_string("model_tokens");
  if (r.has("model_section")) {
    const std::string section = r.nonempty_string("model_section");
    if (section != "input" && section != "output")
      throw InputError(r.child("model_section"), "expected input or output but found \"" + section + "\"");
    p.model_output = section == "output";
  }
  if (r.has("model_outline")) p.model_outline = read_model_outline(r.at("model_outline"), r.child("model_outline"));
  if (r.has("layer")) {
    if (p.view != View::Pipeline) r.only_for("layer", "view pipeline", view_name(p.view));
    p.layer = r.integer("layer", 0, 0, limits::kMaxLayers);
  } else if (p.view != View::Model) {
    throw InputError(r.child("model"),
                     "a model is shown on view model, or one of its layers (\"layer\") on view "
                     "pipeline; this page is on view " +
                         std::string(view_name(p.view)));
  }
}

// A page on the Train view: the step of the default run it shows, and the head whose gradient it opens.
void read_train_keys(const JsonFields& r, LessonPage& p) {
  const TrainSettings run;
  r.require("train_steps");
  p.train_steps = r.integer("train_steps", 0, 0, run.steps);
  p.train_chart =
      r.choice("train_chart", TrainChart::All, parse_train_chart, "loss | scores | loss_and_scores | heads");
  if (!r.has("train_gradient")) return;
  // The gradient tab takes the whole view: a chart the page is about would have no room.
  if (r.has("train_chart"))
    throw InputError(r.child("train_chart"), "a page with train_gradient is about the gradient, not a chart");
  const json& g = r.at("train_gradient");
  const std::string at = r.child("train_gradient");
  if (!g.is_array() || g.size() != 2 || !g[0].is_number_integer() || !g[1].is_number_integer())
    throw InputError(at, "expected [layer, head] but found " + describe_found(g));
  // Compared as 64-bit values (4294967296 must not wrap to layer 0), quoted as written.
  const auto below = [](const json& v, int count) {
    return v.get<std::int64_t>() >= 0 && v.get<std::uint64_t>() < static_cast<std::uint64_t>(count);
  };
  if (!below(g[0], run.shape.layers) || !below(g[1], run.shape.heads))
    throw InputError(at, "the run has " + plural(run.shape.layers, "layer") + " of " + plural(run.shape.heads, "head") +
                             ", numbered from 0, but found [" + g[0].dump() + ", " + g[1].dump() + "]");
  p.train_gradient = std::pair{g[0].get<int>(), g[1].get<int>()};
}

// A page on the Real model view: the text it types, the score it ranks the heads by, the top heads it knocks out.
void read_real_keys(const JsonFields& r, LessonPage& p) {
  if (r.has("real_text")) p.real_text = r.nonempty_string("real_text");
  if (r.has("real_ranked"))
    p.real_ranked = r.choice("real_ranked", HeadRole::Induction, parse_head_score_name,
                             "previous_token | induction | duplicate_token | first_token");
  if (!r.has("real_knock_out_top")) return;
  if (!p.real_ranked)
    throw InputError(r.child("real_knock_out_top"),
                     "knocks out the top heads by the page's real_ranked score, but the page gives none");
  p.real_knock_out_top = r.integer("real_knock_out_top", 0, 1, kMaxLessonKnockOut);
}

LessonPage read_page(const json& j, const std::string& path, const JsonSource* source) {
  const JsonFields r(j, path,
                     {"title",
                      "text",
                      "scenario",
                      "view",
                      "step",
                      "head",
                      "decode_tokens",
                      "decode_section",
                      "preset",
                      "highlight",
                      "absorbed",
                      "shift_experiment",
                      "naive_rope",
                      "online",
                      "geometry",
                      "sparsity_loss",
                      "overrides",
                      "experiment",
                      "d_k",
                      "model",
                      "model_tokens",
                      "layer",
                      "model_section",
                      "train_steps",
                      "train_gradient",
                      "model_outline",
                      "focus",
                      "heads_panel",
                      "train_chart",
                      "decode_last_section",
                      "projection",
                      "real_text",
                      "real_ranked",
                      "real_knock_out_top",
                      "real_measure"},
                     "lesson", source);
  LessonPage p;
  p.title = r.nonempty_string("title");
  p.text = r.nonempty_string("text");
  p.view = r.choice("view", View::Pipeline, parse_view, view_names(" | "));
  check_view_keys(r, p.view);
  if (r.has("real_measure")) {
    const std::string on = r.nonempty_string("real_measure");
    if (on != "text" && on != "sonnets")
      throw InputError(r.child("real_measure"), "expected text or sonnets but found " + r.found("real_measure"));
    p.real_measure_sonnets = on == "sonnets";
  }
  read_model_keys(r, p);
  p.step = read_step(r);
  p.head = r.integer("head", 0, 0, limits::kMaxHeads);
  p.decode_tokens = r.integer("decode_tokens", 1, 1, limits::kMaxTokens);
  p.decode_section = r.integer("decode_section", 1, 1, 5);
  if (r.has("decode_last_section")) p.decode_last_section = r.integer("decode_last_section", 5, p.decode_section, 5);
  if (r.has("preset")) p.preset = r.nonempty_string("preset");
  if (r.has("highlight")) p.highlight = read_highlight(r.at("highlight"), r.child("highlight"), source);
  if (r.has("focus")) p.focus = read_focus(r.at("focus"), r.child("focus"), source);
  p.heads_panel = r.boolean("heads_panel", false);
  if (r.has("projection")) p.projection = r.nonempty_string("projection");
  p.absorbed = r.boolean("absorbed", false);
  read_step_modes(r, p);
  if (r.has("overrides")) p.overrides = read_overrides(r.at("overrides"), r.child("overrides"), source);
  if (r.has("experiment"))
    p.experiment = r.choice("experiment", Experiment::SqrtDk, parse_experiment, join(kExperimentNames, " | "));
  if (!p.experiment) r.only_for("d_k", "pages with the sqrt_dk experiment", "a page without an experiment");
  if (p.view == View::Train) read_train_keys(r, p);
  if (p.view == View::Real) read_real_keys(r, p);
  if (r.has("d_k")) {
    p.sqrt_dk = r.integer("d_k", kSqrtDkDefault, 1, 1 << 20);
    if (std::find(std::begin(kSqrtDkChoices), std::end(kSqrtDkChoices), *p.sqrt_dk) == std::end(kSqrtDkChoices)) {
      std::string choices;  // the experiment's own list, so the message follows it
      for (const int d : kSqrtDkChoices) choices += (choices.empty() ? "" : ", ") + std::to_string(d);
      throw InputError(r.child("d_k"),
                       "expected one of the experiment's " + choices + " but found " + std::to_string(*p.sqrt_dk));
    }
  }
  return p;
}

// --- the page's scenario ----------------------------------------------------------------------------

// How a scenario file is named in messages: by the last two folders ("assets/scenarios/x.json"), the
// same wherever the app is installed.
std::string folder_and_name(const std::filesystem::path& dir) {
  return (dir.parent_path().filename() / dir.filename()).generic_string();
}

Scenario load_page_file(const std::string& file, const std::filesystem::path& dir, const std::string& field) {
  const std::filesystem::path name(file);
  if (name.filename() != name || file == "." || file == "..")
    throw InputError(
        field, "expected a file name in " + folder_and_name(dir) + " (no folders) but found string \"" + file + "\"");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / name, ec))
    throw InputError(field, "no such scenario file " + folder_and_name(dir) + "/" + file);
  try {
    return load_scenario_file(dir / name);
  } catch (const InputError& e) {
    throw InputError(field, file + ": " + e.what());
  }
}

// A model page's model file and tokens; `field` names the page's "model" in messages.
ModelInput page_model_input(const LessonPage& page, const std::filesystem::path& scenarios_dir,
                            const std::string& field) {
  const std::filesystem::path dir = lesson_page_model_path(page, scenarios_dir).parent_path();
  const std::filesystem::path name(page.model);
  if (name.filename() != name || page.model == "." || page.model == "..")
    throw InputError(field, "expected a file name in " + folder_and_name(dir) + " (no folders) but found string \"" +
                                page.model + "\"");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / name, ec))
    throw InputError(field, "no such model file " + folder_and_name(dir) + "/" + page.model);
  Model m;
  try {
    m = load_model_file(dir / name);
  } catch (const InputError& e) {
    throw InputError(field, page.model + ": " + e.what());
  }
  return model_input(std::move(m), page.model_tokens);
}

// `path` names the overrides in messages; a problem the scenario then has is reported under it too.
void apply_page_overrides(Scenario& s, const ConfigOverrides& o, const std::string& file, const std::string& path) {
  const OverrideField field = [&](std::string_view key) { return child_path(path, std::string(key)); };
  try {
    apply_overrides(s, o, field);
    validate(s);
  } catch (const InputError& e) {
    if (e.field().starts_with(path)) throw;  // already names the override
    throw InputError(path, file + " with these overrides is invalid: " + e.what());
  }
}

struct PageScenario {
  Scenario scenario;
  Trace trace;
};

// The scenario of a page and its trace; `path` is the page's path in messages ("pages[2]", or "").
// The attention a page's overrides leave, in words: the file's own description no longer fits it.
std::string describe_attention(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  std::string d = plural(a.heads, "head") + " of dimension " + std::to_string(a.head_dim) + " over d_model " +
                  std::to_string(s.d_model());
  if (a.variant != Variant::Mha) d += " (" + std::string(to_string(a.variant)) + ")";
  d += a.mask == MaskKind::None ? ", no mask" : ", mask " + std::string(to_string(a.mask));
  if (a.mask == MaskKind::SlidingWindow) d += " of " + std::to_string(a.window);
  d += a.scale ? ", scores scaled by 1/\u221Ad" : ", scores not scaled";
  if (a.kernel != Kernel::Softmax) d += ", kernel " + std::string(to_string(a.kernel));
  if (a.positions != Positions::None) d += ", " + std::string(to_string(a.positions)) + " positions";
  if (a.sparse) d += ", sparse attention over the top " + std::to_string(a.sparse->top_k) + " keys";
  return d;
}

// A model page's model and tokens, computed up to `layers` (all: -1), each problem under the page's keys.
struct PageModel {
  Model resolved;
  std::vector<std::string> tokens;
  ModelTrace trace;
};

PageModel page_model(const LessonPage& page, const std::filesystem::path& dir, const std::string& path, int layers) {
  const ModelInput in = page_model_input(page, dir, child_path(path, "model"));
  try {
    check_model(in.model);
  } catch (const InputError& e) {
    throw InputError(child_path(path, "model"), page.model + ": " + e.what());
  }
  Model resolved = resolve_model(in.model);
  if (page.layer && *page.layer >= static_cast<int>(resolved.layers.size()))
    throw InputError(child_path(path, "layer"), page.model + " has " +
                                                    plural(static_cast<std::int64_t>(resolved.layers.size()), "layer") +
                                                    " (numbered from 0) but found " + std::to_string(*page.layer));
  try {
    // The page reads what its layer's attention read: no layer's heads are kept.
    ModelTrace t = run_model(resolved, in.tokens, ModelRunOptions{.layers = layers, .kept = std::vector<int>{}});
    return {std::move(resolved), in.tokens, std::move(t)};
  } catch (const InputError& e) {
    throw InputError(child_path(path, "model_tokens"), page.model + ": " + e.what());
  }
}

PageScenario page_scenario(const LessonPage& page, const std::filesystem::path& dir, const std::string& path) {
  if (!page.model.empty()) {
    const PageModel pm = page_model(page, dir, path, page.layer.value_or(0) + 1);
    Scenario s = layer_scenario(pm.resolved, page.layer.value_or(0), pm.trace);
    Trace t = compute_trace(s);
    return {std::move(s), std::move(t)};
  }
  Scenario s = load_page_file(page.scenario, dir, child_path(path, "scenario"));
  if (page.overrides.any()) {
    apply_page_overrides(s, page.overrides, page.scenario, child_path(path, "overrides"));
    s.description = "As changed by this lesson page: " + describe_attention(s) + ".";
  }
  Trace t = compute_trace(s);
  return {std::move(s), std::move(t)};
}

// --- checking a page against what it shows ----------------------------------------------------------

// What a page shows, in messages: its scenario file, or its model's layer.
std::string shown_source(const LessonPage& p) {
  return p.model.empty() ? p.scenario : p.model + " layer " + std::to_string(p.layer.value_or(0));
}

void check_head(const LessonPage& p, const Trace& t, const std::string& path) {
  const int heads = static_cast<int>(t.heads.size());
  if (p.head >= heads)
    throw InputError(child_path(path, "head"), "the scenario has " + plural(heads, "head") +
                                                   " (numbered from 0) but found " + std::to_string(p.head));
}

void check_decode(const LessonPage& p, const Scenario& s, const std::string& path) {
  try {
    decode(s);
  } catch (const InputError& e) {
    throw InputError(child_path(path, "view"), shown_source(p) + " cannot be shown in view decode: " + e.what());
  }
  if (p.decode_tokens > s.n_q())
    throw InputError(child_path(path, "decode_tokens"), "the scenario has " + plural(s.n_q(), "token") + ", so 1 to " +
                                                            std::to_string(s.n_q()) + ", but found " +
                                                            std::to_string(p.decode_tokens));
}

void check_highlight(const LessonPage& p, const Trace& t, const std::string& path) {
  const StepMatrix m = step_result(t, p.step, p.head);
  for (std::size_t i = 0; i < p.highlight.size(); ++i) {
    const auto [row, col] = p.highlight[i];
    if (row >= m.m->rows() || col >= m.m->cols())
      throw InputError(index_path(child_path(path, "highlight"), i),
                       "the " + m.name + " matrix of step " + std::string(step_info(p.step).name) + " is " +
                           std::to_string(m.m->rows()) + " x " + std::to_string(m.m->cols()) +
                           " (rows and columns numbered from 0) but found [" + std::to_string(row) + ", " +
                           std::to_string(col) + "]");
  }
}

// Every matrix a page focuses on is one of its step's, and every row and column it names is one of that matrix's.
void check_focus(const LessonPage& p, const Trace& t, const std::string& path) {
  if (p.focus.empty()) return;
  const Step step = applying_step(p.step, t.attention);
  const std::vector<FocusOperand> operands = focus_operands(t, step);
  const std::string at = child_path(path, "focus");
  if (operands.empty())
    throw InputError(at, shown_source(p) + ": step " + std::string(step_info(step).name) +
                             " offers no focus (with W_O the concat step does: concat, W_O, output; and the output "
                             "step: head 0, ..., output)");
  std::vector<std::string_view> names;
  for (const FocusOperand& o : operands) names.push_back(o.name);
  for (const FocusTerm& term : p.focus) {
    const auto o =
        std::find_if(operands.begin(), operands.end(), [&](const FocusOperand& x) { return x.name == term.name; });
    if (o == operands.end())
      throw InputError(child_path(at, term.name), "expected one of the matrices of step " +
                                                      std::string(step_info(step).name) + ": " + join(names, ", "));
    const auto check_axis = [&](const std::vector<int>& indices, const char* axis, Eigen::Index n) {
      for (std::size_t i = 0; i < indices.size(); ++i)
        if (indices[i] >= n)
          throw InputError(index_path(child_path(child_path(at, term.name), axis), i),
                           term.name + " is " + std::to_string(o->rows) + " x " + std::to_string(o->cols) + " (" +
                               axis + " numbered from 0) but found " + std::to_string(indices[i]));
    };
    check_axis(term.axes.rows, "rows", o->rows);
    check_axis(term.axes.cols, "cols", o->cols);
  }
}

void check_absorbed(const LessonPage& p, const Trace& t, const std::string& path) {
  if (p.absorbed && !t.absorbed)
    throw InputError(child_path(path, "absorbed"), "the absorbed form is MLA's, but " + shown_source(p) +
                                                       " (after the overrides) is " +
                                                       std::string(to_string(t.attention.variant)));
}

void check_step(const LessonPage& p, const Trace& t, const std::string& path) {
  if (p.view != View::Pipeline || step_applies(p.step, t.attention)) return;
  throw InputError(child_path(path, "step"), shown_source(p) + " (after the overrides) has no " +
                                                 std::string(step_info(p.step).name) + " step: its steps are " +
                                                 step_names(t.attention));
}

// A mode must be one the page's step has: the shift experiment on the positions or rope step, the naive RoPE on
// MLA's, the online softmax on a softmax step, with a row and blocks the trace has.
void check_step_modes(const LessonPage& p, const Trace& t, const std::string& path) {
  const Step s = applying_step(p.step, t.attention);
  const auto refuse = [&](const char* key, const std::string& why) {
    throw InputError(child_path(path, key), shown_source(p) + " (after the overrides): " + why);
  };
  if (p.shift_experiment && s != Step::Positions && s != Step::Rope)
    refuse("shift_experiment", "the shift experiment is shown on the positions or rope step, not on " +
                                   std::string(step_info(p.step).name));
  if (p.naive_rope && (s != Step::Rope || !decoupled_rope(t.attention)))
    refuse("naive_rope", "turning the expanded keys is shown on the rope step of mla with rope");
  if (!p.projection.empty()) {
    const bool mla = t.attention.variant == Variant::Mla;
    if (s != Step::Projections) refuse("projection", "a projection is chosen on the projections step");
    if (projection_slot(p.projection, mla) < 0)
      refuse("projection",
             std::string("expected one of ") + (mla ? "latent, " : "") + "q, k, v but found \"" + p.projection + "\"");
  }
  if (p.sparsity_loss && s != Step::Selection)
    refuse("sparsity_loss", "what sparsity lost is shown on the selection step of sparse attention");
  if (p.geometry) {
    if (s != Step::Scores && s != Step::Rope) refuse("geometry", "the geometry is shown on the scores or rope step");
    const int pairs = static_cast<int>(plane_pairs(t).size());
    if (p.geometry->query >= t.n_q() || p.geometry->key >= t.n_kv() || p.geometry->pair >= pairs)
      refuse("geometry", "its query, key and pair are numbered from 0 below N_Q = " + std::to_string(t.n_q()) +
                             ", N_KV = " + std::to_string(t.n_kv()) + " and " + plural(pairs, "pair") + " of dims");
  }
  if (!p.online) return;
  if (s != Step::Softmax || t.attention.kernel != Kernel::Softmax)
    refuse("online", "the online softmax is a mode of the softmax step, with the softmax kernel");
  const int row = p.online->row < 0 ? t.n_q() - 1 : p.online->row;
  if (row >= t.n_q())
    refuse("online", "online.row " + std::to_string(row) + " is past the last query " + std::to_string(t.n_q() - 1));
  const int blocks = (t.n_kv() + p.online->block - 1) / p.online->block;
  if (p.online->shown > blocks)
    refuse("online", "online.blocks_shown " + std::to_string(p.online->shown) + " is more than the row's " +
                         plural(blocks, "block") + " of " + std::to_string(p.online->block) + " keys");
}

// Every part a page outlines is a part of its model: a layer it has, a feed-forward sublayer if it has one.
void check_model_outline(const LessonPage& p, const Model& m, const std::string& path) {
  const int layers = static_cast<int>(m.layers.size());
  for (std::size_t i = 0; i < p.model_outline.size(); ++i) {
    const ModelPart& part = p.model_outline[i];
    if (part.place != ModelPart::Place::Layer) continue;
    const std::string at = index_path(child_path(path, "model_outline"), i);
    const std::string found = "layer " + std::to_string(part.layer) +
                              (part.sublayer == 1   ? " ffn"
                               : part.sublayer == 0 ? " attention"
                                                    : "");
    if (part.layer >= layers)
      throw InputError(at,
                       p.model + " has " + plural(layers, "layer") + " (numbered from 0) but found \"" + found + "\"");
    if (part.sublayer == 1 && m.ffn.kind == FfnKind::None)
      throw InputError(at, p.model + " has no feed-forward sublayer but found \"" + found + "\"");
  }
}

void check_page(const LessonPage& p, const std::filesystem::path& dir, const std::string& path) {
  // read_train_keys checked a Train page against the run; a Real model page's model is the one the user opens.
  if (p.view == View::Train || p.on_real_model()) return;
  if (p.view == View::Model) {
    check_model_outline(p, page_model(p, dir, path, -1).resolved, path);
    return;
  }
  const PageScenario ps = page_scenario(p, dir, path);
  check_step(p, ps.trace, path);
  check_step_modes(p, ps.trace, path);
  for (const auto& [key, section] :
       {std::pair{"decode_section", p.decode_section}, std::pair{"decode_last_section", p.decode_last_section}})
    if (p.view == View::Decode && section == 5 && !ps.trace.indexer)
      throw InputError(
          child_path(path, key),
          "section 5 exists only with sparse attention (the indexer's section); found 5 for " + shown_source(p));
  check_head(p, ps.trace, path);
  check_absorbed(p, ps.trace, path);
  if (p.view == View::Decode) check_decode(p, ps.scenario, path);
  check_highlight(p, ps.trace, path);
  check_focus(p, ps.trace, path);
}

// The leading number of "12_masks.json", or nothing.
std::optional<long> order_number(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  std::size_t digits = 0;
  while (digits < name.size() && digits < 9 && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  return std::stol(name.substr(0, digits));
}

}  // namespace

int projection_slot(std::string_view name, bool mla) {
  const int first = mla ? 1 : 0;  // MLA's latent comes first
  if (name.empty()) return 0;
  if (name == "latent") return mla ? 0 : -1;
  if (name == "q") return first;
  if (name == "k") return first + 1;
  if (name == "v") return first + 2;
  return -1;
}

std::string_view experiment_name(Experiment e) { return kExperimentNames[static_cast<std::size_t>(e)]; }

Lesson load_lesson_file(const std::filesystem::path& path, const std::filesystem::path& scenarios_dir) {
  const std::string text = read_document_file(path, kMaxLessonFileBytes, "a lesson file", limits::kDefaultMemoryBudget);
  const JsonSource source{text, ""};
  const json j = parse_json_document(text);
  const JsonFields r(j, "", {"name", "title", "summary", "pages"}, "lesson", &source);
  Lesson lesson;
  lesson.name = r.nonempty_string("name");
  lesson.title = r.nonempty_string("title");
  lesson.summary = r.nonempty_string("summary");
  const json& pages = r.require("pages");
  if (!pages.is_array()) throw InputError("pages", "expected an array of pages but found " + describe_found(pages));
  if (pages.empty()) throw InputError("pages", "expected at least one page but found none");
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const std::string page_path = index_path("pages", i);
    lesson.pages.push_back(read_page(pages[i], page_path, &source));
    check_page(lesson.pages.back(), scenarios_dir, page_path);
  }
  return lesson;
}

std::vector<std::filesystem::path> lesson_files(const std::filesystem::path& lessons_dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(lessons_dir, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json") files.push_back(entry.path());
  // Numbered files first by number, so 10_ follows 9_; then the rest by name.
  const auto key = [](const std::filesystem::path& p) {
    const std::optional<long> n = order_number(p);
    return std::make_tuple(!n.has_value(), n.value_or(0), p.filename().string());
  };
  std::sort(files.begin(), files.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return files;
}

Scenario lesson_page_scenario(const LessonPage& page, const std::filesystem::path& scenarios_dir) {
  return page_scenario(page, scenarios_dir, "").scenario;
}

std::filesystem::path lesson_page_model_path(const LessonPage& page, const std::filesystem::path& scenarios_dir) {
  return scenarios_dir.parent_path() / "models" / page.model;
}

ModelInput lesson_page_model(const LessonPage& page, const std::filesystem::path& scenarios_dir) {
  return page_model_input(page, scenarios_dir, "model");
}

std::optional<HeadRole> parse_head_score_name(std::string_view name) {
  if (name == "previous_token") return HeadRole::PreviousToken;
  if (name == "induction") return HeadRole::Induction;
  if (name == "duplicate_token") return HeadRole::DuplicateToken;
  if (name == "first_token") return HeadRole::FirstToken;
  return std::nullopt;
}

std::optional<TrainChart> parse_train_chart(std::string_view name) {
  if (name == "loss") return TrainChart::Loss;
  if (name == "scores") return TrainChart::Scores;
  if (name == "loss_and_scores") return TrainChart::LossAndScores;
  if (name == "heads") return TrainChart::Heads;
  return std::nullopt;
}

}  // namespace attn::ui
