#pragma once
// The desktop app's command line: attention-lab [SCENARIO] [--screenshot PNG] [--step N|NAME] [--head N]
// [--cell ROW,COL] [--view V] [--decode-tokens N] [--preset NAME] [--size WxH] [--dump-state JSON] [--frames N].
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "app/cli/conversion_options.h"
#include "app/cli/overrides.h"

namespace attn::gui {

struct GuiOptions {
  std::string scenario;             // empty: the default scenario
  std::string screenshot;           // write the window as PNG after a few frames, then exit
  std::optional<std::string> step;  // a number from 0 (inputs) or a step name
  std::optional<int> head;
  std::optional<std::pair<int, int>> cell;            // ROW,COL of the step's result, explained as if pointed at
  std::optional<std::string> view;                    // pipeline | decode | compare | memory | cost | model
  std::optional<int> decode_tokens;                   // the decode view after this many tokens (1 = the first)
  std::optional<std::string> preset;                  // the model the compare, memory and cost views show
  std::optional<std::string> model;                   // the Model view's model file (default assets/models/tiny.json)
  std::optional<std::string> model_tokens;            // its tokens, separated by spaces
  std::optional<std::string> model_text;              // a model folder's text (--model FOLDER)
  std::optional<std::string> ablate;                  // a model folder's heads knocked out ("5.1,5.5")
  std::optional<std::string> ablate_mode;             // zero | mean
  std::optional<std::string> measure;                 // text | sonnets: the Compare view's measured trade-off
  cli::ConversionOptions conversion;                  // a model folder's model converted (--to ...)
  std::optional<int> train_steps;                     // the Train view's run trained this far first
  std::optional<std::pair<int, int>> train_gradient;  // the gradient tab on this layer and head
  std::optional<int> layer;                           // the pipeline on this layer of the model (from 0)
  std::optional<std::int64_t> memory_budget;          // --memory-budget: before the settings' and the default
  int width = 1600, height = 900;
  bool size_given = false;            // else the size the user last left the window at
  bool presentation = false;          // start in presentation mode
  bool gallery = false;               // start on View > Widget gallery
  std::optional<std::string> theme;   // dark | light
  std::optional<float> zoom;          // 0.75 .. 3
  std::optional<std::string> lesson;  // a lesson's name ("sqrt_dk") or file name ("2_sqrt_dk")
  int page = 1;                       // its page, from 1
  std::string dump_state;             // on exit, the step, head and scenario as JSON
  int frames = 6;                     // frames rendered before a screenshot, so layout and fonts settle
  std::optional<int> tokens;          // the scale slider's value at start: grow or shrink to this many tokens
  int bench_frames = 0;               // render this many frames with an edit in each, print frame times, exit
  int soak = 0;                       // perform this many random actions (a frame after each), check, exit
  bool check_layout = false;          // list what could not be read in the capture's last frame; exit 1 if any
  bool layout_sweep = false;          // the layout check over every lesson page and view, sizes, modes, themes
  bool sweep_skips_training = false;  // ... without the lesson pages that train a model first
  bool check_damage = false;          // every frame drawn in part is drawn whole too and compared (canvas.h)
  bool capture() const { return !screenshot.empty() || check_layout; }
  bool automated() const { return capture() || bench_frames > 0 || soak > 0 || layout_sweep; }
  cli::Overrides overrides;  // the same as trace's: --variant gqa --kv-heads 2, --mask causal, ...
};

// Throws UsageError naming the option.
GuiOptions parse_gui_args(std::span<const std::string> args);

extern const char* const kGuiHelp;

}  // namespace attn::gui
