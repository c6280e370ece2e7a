#pragma once
// The online softmax of one row as JSON (`attention-lab online --json`); -inf written as null.
#include <nlohmann/json.hpp>

#include "core/online_softmax.h"

namespace attn {

// {"head", "row", "block", "blocks": [{"start", "end", "block_max", "m", "rescale", "l", "output"}...], "output",
// "dense_output", "max_difference"}
nlohmann::ordered_json online_to_json(const OnlineSoftmax& o);

}  // namespace attn
