#include "ui/logic/lesson_nav.h"

#include <algorithm>

#include "core/validate.h"

namespace attn::ui {

bool ApplyLessonPage(AppState& state, int lesson, int page) {
  if (lesson < 0 || lesson >= static_cast<int>(state.lessons.size())) return false;
  const Lesson& l = state.lessons[static_cast<std::size_t>(lesson)];
  if (page < 0 || page >= static_cast<int>(l.pages.size())) return false;
  const LessonPage& p = l.pages[static_cast<std::size_t>(page)];
  try {
    if (!state.open(lesson_page_scenario(p, state.scenarios_dir), state.scenarios_dir / p.scenario)) return false;
  } catch (const ScenarioError& e) {
    state.message = "Lesson page not shown: " + std::string(e.what());
    return false;
  }
  state.lesson = lesson;
  state.lesson_page = page;
  state.view = p.view;
  state.step = p.step;
  state.set_head(p.head);
  state.set_decode_step(p.decode_tokens - 1);
  if (p.preset) state.models.preset = *p.preset;
  if (p.sqrt_dk) state.sqrt_dk = *p.sqrt_dk;
  state.show_absorbed = p.absorbed;
  // Every highlighted cell is outlined; the first is also explained as if pointed at.
  state.pinned_cell.reset();
  if (!p.highlight.empty()) state.pinned_cell = p.highlight.front();
  state.outlined = p.highlight;
  state.outlined_step = p.step;
  state.scroll_to_outlined = !p.highlight.empty();
  state.scroll_to_decode_section = p.view == View::Decode && p.decode_section > 1 ? p.decode_section : 0;
  state.playing = state.decode_playing = false;
  return true;
}

void GoToLessonPage(AppState& state, int lesson, int page) {
  state.pending_replace = [&state, lesson, page] { ApplyLessonPage(state, lesson, page); };
}

void CloseLesson(AppState& state) {
  state.lesson = -1;
  state.pinned_cell.reset();
  state.outlined.clear();
}

}  // namespace attn::ui
