#pragma once
// The application's state as the command line asks for it at start-up: the document with its overrides,
// the shipped presets and lessons, and the view, step, head, cell, lesson page, model and decoded token to
// start on. A bad option is written to err naming it, and nothing starts.
#include <memory>
#include <ostream>
#include <string>

#include "app/gui/gui_options.h"
#include "ui/logic/app_state.h"

namespace attn::gui {

// nullptr when an option is wrong (err says which and why).
std::unique_ptr<ui::AppState> start_state(const GuiOptions& o, std::ostream& err);

// --dump-state: the view, step, head, decoded tokens, lesson page, document and display as JSON, written atomically
// ("file" is the document's path with bytes that are not UTF-8 shown as \xff). Throws InputError.
void dump_state(const std::string& path, const ui::AppState& state);

}  // namespace attn::gui
