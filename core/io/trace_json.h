#pragma once
// The trace as one JSON object (`attention-lab trace --json`): every matrix an array of rows,
// a -inf entry (a hidden score) written as null.
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/attention.h"
#include "core/io/json_stream.h"

namespace attn {

// A number, or null for -inf, inf and NaN (JSON has none of them).
nlohmann::ordered_json number_to_json(double x);
nlohmann::ordered_json matrix_to_json(const Matrix& m);
nlohmann::ordered_json weights_to_json(const Weights& w);  // only the weights present
// The trace written as it is made: one row of numbers held at a time, and one head's matrices made on demand
// (predicted_print_bytes).
void write_trace_json(std::ostream& out, const Trace& t);
// The same document as a tree, for a small trace (tests, the window's export): parsed from write_trace_json's text.
nlohmann::ordered_json trace_to_json(const Trace& t);
// An object of the weights present, streamed.
void write_weights_json(JsonStream& js, const Weights& w);
// positions, rope_base, max_positions, rope_dim and sparse into an "attention" object, each only where it applies
// (a plain scenario's object is as it was before they existed).
void add_positions_config(nlohmann::ordered_json& attention, const AttentionConfig& a);
// {"q", "k", "w", "scores" (null where the mask hides), "selected"}
nlohmann::ordered_json indexer_to_json(const IndexerTrace& x);
std::string_view to_string(RowStatus s);

}  // namespace attn
