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

// A refusal past the memory budget, both numbers in binary_size: "<what> needs 130.50 GiB but the memory budget is
// 3.00 GiB" (what: "running 64 layers on 4,096 tokens", model_bytes.h).
std::string over_budget(const std::string& what, std::int64_t needs, std::int64_t budget);

// part / whole as "12.50%".
std::string percent(std::uint64_t part, std::uint64_t whole);

}  // namespace attn::cli
