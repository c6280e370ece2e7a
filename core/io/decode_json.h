#pragma once
// The decoding steps as JSON (`attention-lab decode --json`).
#include <nlohmann/json.hpp>

#include "core/decode.h"

namespace attn {

nlohmann::ordered_json decode_to_json(const DecodeTrace& d);

}  // namespace attn
