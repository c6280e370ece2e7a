#pragma once
// The online softmax of one row as JSON (`attention-lab online --json`); -inf written as null.
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/online_softmax.h"

namespace attn {

// {"head", "row", "block", "blocks": [{"start", "end", "block_max", "m", "rescale", "l", "output"}...], "output",
// "dense_output", "max_difference"}
// Written as it is made, one row of numbers held at a time; online_to_json parses the same text into a tree.
void write_online_json(std::ostream& out, const OnlineSoftmax& o);
nlohmann::ordered_json online_to_json(const OnlineSoftmax& o);

}  // namespace attn
