#include "app/cli/memory_option.h"

#include <unistd.h>

#include <algorithm>

#include "app/cli/args.h"
#include "core/memory_budget.h"

namespace attn::cli {

const char* const kMemoryBudgetHelp =
    "  --memory-budget SIZE  what the work and its output may hold: bytes, or a number with K, M, G, T\n"
    "                    (1024-based; KiB, MiB, GiB, TiB too) or KB, MB, GB, TB\n"
    "                    (1000-based): 2G, 512M, 1.5GiB. Default: 3 GiB or half the physical memory, whichever\n"
    "                    is smaller. Work that would need more is refused before it starts (exit 2, both numbers)\n";

std::int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return std::min<std::int64_t>(std::int64_t(pages), INT64_MAX / page) * page;
}

std::int64_t machine_memory_budget() { return default_memory_budget(physical_memory_bytes()); }

std::optional<std::int64_t> take_memory_budget(std::vector<std::string>& words) {
  static const std::string kOption = "--memory-budget";
  std::optional<std::int64_t> budget;
  for (std::size_t i = 0; i < words.size();) {
    if (words[i] != kOption) {
      ++i;
      continue;
    }
    if (budget) throw UsageError(kOption + ": given twice (give it once)");
    if (i + 1 == words.size()) throw UsageError(kOption + ": missing value");
    try {
      budget = parse_memory_size(words[i + 1], kOption);
    } catch (const InputError& e) {
      throw UsageError(e.what());
    }
    words.erase(words.begin() + static_cast<std::ptrdiff_t>(i), words.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  }
  return budget;
}

}  // namespace attn::cli
