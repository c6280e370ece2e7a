#pragma once
// What a trace or a document costs in memory: the bytes of every number it holds.
#include <cstdint>

#include "core/attention.h"

namespace attn {

// The sum over every matrix and vector the trace stores (inputs, the weights it used, Q/K/V, each KV head's k and v,
// each head's q, k, v, scores, weights, output and contribution, row statistics and row statuses, the one mask they
// share, concat, output, MLA's absorbed form) of elements x element size. Token labels, the fixed-size members of
// the structs, and scaled and masked (made only when asked for: HeadTrace::scaled) are not counted.
std::int64_t trace_bytes(const Trace& t);

// trace_bytes(compute_trace(s)) from the shapes alone, before anything is computed: what the window shows beside
// the tokens slider and what validate holds to the memory budget. `s` must be valid but for that budget.
std::int64_t predicted_trace_bytes(const Scenario& s);
// The same for `s` with n_q queries and n_kv keys (its other sizes as they are): what the tokens slider may reach.
std::int64_t predicted_trace_bytes(const Scenario& s, std::int64_t n_q, std::int64_t n_kv);

// What printing the trace of `s` holds beside it, at most, when it is written as it is made (every form of
// `trace`): one head's matrices made on demand at a time (scores, scaled, masked, weights and its W_O contribution,
// with a copy of its projections) and one row of text.
std::int64_t predicted_print_bytes(const Scenario& s);

// What computing a trace holds for a moment beside what it keeps: MLA's blockdiag(W_UV^(h)) while W_LO is made.
std::int64_t computing_bytes(const Scenario& s);

// What decode(s) holds, from the shapes: the resolved weights (and MLA's absorbed ones), the mask, the cache, and
// every step's output row, each head's weights over the cache (and the indexer's row), with what each step costs
// to keep; and printing it (one step's text at a time). `s` must be valid.
std::int64_t predicted_decode_bytes(const Scenario& s);
// The same for `s` with n_q queries and n_kv keys (its other sizes as they are): what the window's tokens slider may
// reach.
std::int64_t predicted_decode_bytes(const Scenario& s, std::int64_t n_q, std::int64_t n_kv);

// The numbers of a document: embeddings (both sides), the custom mask and the weights it gives (what one
// undo step keeps).
std::int64_t scenario_bytes(const Scenario& s);

}  // namespace attn
