#pragma once
// Numbers as people read them: thousands separators, and byte counts in 1024-based units.
#include <cstdint>
#include <string>

#include "core/text_format.h"  // thousands, binary_size and bytes_text

namespace attn::cli {

// "10.00 GiB" and "10,737,418,240 bytes (10.00 GiB)": written in core/text_format, where the engine's messages (the
// memory budget's) write them too.
using attn::binary_size;
using attn::bytes_text;

// part / whole as "12.50%".
std::string percent(std::uint64_t part, std::uint64_t whole);

}  // namespace attn::cli
