#pragma once
// The decoding steps as JSON (`attention-lab decode --json`).
#include <ostream>

#include <nlohmann/json.hpp>

#include "core/decode.h"

namespace attn {

// Written as it is made, one row of numbers held at a time.
void write_decode_json(std::ostream& out, const DecodeTrace& d);
// The same document as a tree, for a small decoding (tests): parsed from write_decode_json's text.
nlohmann::ordered_json decode_to_json(const DecodeTrace& d);

}  // namespace attn
