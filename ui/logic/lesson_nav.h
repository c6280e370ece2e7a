#pragma once
// Moving through a lesson: each page opens its scenario (with its overrides) and sets the view, step,
// head, decode step and model it talks about. The user can still edit freely; the next page starts
// from the page's own scenario again.
#include "ui/logic/app_state.h"

namespace attn::ui {

// Asks to go to page `page` of lesson `lesson` (after the unsaved-changes answer, if any).
void GoToLessonPage(AppState& state, int lesson, int page);
// Applies the page now; a page that cannot be shown leaves everything as it was and says why.
bool ApplyLessonPage(AppState& state, int lesson, int page);
void CloseLesson(AppState& state);
// Every frame while a lesson is open: a Real model page's text and knock-out applied once the model's run allows
// (a folder open and its newest run shown); true when something was asked of the model.
bool FollowRealPage(AppState& state);
// The same at once, for a capture: waits for the model's runs until the page's text and knock-out are shown.
void SettleRealPage(AppState& state);

}  // namespace attn::ui
