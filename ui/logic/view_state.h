#pragma once
// What each view is set to, one small struct per view: a view reads the document and the computation from
// AppState and owns its own struct here. A new view's state goes in a struct of its own beside these.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ablation.h"
#include "core/head_roles.h"
#include "core/memory.h"
#include "ui/logic/hub_scan.h"
#include "ui/logic/lessons.h"
#include "ui/logic/sqrt_dk.h"
#include "ui/logic/steps.h"
#include "ui/logic/trainer.h"

namespace attn::ui {

// A cell the pointer is over in the pipeline view: which equation of the step, which term, which cell.
// Views draw operands before results, so they outline what fed the cell hovered in the previous frame.
struct HoverCell {
  Step step = Step::Inputs;
  int head = 0;
  int equation = 0;  // a step may show several (Q, K and V)
  int term = -1, row = -1, col = -1;
  std::string explanation;
  explicit operator bool() const { return term >= 0; }
  bool on(Step s, int eq, int t) const { return term == t && step == s && equation == eq; }
};

// Seconds a step (or a decoded token) stays on screen while playing.
inline constexpr double kPlaySeconds = 1.6;

// The pipeline view: which step and head, and what the pointer and a lesson point at.
struct PipelineView {
  Step step = Step::Inputs;
  int head = 0;
  int projection = 0;          // which projection the projections step draws large (MLA: latent, Q, K, V)
  bool show_absorbed = false;  // MLA: the scores step shows the absorbed form
  int side = 0;                // the positions and rope steps: 0 the queries, 1 the keys (or the context)
  bool naive_rope = false;     // MLA's rope step: what turning the expanded keys instead would do
  bool shift = false;          // the positions and rope steps: the shift experiment in place of the step's equation
  bool geometry = false;       // the scores and rope steps: a query and a key as arrows in a plane
  bool sparsity_loss = false;  // the selection step: only what sparsity lost, the whole height
  struct {
    int pair = 0;  // an index into plane_pairs (ui/logic/geometry.h)
    int row = -1;  // -1: the last query
    int col = 0;
  } geometry_view;
  struct {  // the softmax step's online mode: one row over key blocks, as a GPU kernel
    bool on = false;
    int row = -1;   // -1: the last query (it sees the most keys under a causal mask)
    int block = 2;  // keys per block
    int shown = 1;  // blocks done so far
    bool playing = false;
    double clock = 0.0;
  } online;
  bool playing = false;
  double play_clock = 0.0;                         // seconds since the last automatic step
  HoverCell hover;                                 // written while drawing this frame
  HoverCell last_hover;                            // what was hovered in the previous frame
  std::optional<std::pair<int, int>> pinned_cell;  // a result cell explained as if pointed at (--cell)
  // A lesson page's cells of its step's result, outlined while that step is shown.
  std::vector<std::pair<int, int>> outlined;
  Step outlined_step = Step::Inputs;
  std::vector<FocusTerm> focus;     // ... and its rows and columns kept where that step must be elided
  bool scroll_to_outlined = false;  // a page just opened: its first outlined cell is scrolled into view once
  bool scroll_to_top = false;       // a page without outlined cells just opened: the step from its top
};

// The decode view: `token` is the 0-based index of the token just fed in (decode_tokens = token + 1 have
// arrived, as lessons and the command line count them).
struct DecodeView {
  int token = 0;
  bool playing = false;
  double play_clock = 0.0;
  int scroll_to_section = 0;  // a page just opened on this view on its section (1-5): scrolled to what it shows
  int scroll_frames = 0;      // ... over a few frames, while the fonts and the content's height settle
  unsigned unfolded = 0;      // sections (bit 0: section 1) a page had folded and the user opened
};

// What the memory, cost and compare views are set to, and the model shapes they choose from.
struct ModelViewSettings {
  std::string preset = "llama-3-70b";
  Dtype dtype = Dtype::BF16;
  int batch = 1;
  std::int64_t context = 32768;     // tokens, for the bar chart and the tables
  bool lines_per_preset = false;    // memory chart: one line per preset instead of per variant
  int top_k = 2048;                 // DeepSeek sparse attention's candidate set
  std::vector<ModelShape> presets;  // the shipped model shapes, after the Real model view's model ("this model")
  std::string opened_shape;         // the name of the Real model view's model among them (empty: none)
  std::string presets_problem;      // why there are none: the presets file could not be read (the file and why)
};

// The Compare view: the cache sizes of the four variants, or what smaller caches cost the opened real model.
struct CompareView {
  bool measured = false;    // the measured trade-off of the Real model view's model (when one is open)
  bool sonnets = false;     // measured on the shipped sonnets rather than the typed text
  bool select_tab = false;  // `measured` was set from outside (the command line): its tab is selected once
};

// The Model view: what the pointer is over, and which layer's heads the small multiples outline.
struct ModelPanelView {
  int hovered_layer = -1;         // written while drawing
  int last_hovered_layer = -1;    // the previous frame's: the column and the heads outline that layer
  int position = -1;              // the row pointed at in the last frame, whose next tokens show as bars (-1: the last)
  std::string tokens_text;        // the tokens field while it is typed in
  bool scroll_to_output = false;  // a lesson page just opened: the output section scrolled into view once
  bool scroll_to_top = false;     // ... or the column from its top
  std::vector<ModelPart> outline;   // the parts a lesson page is about, framed in the accent colour
  bool scroll_to_outlined = false;  // a lesson page just opened: its first outlined part scrolled into view once
  float outlined_row_y = -1;        // while it scrolls there: where that part's row was in the frame before
  // The box opened large to read its numbers (closed with Escape): the part and its title in the column.
  struct OpenedBox {
    ModelPart part;
    std::string title;
  };
  std::optional<OpenedBox> opened;
  // Where each scrolling column's items end (content coordinates) and its scroll, from the frame before: the column
  // is made to end between items (fold_height). Column 0 is the layers', 1 the heads' beside it.
  struct Fold {
    std::vector<float> breaks;
    float scroll = 0;
    float height = 0;  // the column's height before it is made to end between items: what sizes its content
  };
  std::array<Fold, 2> folds;
  int column = 0;  // the column being drawn
};

// The Real model view: which position's predictions show, the score the heads are ranked by, the text being typed.
struct RealModelView {
  int position = -1;  // the row whose next tokens show (-1: the last)
  HeadRole ranked = HeadRole::Induction;
  AblationMode mode = AblationMode::Zero;
  std::string folder_text;     // the folder field while it is typed in
  std::filesystem::path file;  // where File > Save wrote the view (or it was opened from); empty: nowhere yet
  std::string text;            // the text box while it is typed in
  int top_k = 3;               // "knock out the top k"
  float tile_zoom = 1;         // the head tiles' side against the width's share (Ctrl+wheel)
  bool fit_layers = false;     // the tiles small enough for every layer to be in sight
  // Where the column beside the tiles has no room for both, it shows the next tokens or the ranked heads, as tabs.
  bool heads_tab = false;
  bool select_tab = false;        // heads_tab was set from outside (a lesson page): select it once
  int scroll_to_layer = -1;       // the grid brings this layer's row into sight once (the first a button knocked out)
  float grid_scroll_x = 0;        // the tiles' horizontal scroll, which their column headers (pinned above) follow
  std::uint64_t random_seed = 0;  // the last random repeated sequence's seed: each one drawn takes the next
  HubScan models;                 // the hub cache, looked at on a worker when asked
};

// The Train view: the settings the next run starts from, and which snapshot and head it shows.
struct TrainView {
  TrainSettings settings;             // edited in the inputs panel; Reset starts a run of them
  int shown_step = -1;                // the timeline's step (-1: follow the newest snapshot)
  bool gradient_tab = false;          // the gradient tab under the heads, not what happened
  bool select_tab = true;             // gradient_tab was set from outside (a lesson, the command line): select it once
  int score_kind = 0;                 // the head-score chart: an index of kScoreKinds (train_text.h)
  int layer = 0, head = 0, row = -1;  // the gradient section's head and query row (-1: the last)
  std::filesystem::path texts_dir;    // where the text task's text is (assets/texts)
  std::string error;                  // why the last Reset did not start a run
};

// The lesson panel: the shipped lessons and where the user is in one (index -1: none).
struct LessonView {
  std::vector<Lesson> lessons;
  std::filesystem::path scenarios_dir;  // where lesson pages find their scenarios
  int index = -1, page = 0;
  int sqrt_dk = kSqrtDkDefault;  // the experiment's d_k
  // What a Real model page still has to do once the model shows its run (the run is asynchronous, and the user may
  // open the model only after the page): type its text, then knock out the top heads (lesson_nav.h).
  struct RealTask {
    bool active = false;
    std::optional<std::string> text;
    bool typed = false;  // the text was typed (once: a text typed after it is the class's)
    HeadRole ranked = HeadRole::Induction;
    int knock_out = 0;
    bool measure = false;  // the Compare view's measurement, on compare.sonnets' text, once the model is shown
  } real_task;
  bool open() const { return index >= 0; }
  // The open lesson and its page (only while open()).
  const Lesson& current() const { return lessons[static_cast<std::size_t>(index)]; }
  const LessonPage& current_page() const { return current().pages[static_cast<std::size_t>(page)]; }
};

// How the window looks; remembered between runs.
enum class Theme { Dark, Light };

// How much the window's size enlarges everything. Presentation mode fits 1.35 times a 1600x900 layout to the
// window (1280x720: 1.1, 1920x1080: 1.6); normal mode only grows on large windows (1920x1080: 1.2). In steps of
// 0.05, so resizing does not rebuild the fonts at every pixel.
float window_fit(float width, float height, bool presentation);

// Readable from the back of a room: zoom multiplies every size (75%-300%); presentation mode hides the
// editors and adds its own enlargement and high contrast.
struct Display {
  static constexpr float kMinZoom = 0.75f, kMaxZoom = 3.0f, kZoomStep = 0.25f;
  Theme theme = Theme::Dark;
  float zoom = 1.0f;
  bool presentation = false;
  bool fullscreen = false;
  float width = 1600, height = 900;  // the window's size, which the window sets before each frame
  float effective_zoom() const { return zoom * window_fit(width, height, presentation); }
  void set_zoom(float z);  // clamped to kMinZoom .. kMaxZoom
};

}  // namespace attn::ui
