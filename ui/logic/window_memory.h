#pragma once
// What the window holds at once, from the shapes, held to the memory budget: the window itself (GL, fonts, its frame
// buffers by its size), the undo history's share, and two results of the document (computed.h): the one shown, with
// every matrix a view may make of it, and the one being computed (or done and not yet shown). The worker starts a
// job only when the last result was taken (latest_worker.h), so no third one is ever held.
#include <cstdint>
#include <string>

#include "core/memory_budget.h"
#include "core/scenario.h"

namespace attn::ui {

// The window without a document: what GL (llvmpipe, which draws in this memory), the fonts (their atlas held to
// kFontAtlasBytes, glyph_set.h), ImGui and the code take,
// and every frame-sized buffer (the back and front buffers, the canvas, the region copies, the screenshot, the
// textures of heatmaps drawn at the display's pixels), as kWindowBufferBytes per pixel of the window.
// Beside the program's own limits::kProgramBytes, which every check counts: 160 MiB in all.
inline constexpr std::int64_t kWindowBaseBytes = std::int64_t(144) << 20;
inline constexpr std::int64_t kWindowBufferBytes = 40;  // ten RGBA buffers a pixel
std::int64_t window_frame_bytes(int width, int height);

// The undo history's share of the budget: an eighth, at most History::kBytes (256 MiB).
std::int64_t history_share(std::int64_t budget);

// One result of the document with n_q queries and n_kv keys (its other sizes as they are): the trace as the window
// keeps it with every head's scaled, masked and contribution made (a view makes them for the head it follows, and the
// user may follow each); while it is computed, the dense trace (sparse) and the trace with positions from 0 (shifted,
// with each head's scores kept); and up to kMaxDecodeTokens, the decoding and the causal trace it reproduces (the
// trace itself when the mask is causal or the keys are a context).
std::int64_t predicted_result_bytes(const Scenario& s, std::int64_t n_q, std::int64_t n_kv);
std::int64_t predicted_result_bytes(const Scenario& s);

// What the window holds with `s` as its document: frame + history_share(budget) + 2 x predicted_result_bytes.
std::int64_t predicted_window_bytes(const Scenario& s, std::int64_t frame, std::int64_t budget);

// Throws BudgetError ("this document in the window needs ... but the memory budget is ...") past the budget, with
// what the window's other views hold beside it (AppState::held_beside).
void check_window_budget(const Scenario& s, std::int64_t frame, std::int64_t budget, const HeldBeside& beside = {});
// Throws BudgetError when the window alone (frame and the history's share) does not fit: "the window at 8192x8192
// needs ... but the memory budget is ...; use --memory-budget or a smaller --size".
void check_window_fits(int width, int height, std::int64_t budget);

// "1.20 GiB of the 3.00 GiB memory budget", and when other views hold some: ", beside 350.00 MiB held by the Model
// view and the Train view". What a view shows of its share.
std::string budget_share_text(std::int64_t held, std::int64_t budget, const HeldBeside& beside);

// The most tokens (1 .. cap) the tokens slider may reach: within the attention cells' limit and the window's budget,
// beside `beside` bytes that the other views hold.
int max_window_tokens(const Scenario& s, int cap, std::int64_t frame, std::int64_t budget, std::int64_t beside = 0);

}  // namespace attn::ui
