#pragma once
// The trace as one JSON object (`attention-lab trace --json`): every matrix an array of rows,
// a -inf entry (a hidden score) written as null.
#include <nlohmann/json.hpp>

#include "core/attention.h"

namespace attn {

// A number, or null for -inf, inf and NaN (JSON has none of them).
nlohmann::ordered_json number_to_json(double x);
nlohmann::ordered_json matrix_to_json(const Matrix& m);
nlohmann::ordered_json weights_to_json(const Weights& w);  // only the weights present
nlohmann::ordered_json trace_to_json(const Trace& t);
// positions, rope_base, max_positions, rope_dim and sparse into an "attention" object, each only where it applies
// (a plain scenario's object is as it was before they existed).
void add_positions_config(nlohmann::ordered_json& attention, const AttentionConfig& a);
// {"q", "k", "w", "scores" (null where the mask hides), "selected"}
nlohmann::ordered_json indexer_to_json(const IndexerTrace& x);
std::string_view to_string(RowStatus s);

}  // namespace attn
