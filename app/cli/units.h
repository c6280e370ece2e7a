#pragma once
// Numbers as people read them: thousands separators, and byte counts in 1024-based units.
#include <cstdint>
#include <string>

#include "core/text_format.h"  // thousands, the separators these build on

namespace attn::cli {

// "10.00 GiB" (KiB .. EiB, 1024-based, two decimals); under 1 KiB: "512 bytes".
std::string binary_size(std::uint64_t bytes);

// "10,737,418,240 bytes (10.00 GiB)"; under 1 KiB just "512 bytes".
std::string bytes_text(std::uint64_t bytes);

// part / whole as "12.50%".
std::string percent(std::uint64_t part, std::uint64_t whole);

}  // namespace attn::cli
