#pragma once
// The trace as one JSON object (`attention-lab trace --json`): every matrix an array of rows,
// a -inf entry (a hidden score) written as null.
#include <nlohmann/json.hpp>

#include "core/attention.h"

namespace attn {

nlohmann::ordered_json matrix_to_json(const Matrix& m);
nlohmann::ordered_json weights_to_json(const Weights& w);  // only the weights present
nlohmann::ordered_json trace_to_json(const Trace& t);
std::string_view to_string(RowStatus s);

}  // namespace attn
