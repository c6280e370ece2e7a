#pragma once
// The memory budget as the command line and the window take it: `--memory-budget SIZE` (core/memory_budget.h says
// what SIZE may be), else the machine's default, min(3 GiB, half the physical memory).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {

// sysconf's physical pages x the page size; 0 when the system does not say.
std::int64_t physical_memory_bytes();
// default_memory_budget(physical_memory_bytes()).
std::int64_t machine_memory_budget();

// Takes `--memory-budget SIZE` out of words (wherever it stands) and returns the size, or nothing when it is not
// there. Throws UsageError for a bad size, a missing one, or the option given twice.
std::optional<std::int64_t> take_memory_budget(std::vector<std::string>& words);

extern const char* const kMemoryBudgetHelp;

}  // namespace attn::cli
