#pragma once
// Lessons: short guided tours through the app, one page at a time, each page saying what to look at and
// setting up the screen to show it. They live in assets/lessons/, one JSON file per lesson, named with a
// number first (1_the_cat_sat.json, 2_sqrt_dk.json, ...) so the file order is the teaching order.
//
// A lesson file:
//   {
//     "name": "sqrt_dk",                                  required, non-empty
//     "title": "Why divide by the square root of d_k?",   required, non-empty
//     "summary": "One sentence.",                         required, non-empty
//     "pages": [                                          required, at least one
//       {
//         "title": "...",                                 required, non-empty
//         "text": "Paragraphs separated by \n\n.",        required, non-empty; no other line breaks
//         "scenario": "the_cat_sat.json",                 a file name in assets/scenarios; required unless "model" or
//                                                         view train or real (those views show their own run)
//         "model": "tiny.json",                           a file name in assets/models: the Model view's model
//                                                         (required on view model; no scenario with it)
//         "model_tokens": "<s> a b a b",                  with "model": its tokens; default its first ones
//         "layer": 1,                                     with "model", view pipeline: that layer's attention
//         "model_section": "output",                      view model: the part scrolled into view (input | output)
//         "model_outline": ["layer 0"],                   view model: the parts the text is about, outlined and the
//                                                         first scrolled into view: input, output, layer N (its
//                                                         boxes), layer N attention or layer N ffn (one sublayer's
//                                                         row, its addition included); N below the model's layers
//         "view": "model",                                pipeline | decode | compare | memory | cost | model | train
//                                                         | real (default pipeline)
//         "real_text": "The cat sat. The cat sat.",       view real: the text the page types into the Real model view
//                                                         (default: the text already there). The page uses the model
//                                                         the user opened there; with none, it says how to get one
//         "real_ranked": "induction",                     view real: the score the heads are ranked by (previous_token
//                                                         | induction | duplicate_token | first_token); the page's live
//                                                         line names the strongest head by it, from the run shown
//         "real_knock_out_top": 3,                        view real, with real_ranked: the top k heads by that score
//                                                         knocked out once the run of the page's text has landed (1-64;
//                                                         default none: the page shows the model as trained). With it,
//                                                         or ranked by induction, the live line gives the loss on the
//                                                         repeat (the next tokens an earlier copy gives away)
//         "real_measure": "sonnets",                      view compare: the measured tab on the Real model view's
//                                                         model (what GQA and MLA cost it), measured on the typed
//                                                         text or the sonnets (text | sonnets) once the model is
//                                                         open; no scenario. The live line quotes the cheapest GQA
//                                                         and an MLA with no more cache, from the measurement
//         "train_steps": 1000,                            view train (required there, with no scenario or model): the
//                                                         Train view's default run (the induction task) trained to
//                                                         this step, or scrubbed back to it
//         "train_gradient": [1, 2],                       view train: the gradient tab on this layer and head
//         "train_chart": "loss",                          view train, without train_gradient: what the page is about
//                                                         (loss | scores | heads): it gets the room, at least a third
//                                                         of the window each way for a chart and thumbnails of at
//                                                         least 96 px; the others fold to a line of text. Default:
//                                                         none, every part at the size the view gives it
//         "step": "scale",                                pipeline only: a step name or 0-9; default inputs
//         "head": 0,                                      default 0; a head of the scenario (after the overrides)
//         "decode_tokens": 2,                             decode only: tokens arrived, 1 .. N; default 1
//         "decode_section": 3,                            decode only: the first section (1-5) the text is
//                                                         about; it and those after it (to the output and its
//                                                         check line) stay in sight as the page opens, the
//                                                         others fold where they do not fit; default 1
//         "decode_last_section": 3,                       decode only: the last section the text is about, when
//                                                         the page is not about the output (the sections after
//                                                         it may fold); default the output's
//         "preset": "llama-3-70b",                        compare, memory and cost only: a model preset name
//         "highlight": [[0, 1]],                          pipeline only: cells (row, col) of the step's result
//         "focus": {"concat": {"rows": [3]},              pipeline only: the rows and columns of the step's matrices
//                   "W_O": {"cols": [0]}},                the text talks about, by matrix ("rows", "cols" or both,
//                                                         numbered from 0); where the step cannot be drawn readable
//                                                         whole, the others are elided as "⋯" (ui/logic/focus.h).
//                                                         Offered with W_O on the concat step (concat, W_O, output)
//                                                         and the output step (head 0, head 1, ..., output)
//         "projection": "k",                              pipeline only, on the projections step: the product
//                                                         drawn, latent (MLA), q, k or v; default the first
//         "heads_panel": true,                            pipeline only: the Heads panel (every head's weights, who
//                                                         looks at whom) beside the step, for a page that points at
//                                                         it; default false: the step takes its room
//         "absorbed": true,                               pipeline, an MLA scenario: its scores step in the absorbed
//                                                         form (W_UQK) beside q kᵀ; default false
//         "overrides": {"mask": "causal"},                attention fields changed for this page (below)
//         "experiment": "sqrt_dk",                        an interactive experiment shown with the page: sqrt_dk
//                                                         (the spread of q·k) or sqrt_dk_softmax (a softmax row)
//         "d_k": 256                                      sqrt_dk experiments only: their d_k (1, 4, 16, 64, 256, 1024)
//       }
//     ]
//   }
// Overrides, with the same meaning as the command-line options of `trace`: mask (none | causal |
// sliding_window | custom), window (alone it implies sliding_window), custom_mask (an N_Q x N_KV 0/1
// matrix; alone it implies custom), scale (true/false), kernel (softmax | linear), heads, head_dim,
// variant (mha | gqa | mqa | mla), kv_heads (alone it implies gqa), latent_dim (alone it implies mla).
// As on the command line, a weight the file gives that no longer fits is drawn from the seed instead; the
// scenario's description then says what the page changed.
//
// Unknown keys are errors, and so is a key that does nothing in the page's view (a step on a decode
// page): they are usually mistakes. The loader opens every page's scenario, applies its overrides and
// computes its trace, so a head, decode step or highlighted cell that is not on screen is reported when
// the lesson is loaded, never while it is shown. Every problem is a InputError naming the field:
//   pages[2].step: expected one of inputs, projections, ..., output or 0-9 but found string "scroes"
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/head_roles.h"
#include "core/overrides.h"
#include "core/scenario.h"
#include "ui/logic/focus.h"
#include "ui/logic/model_document.h"
#include "ui/logic/model_text.h"
#include "ui/logic/steps.h"
#include "ui/logic/views.h"

namespace attn::ui {

// The experiments a page can show beside the views.
enum class Experiment {
  SqrtDk,         // ui/logic/sqrt_dk.h: the spread of q.k, with and without 1/sqrt(d_k), as histograms
  SqrtDkSoftmax,  // the same experiment's softmax of one random row, with and without 1/sqrt(d_k)
};
std::string_view experiment_name(Experiment e);  // "sqrt_dk", "sqrt_dk_softmax"

// Where a page's projection ("latent", "q", "k", "v"; empty: the first) stands among the projections step's radio
// buttons (MLA: latent, Q, K, V; else Q, K, V); -1 if the attention has none by that name.
int projection_slot(std::string_view name, bool mla);

// What a Train view page is about (its "train_chart"): that part gets the room, the others fold to a summary.
// LossAndScores: both charts stacked over one step axis, for a page about the loss and the heads changing together
// (the scores the induction circuit's: previous-token in layer 0, induction after it).
enum class TrainChart { All, Loss, Scores, LossAndScores, Heads };
// "loss", "scores", "loss_and_scores", "heads"
std::optional<TrainChart> parse_train_chart(std::string_view name);

// A head score by its name in lessons and JSON: previous_token, induction, duplicate_token, first_token.
std::optional<HeadRole> parse_head_score_name(std::string_view name);
inline constexpr int kMaxLessonKnockOut = 64;

struct LessonPage {
  std::string title;
  std::string text;           // paragraphs separated by a blank line ("\n\n")
  std::string scenario;       // a file name in assets/scenarios (empty with a model)
  std::string model;          // a file name in assets/models: the Model view's model (empty: none)
  std::string model_tokens;   // the model's tokens, separated by spaces (empty: its first ones)
  std::optional<int> layer;   // with a model: the pipeline on this layer's attention
  bool model_output = false;  // view model: the output (logits and next token) scrolled into view
  // view model: the parts outlined (the first scrolled into view as the page opens)
  std::vector<ModelPart> model_outline;
  View view = View::Pipeline;
  Step step = Step::Inputs;
  int head = 0;
  int decode_tokens = 1;        // tokens arrived, 1-based: DecodeView::token is decode_tokens - 1
  int decode_section = 1;       // 1 query, 2 cache, 3 attention, 4 output; sparse: 3 indexer, 4 attention, 5 output
  int decode_last_section = 0;  // the last section the page is about; 0: the output's
  std::optional<std::string> preset;           // sets ModelViewSettings::preset; empty keeps the current one
  std::vector<std::pair<int, int>> highlight;  // (row, col) cells of step_result(trace, step, head)
  std::vector<FocusTerm> focus;                // the rows and columns kept when the step must be elided
  bool heads_panel = false;                    // the Heads panel beside the pipeline (the page points at it)
  std::string projection;  // the projections step's product drawn: "latent" (MLA's), "q", "k" or "v"; empty: the first
  bool absorbed = false;   // MLA: the scores step shows the absorbed form (AppState::show_absorbed)
  bool shift_experiment = false;  // the positions or rope step shows the shift experiment
  bool naive_rope = false;        // MLA's rope step turns the expanded keys instead
  bool sparsity_loss = false;     // the selection step shows only what sparsity lost
  struct Online {                 // the softmax step in its online mode (PipelineView::online)
    int row = -1;                 // -1: the last query
    int block = 2;
    int shown = 1;  // blocks done
  };
  std::optional<Online> online;
  struct Geometry {  // the scores or rope step as arrows in a plane (PipelineView::geometry_view)
    int query = -1;  // -1: the last query
    int key = 0;
    int pair = 0;  // an index into plane_pairs
  };
  std::optional<Geometry> geometry;
  ConfigOverrides overrides;  // the command line's rules (core/overrides.h); query_latent_dim is not offered
  std::optional<Experiment> experiment;
  std::optional<int> sqrt_dk;  // the experiment's d_k as the page opens; unset keeps the current one
  int train_steps = 0;         // view train: the step of the default run the page shows
  std::optional<std::pair<int, int>> train_gradient;  // view train: the gradient tab on (layer, head)
  TrainChart train_chart = TrainChart::All;           // view train: the part that gets the room
  std::optional<std::string> real_text;               // view real: the text typed (unset: the one there)
  std::optional<HeadRole> real_ranked;                // view real: the score the heads are ranked by
  int real_knock_out_top = 0;                         // view real: the top k by real_ranked knocked out (0: none)
  std::optional<bool> real_measure_sonnets;           // view compare: the measured tab, on the sonnets or the text
  bool on_real_model() const { return view == View::Real || real_measure_sonnets.has_value(); }
};

struct Lesson {
  std::string name, title, summary;
  std::vector<LessonPage> pages;
};

// Largest lesson file read; anything bigger is refused before it is read.
inline constexpr std::uintmax_t kMaxLessonFileBytes = 1u << 20;

// Reads, parses and checks a lesson against the scenarios in scenarios_dir; throws InputError
// (field "" for problems with the file itself).
Lesson load_lesson_file(const std::filesystem::path& path, const std::filesystem::path& scenarios_dir);

// The lesson files in lessons_dir in teaching order: *.json by their leading number (1_, 2_, ..., 10_),
// files without one after them by name. A missing folder has no lessons.
std::vector<std::filesystem::path> lesson_files(const std::filesystem::path& lessons_dir);

// The page's scenario with its overrides applied, ready for AppState::open (or a model page's layer); throws
// InputError.
Scenario lesson_page_scenario(const LessonPage& page, const std::filesystem::path& scenarios_dir);
// A model page's model file (assets/models beside scenarios_dir) and its tokens; throws InputError.
std::filesystem::path lesson_page_model_path(const LessonPage& page, const std::filesystem::path& scenarios_dir);
ModelInput lesson_page_model(const LessonPage& page, const std::filesystem::path& scenarios_dir);

}  // namespace attn::ui
