#include "ui/logic/lesson_nav.h"

#include <algorithm>

#include "core/validate.h"
#include "ui/logic/real_lesson.h"
#include "ui/logic/train_actions.h"

namespace attn::ui {
namespace {

// A Real model page: its score ranks the heads; its text and knock-out wait for the model (FollowRealPage).
void show_real_page(AppState& state, const LessonPage& p) {
  if (p.real_ranked) state.real_view.ranked = *p.real_ranked;
  state.real_view.heads_tab = p.real_ranked.has_value();  // a page about heads shows their ranking
  state.real_view.select_tab = true;
  if (p.real_knock_out_top > 0) state.real_view.top_k = p.real_knock_out_top;
  state.real_view.position = -1;
  state.lesson.real_task = {.active = true,
                            .text = p.real_text,
                            .ranked = p.real_ranked.value_or(HeadRole::Induction),
                            .knock_out = p.real_knock_out_top};
}

// A page measuring what smaller caches cost the Real model view's model: the Compare view's measured tab, measured once
// the model is shown (FollowRealPage).
void show_measure_page(AppState& state, const LessonPage& p) {
  state.compare = {.measured = true, .sonnets = *p.real_measure_sonnets, .select_tab = true};
  state.lesson.real_task = {.active = true, .measure = true};
}

// A page with a model: the model as the Model view's, and one of its layers in the pipeline if the page says so.
bool open_page_model(AppState& state, const LessonPage& p) {
  const std::filesystem::path& dir = state.lesson.scenarios_dir;
  if (const std::optional<std::string> failed =
          state.model_doc.open(lesson_page_model(p, dir), lesson_page_model_path(p, dir))) {
    state.message = "Lesson page not shown: " + *failed;
    return false;
  }
  if (p.layer) return state.visit_model_layer(*p.layer);
  state.end_layer_visit();
  return true;
}

// The heads the page knocks out: the top k by its score in the model as trained, in the view's mode.
Ablation page_knock_out(const AppState& state, const LessonView::RealTask& t) {
  const RealModelRun& r = state.real_model.shown();
  const std::vector<RankedHead> ranked = heads_by_score(r.baseline ? *r.baseline : *r.trace, t.ranked);
  Ablation a{.mode = state.real_view.mode};
  for (std::size_t i = 0; i < std::min(ranked.size(), static_cast<std::size_t>(t.knock_out)); ++i)
    a.heads.push_back(ranked[i].head);
  std::sort(a.heads.begin(), a.heads.end());  // as the document keeps them
  return a;
}

// Whether the measurement shown or under way is of the Real model view's model on the page's text: the sonnets, or the
// typed text's tokens.
bool measured_already(const AppState& state) {
  const RealModelRun& r = state.real_model.shown();
  return state.compare.sonnets ? state.tradeoff.asked_for(r.source, r.folder, kSonnetsName)
                               : state.tradeoff.asked_for(r.source, r.folder, kTypedTextName, &r.text.ids);
}

}  // namespace

bool FollowRealPage(AppState& state) {
  LessonView::RealTask& t = state.lesson.real_task;
  RealModelDocument& doc = state.real_model;
  if (!t.active || !state.lesson.open() || !doc.loaded() || doc.computing()) return false;
  if (t.measure) {
    t.active = false;
    return !measured_already(state) && state.measure_cache_tradeoff();
  }
  if (t.text && !t.typed) {  // once: what the class types after it is theirs
    t.typed = true;
    if (doc.state().text != *t.text) {
      doc.set_text(*t.text);
      state.real_view.text = *t.text;
      return true;
    }
  }
  // A text the model could not read (too long) leaves another run shown: nothing to rank on.
  if (doc.shown().state != nullptr && doc.shown().state->text != doc.state().text) return false;
  if (t.text && doc.state().text != *t.text) {  // the class typed another text meanwhile: the page leaves it be
    t.active = false;
    return false;
  }
  const Ablation wanted = t.knock_out > 0 ? page_knock_out(state, t) : Ablation{.mode = state.real_view.mode};
  t.active = false;
  if (wanted.heads == doc.state().ablation.heads && (wanted.empty() || wanted.mode == doc.state().ablation.mode))
    return false;
  doc.set_ablation(wanted);
  if (!wanted.empty()) state.real_view.scroll_to_layer = wanted.heads.front().layer;  // the crosses the page names
  return true;
}

void SettleRealPage(AppState& state) {
  for (int round = 0; round < 4; ++round) {  // the text, then the knock-out: two runs at most
    state.wait();
    if (!FollowRealPage(state)) break;
  }
  state.wait();
}

bool ApplyLessonPage(AppState& state, int lesson, int page) {
  if (lesson < 0 || lesson >= static_cast<int>(state.lesson.lessons.size())) return false;
  const Lesson& l = state.lesson.lessons[static_cast<std::size_t>(lesson)];
  if (page < 0 || page >= static_cast<int>(l.pages.size())) return false;
  const LessonPage& p = l.pages[static_cast<std::size_t>(page)];
  try {
    if (p.view == View::Train) show_training_step(state, p.train_steps, p.train_gradient);
    else if (p.view == View::Real) show_real_page(state, p);
    else if (p.real_measure_sonnets) show_measure_page(state, p);
    else if (!p.model.empty() ? !open_page_model(state, p)
                              : !state.open(lesson_page_scenario(p, state.lesson.scenarios_dir),
                                            state.lesson.scenarios_dir / p.scenario))
      return false;
  } catch (const InputError& e) {
    state.message = "Lesson page not shown: " + std::string(e.what());
    return false;
  }
  if (!p.on_real_model()) state.lesson.real_task = {};
  // A page on the Compare view's cache sizes shows them, whichever tab was open.
  if (p.view == View::Compare && !p.real_measure_sonnets) {
    state.compare.measured = false;
    state.compare.select_tab = true;
  }
  state.lesson.index = lesson;
  state.lesson.page = page;
  state.view = p.view;
  state.pipeline.step = p.step;
  state.set_head(p.head);
  state.set_decode_token(p.decode_tokens - 1);
  if (p.preset) state.models.preset = *p.preset;
  if (p.sqrt_dk) state.lesson.sqrt_dk = *p.sqrt_dk;
  state.pipeline.show_absorbed = p.absorbed;
  if (p.view == View::Pipeline)
    state.pipeline.projection =
        std::max(0, projection_slot(p.projection, state.scenario().attention.variant == Variant::Mla));
  state.pipeline.shift = p.shift_experiment;
  state.pipeline.naive_rope = p.naive_rope;
  state.pipeline.sparsity_loss = p.sparsity_loss;
  state.pipeline.geometry = p.geometry.has_value();
  if (p.geometry) state.pipeline.geometry_view = {p.geometry->pair, p.geometry->query, p.geometry->key};
  state.pipeline.online.on = p.online.has_value();
  state.pipeline.online.playing = false;
  if (p.online) {
    state.pipeline.online.row = p.online->row;
    state.pipeline.online.block = p.online->block;
    state.pipeline.online.shown = p.online->shown;
  }
  // Every highlighted cell is outlined; the first is also explained as if pointed at.
  state.pipeline.pinned_cell.reset();
  if (!p.highlight.empty()) state.pipeline.pinned_cell = p.highlight.front();
  state.pipeline.outlined = p.highlight;
  state.pipeline.outlined_step = p.step;
  state.pipeline.focus = p.focus;
  state.pipeline.scroll_to_outlined = !p.highlight.empty();
  state.pipeline.scroll_to_top = p.highlight.empty();
  state.model_view.outline = p.view == View::Model ? p.model_outline : std::vector<ModelPart>{};
  state.model_view.opened.reset();
  state.model_view.scroll_to_outlined = !state.model_view.outline.empty();
  state.model_view.scroll_to_output = p.view == View::Model && p.model_output;
  state.model_view.scroll_to_top = p.view == View::Model && !p.model_output;
  state.decode.scroll_to_section = p.view == View::Decode ? p.decode_section : 0;
  state.decode.scroll_frames = 0;
  state.decode.unfolded = 0;
  state.pipeline.playing = state.decode.playing = false;
  return true;
}

void GoToLessonPage(AppState& state, int lesson, int page) {
  const auto& lessons = state.lesson.lessons;
  const LessonPage* p = lesson >= 0 && lesson < static_cast<int>(lessons.size()) && page >= 0 &&
                                page < static_cast<int>(lessons[static_cast<std::size_t>(lesson)].pages.size())
                            ? &lessons[static_cast<std::size_t>(lesson)].pages[static_cast<std::size_t>(page)]
                            : nullptr;
  // A Train or Real model page opens no scenario and no model: nothing unsaved is at stake, nothing to ask.
  if (p && (p->view == View::Train || p->view == View::Real)) {
    ApplyLessonPage(state, lesson, page);
    return;
  }
  const bool model = p && !p->model.empty();
  state.pending.ask_to_replace([&state, lesson, page] { ApplyLessonPage(state, lesson, page); }, model);
}

void CloseLesson(AppState& state) {
  state.lesson.index = -1;
  state.lesson.real_task = {};
  state.pipeline.pinned_cell.reset();
  state.pipeline.outlined.clear();
  state.pipeline.focus.clear();
  state.model_view.outline.clear();
}

}  // namespace attn::ui
