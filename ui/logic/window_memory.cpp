#include "ui/logic/window_memory.h"

#include <algorithm>

#include "core/edits.h"
#include "core/memory_budget.h"
#include "core/trace_bytes.h"
#include "ui/logic/chart_axes.h"
#include "ui/logic/history.h"
#include "ui/logic/recompute.h"

namespace attn::ui {
namespace {

std::int64_t window_cells(std::int64_t r, std::int64_t c) { return r * c * std::int64_t(sizeof(double)); }

// The shown trace with every head's matrices made: predicted_trace_bytes counts scores and weights; scaled, masked
// and the head's share of the output come on top.
std::int64_t shown_trace_bytes(const Scenario& s, std::int64_t nq, std::int64_t nkv) {
  const AttentionConfig& a = s.attention;
  const std::int64_t contribution = a.output_projection ? window_cells(nq, s.d_model()) : 0;
  return predicted_trace_bytes(s, nq, nkv) + a.heads * (2 * window_cells(nq, nkv) + contribution);
}

// What a result holds for the decode view: the decoding and, when the mask lets a query see later keys, the causal
// trace (its custom mask too), whose matrices the decode view makes like the shown trace's.
std::int64_t decode_view_bytes(const Scenario& s, std::int64_t nq, std::int64_t nkv) {
  if (nq > kMaxDecodeTokens) return 0;
  std::int64_t sum = predicted_decode_bytes(s, nq, nkv);
  if (!s.context && s.attention.mask != MaskKind::Causal) sum += shown_trace_bytes(s, nq, nkv) + window_cells(nq, nkv);
  return sum;
}

}  // namespace

std::int64_t window_frame_bytes(int width, int height) {
  return kWindowBaseBytes + kWindowBufferBytes * std::int64_t(std::max(width, 1)) * std::max(height, 1);
}

std::int64_t history_share(std::int64_t budget) { return std::min(History::kBytes, budget / 8); }

std::int64_t predicted_result_bytes(const Scenario& s) { return predicted_result_bytes(s, s.n_q(), s.n_kv()); }

std::int64_t predicted_result_bytes(const Scenario& s, std::int64_t nq, std::int64_t nkv) {
  const AttentionConfig& a = s.attention;
  std::int64_t sum = shown_trace_bytes(s, nq, nkv) + decode_view_bytes(s, nq, nkv);
  if (a.sparse) sum += predicted_trace_bytes(s, nq, nkv);  // the dense trace, for its output
  if (first_position(a) != 0 && std::max(nq, nkv) <= kMaxDecodeTokens)
    sum += predicted_trace_bytes(s, nq, nkv) + a.heads * window_cells(nq, nkv);  // positions from 0: every scores
  return sum;
}

std::int64_t predicted_window_bytes(const Scenario& s, std::int64_t frame, std::int64_t budget) {
  return frame + history_share(budget) + 2 * predicted_result_bytes(s);
}

void check_window_budget(const Scenario& s, std::int64_t frame, std::int64_t budget, const HeldBeside& beside) {
  check_memory_budget(predicted_window_bytes(s, frame, budget), budget, "this document in the window",
                      "fewer tokens or heads, or a smaller window", beside);
}

void check_window_fits(int width, int height, std::int64_t budget) {
  check_memory_budget(window_frame_bytes(width, height) + history_share(budget), budget,
                      "the window at " + std::to_string(width) + "x" + std::to_string(height) + " (before a document)",
                      "a smaller --size");
}

std::string budget_share_text(std::int64_t held, std::int64_t budget, const HeldBeside& beside) {
  std::string text = format_unit(double(held), NumberUnit::Bytes) + " of the " +
                     format_unit(double(budget), NumberUnit::Bytes) + " memory budget";
  if (beside.bytes > 0)
    text += ", beside " + format_unit(double(beside.bytes), NumberUnit::Bytes) + " held by " + beside.what;
  return text;
}

int max_window_tokens(const Scenario& s, int cap, std::int64_t frame, std::int64_t budget, std::int64_t beside) {
  const std::int64_t room = budget - limits::kProgramBytes - frame - history_share(budget) - beside;
  return max_token_count(
      s, cap, [&](std::int64_t n, std::int64_t keys) { return 2 * predicted_result_bytes(s, n, keys) <= room; });
}

}  // namespace attn::ui
