#include "app/gui/gui_options.h"

#include <charconv>

#include "app/cli/args.h"
#include "app/cli/assets.h"
#include "app/cli/cli.h"
#include "app/cli/output_files.h"
#include "app/gui/user_files.h"
#include "core/io/atomic_file.h"
#include "core/memory_budget.h"
#include "core/scenario.h"
#include "ui/logic/recompute.h"

namespace attn::gui {

// From the command line's library.
using cli::Args;
using cli::UsageError;

const char* const kGuiHelp =
    "attention-lab [SCENARIO] [options]\n"
    "  Opens the desktop app on SCENARIO (default: the worked example \"the cat sat\").\n"
    "  --step N|NAME     start at step N (0 = inputs ... 9 = output) or by name: inputs, projections,\n"
    "                    scores, scale, mask, softmax, weighted_sum, head_outputs, concat, output; with\n"
    "                    positions or sparse attention also positions, rope, selection (numbers count them)\n"
    "  --head N          start on head N\n"
    "  --cell ROW,COL    explain this cell of the step's result as if the pointer were on it\n"
    "  --view V          start on a view: pipeline, decode, compare, memory, cost, model, train, real\n"
    "  --train-steps N   the Train view's run trained to step N before the first frame (starts on that view)\n"
    "  --train-gradient L.H  the Train view's gradient tab on head H of layer L\n"
    "  --decode-tokens N the decode view after N tokens (1 = the first token has arrived; at most 256)\n"
    "  --preset NAME     the model the compare, memory and cost views show (see attention-lab kv --list)\n"
    "  --model FILE      the Model view's model (default: assets/models/tiny.json); starts on the Model view\n"
    "  --model-tokens T  its tokens, separated by spaces (each from its vocabulary)\n"
    "  --model FOLDER    a Hugging Face model folder in the Real model view (starts on it)\n"
    "  --model-text T    the text it reads (default: \"The cat sat on the mat. The cat sat on the mat.\")\n"
    "  --ablate LIST     heads knocked out, layer.head or a whole layer (\"5.1,5.5,6\"), as run --ablate\n"
    "  --ablate-mode M   zero (default) or mean\n"
    "  --to gqa --kv-heads G | --to mla --latent-dim C [--layers LIST]\n"
    "                    the model converted in memory as `attention-lab convert` would write it (GQA: each\n"
    "                    group's key/value heads averaged; MLA: the best low-rank latent), every layer or LIST\n"
    "  --measure T       the Compare view's trade-off of the model's smaller caches, measured on T: text (the\n"
    "                    text it reads) or sonnets, before the window opens\n"
    "  --layer L         the pipeline on layer L of the model (from 0), with the way back to the Model view\n"
    "  --size WxH        window size in pixels (default 1600x900)\n"
    "  --screenshot PNG  render a few frames, write the window to PNG and exit (works under xvfb-run);\n"
    "                    it neither reads nor writes your settings and recovery file\n"
    "                    (--screenshot and --dump-state never write over a file the window reads: SCENARIO,\n"
    "                    --model, or anything in the assets folder or the settings folder)\n"
    "  --presentation    start in presentation mode (F5): no editors, larger text, high contrast\n"
    "  --gallery         start on View > Widget gallery: every widget with its options\n"
    "  --theme T         dark or light\n"
    "  --zoom PERCENT    text and cells enlarged (75-300, as View > Zoom; default 100, or the settings file's)\n"
    "  --lesson NAME     open a lesson (the_cat_sat, sqrt_dk, masks, multi_head, kv_cache, variants,\n"
    "                    positions, sparse_attention, online_softmax, model, induction, real_model)\n"
    "  --page N          its page, from 1\n"
    "  --frames N        frames to render before the screenshot (default 6)\n"
    "  --tokens T        start with T tokens (the scale slider: new ones get embeddings drawn from the seed)\n"
    "  --bench-frames N  render N frames with a fresh edit in each, print the median and p99 frame time and\n"
    "                    the median edit-to-updated-view latency, and exit\n"
    "  --soak N          perform N seeded random actions (edits, steps, variant and mask switches, tokens,\n"
    "                    undo, keys), a frame after each, checking the views against a fresh recompute;\n"
    "                    exits 1 at the first inconsistency and prints the peak memory\n"
    "  --seed S          the soak's seed (default 1); like trace's --seed it is also the scenario's seed\n"
    "  --check-layout    with a capture (or alone, for a capture without a picture): list what a class could\n"
    "                    not read in the last frame (text cut off or drawn over other text, labels shortened,\n"
    "                    cells too small for their value, lesson outlines on no cell, what a page is about\n"
    "                    out of sight, text under 4.5:1 contrast) and exit 1 if anything\n"
    "  --check-layout-sweep  the same over every lesson page and every view, at 1280x720 and 1600x900,\n"
    "                    normal and presentation, dark and light; each finding names its configuration\n"
    "  --skip-training-pages  with --check-layout-sweep: leave out the lesson pages that train a model first\n"
    "                    (each is judged at its run's step; under sanitizers the training takes minutes)\n"
    "  --check-damage    every frame drawn only where it changed is drawn whole too and the two compared pixel\n"
    "                    for pixel; on exit, how many were and exit 1 if any differed\n"
    "  --memory-budget SIZE  what the window may hold (as for every command, below); without it, the settings\n"
    "                    file's \"memory_budget\", else the default: the tokens slider stops there\n"
    "  --dump-state JSON on exit, write the view, step (number and name), head, decoded tokens, scenario and tokens\n"
    "  and every option of trace that overrides the file (--variant, --kv-heads, --mask, --heads, ...)\n";

namespace {

// The decode view steps through at most ui::kMaxDecodeTokens tokens: a start past them could never be shown.
int decode_tokens(Args& args, const std::string& word) {
  const auto n = static_cast<int>(args.integer(word, 1, 1 << 20));
  if (n > ui::kMaxDecodeTokens)
    throw UsageError(word + ": the decode view steps through at most " + std::to_string(ui::kMaxDecodeTokens) +
                     " tokens (found " + std::to_string(n) + ")");
  return n;
}

// --screenshot and --dump-state are written at the end of the run: checked before the window opens (an empty name
// too), never over the files it reads, nor over each other. What it reads without being told counts: the shipped
// scenario and model when none is given, and everything in the assets folder (presets, lessons, their scenarios,
// texts) and in its settings folder (settings, recovery entries).
void check_gui_outputs(const GuiOptions& o, bool screenshot, bool dump_state) {
  // A model folder's every file is read (and a hub snapshot's links lead into its blobs): none is written over.
  cli::ModelFolderInputs model = o.model ? cli::model_folder_inputs(*o.model) : cli::ModelFolderInputs{};
  std::vector<cli::NamedInput> inputs = std::move(model.files), folders = std::move(model.folders);
  inputs.push_back(o.scenario.empty() ? cli::NamedInput{"scenario", cli::default_scenario().string()}
                                      : cli::NamedInput{"SCENARIO", o.scenario});
  inputs.push_back(o.model ? cli::NamedInput{"--model", *o.model}
                           : cli::NamedInput{"model", cli::default_model().string()});
  folders.push_back({"settings folder", config_dir().string()});  // and the assets
  if (screenshot) cli::check_output_option("", "--screenshot", o.screenshot, inputs, folders);
  if (dump_state) cli::check_output_option("", "--dump-state", o.dump_state, inputs, folders);
  if (screenshot && dump_state && same_file(o.dump_state, o.screenshot))
    throw UsageError("--dump-state and --screenshot name the same file: give them two");
}

// Options that only mean something on one view, refused beside --view of another: dropping them without a word
// would leave the user wondering where they went.
void check_view_options(const GuiOptions& o) {
  if (!o.view) return;
  const auto only_on = [&](bool given, const char* option, const char* view) {
    if (given && *o.view != view)
      throw UsageError(std::string(option) + ": only on the " + view + " view, but --view is " + *o.view);
  };
  only_on(o.step.has_value(), "--step", "pipeline");
  only_on(o.cell.has_value(), "--cell", "pipeline");
  only_on(o.decode_tokens.has_value(), "--decode-tokens", "decode");
  only_on(o.train_steps.has_value(), "--train-steps", "train");
  if (o.lesson) throw UsageError("--view: a lesson page opens the view it explains; give --lesson or --view");
}

}  // namespace

GuiOptions parse_gui_args(std::span<const std::string> words) {
  GuiOptions o;
  Args args(words);
  bool screenshot = false, dump_state = false;  // given, even as ""
  bool page = false;
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--screenshot") o.screenshot = args.value(word), screenshot = true;
    else if (word == "--step") o.step = args.value(word);
    else if (word == "--head") o.head = static_cast<int>(args.integer(word, 0, 1 << 20));
    else if (word == "--dump-state") o.dump_state = args.value(word), dump_state = true;
    else if (word == "--view") o.view = args.value(word);
    else if (word == "--decode-tokens") o.decode_tokens = decode_tokens(args, word);
    else if (o.overrides.parse(word, args)) continue;
    else if (word == "--preset") o.preset = args.value(word);
    else if (word == "--model") o.model = args.value(word);
    else if (word == "--model-tokens") o.model_tokens = args.value(word);
    else if (word == "--model-text") o.model_text = args.value(word);
    else if (word == "--ablate") o.ablate = args.value(word);
    else if (word == "--ablate-mode") o.ablate_mode = args.value(word);
    else if (parse_conversion_option(word, args, o.conversion)) continue;
    else if (word == "--measure") {
      o.measure = args.value(word);
      if (*o.measure != "text" && *o.measure != "sonnets")
        throw UsageError("--measure: must be text | sonnets (found \"" + escaped_text(*o.measure) + "\")");
    } else if (word == "--train-gradient") {
      const std::string v = args.value(word);
      const auto dot = v.find('.');
      int l = -1, h = -1;
      const bool ok = dot != std::string::npos && std::from_chars(v.data(), v.data() + dot, l).ec == std::errc() &&
                      std::from_chars(v.data() + dot + 1, v.data() + v.size(), h).ec == std::errc() && l >= 0 && h >= 0;
      if (!ok) throw UsageError("--train-gradient: expected LAYER.HEAD (such as 1.2) but found '" + v + "'");
      o.train_gradient = std::pair{l, h};
    } else if (word == "--train-steps") o.train_steps = static_cast<int>(args.integer(word, 0, 100000));
    else if (word == "--layer") o.layer = static_cast<int>(args.integer(word, 0, 1 << 16));
    else if (word == "--memory-budget") {
      try {
        o.memory_budget = parse_memory_size(args.value(word), word);
      } catch (const InputError& e) {
        throw UsageError(e.what());
      }
    } else if (word == "--presentation") o.presentation = true;
    else if (word == "--gallery") o.gallery = true;
    else if (word == "--check-layout") o.check_layout = true;
    else if (word == "--check-layout-sweep") o.layout_sweep = true;
    else if (word == "--skip-training-pages") o.sweep_skips_training = true;
    else if (word == "--check-damage") o.check_damage = true;
    else if (word == "--lesson") o.lesson = args.value(word);
    else if (word == "--page") o.page = static_cast<int>(args.integer(word, 1, 1000)), page = true;
    else if (word == "--theme") {
      o.theme = args.value(word);
      if (*o.theme != "dark" && *o.theme != "light")
        throw UsageError("--theme: expected dark or light but found '" + *o.theme + "'");
    } else if (word == "--zoom") {
      o.zoom = static_cast<float>(args.integer(word, 75, 300)) / 100.0f;
    } else if (word == "--cell") {
      const std::string v = args.value(word);
      const auto comma = v.find(',');
      int r = -1, c = -1;
      const bool ok = comma != std::string::npos && std::from_chars(v.data(), v.data() + comma, r).ec == std::errc() &&
                      std::from_chars(v.data() + comma + 1, v.data() + v.size(), c).ec == std::errc() && r >= 0 &&
                      c >= 0;
      if (!ok) throw UsageError("--cell: expected ROW,COL (two whole numbers from 0) but found '" + v + "'");
      o.cell = std::pair{r, c};
    } else if (word == "--frames") o.frames = static_cast<int>(args.integer(word, 1, 1000));
    else if (word == "--tokens") o.tokens = static_cast<int>(args.integer(word, 1, limits::kMaxTokens));
    else if (word == "--bench-frames") o.bench_frames = static_cast<int>(args.integer(word, 1, 1000000));
    else if (word == "--soak") o.soak = static_cast<int>(args.integer(word, 1, 10000000));
    else if (word == "--size") {
      const std::string v = args.value(word);
      const auto x = v.find('x');
      int w = 0, h = 0;
      const bool ok = x != std::string::npos && std::from_chars(v.data(), v.data() + x, w).ec == std::errc() &&
                      std::from_chars(v.data() + x + 1, v.data() + v.size(), h).ec == std::errc();
      if (!ok || w < 320 || h < 240 || w > 8192 || h > 8192)
        throw UsageError("--size: expected WxH between 320x240 and 8192x8192 but found '" + v + "'");
      o.width = w;
      o.height = h;
      o.size_given = true;
    } else if (word.starts_with("--")) {
      throw UsageError("unknown option '" + word + "' (see attention-lab --help)");
    } else if (cli::is_cli_command(word)) {
      // `attention-lab --memory-budget 1G eval ...`: the command is read only as the first word.
      throw UsageError("'" + word + "' is a command: write it first, before every option (attention-lab " + word +
                       " ...)");
    } else if (o.scenario.empty()) {
      o.scenario = word;
    } else {
      throw UsageError("only one SCENARIO may be given, found '" + o.scenario + "' and '" + word + "'");
    }
  }
  // An option that would do nothing is a mistake worth saying.
  if (page && !o.lesson) throw UsageError("--page: only with --lesson NAME (it opens a page of that lesson)");
  if (o.sweep_skips_training && !o.layout_sweep)
    throw UsageError("--skip-training-pages: only with --check-layout-sweep (it leaves pages out of the sweep)");
  // --kv-heads and --latent-dim are the scenario's too: beside --to they size the conversion.
  if (o.conversion.to) {
    std::swap(o.conversion.kv_heads, o.overrides.config.kv_heads);
    std::swap(o.conversion.latent_dim, o.overrides.config.latent_dim);
  }
  check_conversion_options(o.conversion, "");
  if (o.ablate_mode && !o.ablate) throw UsageError("--ablate-mode: only with --ablate LIST (the heads knocked out)");
  if (o.train_gradient && !o.train_steps)
    throw UsageError("--train-gradient: only with --train-steps N (the gradient of the run trained that far)");
  check_view_options(o);
  check_gui_outputs(o, screenshot, dump_state);
  return o;
}

}  // namespace attn::gui
