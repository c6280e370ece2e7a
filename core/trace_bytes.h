#pragma once
// What a trace or a document costs in memory: the bytes of every number it holds.
#include <cstdint>

#include "core/attention.h"

namespace attn {

// The sum over every matrix and vector of the trace (inputs, the weights it used, Q/K/V, each KV head's k and v,
// each head's intermediates, row statistics and row statuses, the one mask they share, concat, output, MLA's absorbed
// form) of
// elements x element size. Token labels and the fixed-size members of the structs are not counted.
std::int64_t trace_bytes(const Trace& t);

// The numbers of a document: embeddings (both sides), the custom mask and the weights it gives (what one
// undo step keeps).
std::int64_t scenario_bytes(const Scenario& s);

}  // namespace attn
