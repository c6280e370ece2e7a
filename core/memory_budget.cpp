#include "core/memory_budget.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "core/text_format.h"
#include "core/trace_bytes.h"

namespace attn {
namespace {

// The unit after a size's number, lower-cased, and its bytes; "" is bytes.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 15> kSizeUnits{{
    {"", 1},
    {"b", 1},
    {"bytes", 1},
    {"k", std::int64_t(1) << 10},
    {"kib", std::int64_t(1) << 10},
    {"kb", 1000},
    {"m", std::int64_t(1) << 20},
    {"mib", std::int64_t(1) << 20},
    {"mb", 1000 * 1000},
    {"g", std::int64_t(1) << 30},
    {"gib", std::int64_t(1) << 30},
    {"gb", std::int64_t(1000) * 1000 * 1000},
    {"t", std::int64_t(1) << 40},
    {"tib", std::int64_t(1) << 40},
    {"tb", std::int64_t(1000) * 1000 * 1000 * 1000},
}};

InputError bad_size(const std::string& field, std::string_view text) {
  return InputError(field,
                    "expected a size such as 3221225472, 512M, 2G or 1.5GiB (K, M, G, T are 1024-based, "
                    "KB, MB, GB, TB 1000-based) but found '" +
                        std::string(text) + "'");
}

}  // namespace

std::int64_t default_memory_budget(std::int64_t physical_bytes) {
  if (physical_bytes <= 0) return limits::kDefaultMemoryBudget;
  return std::clamp<std::int64_t>(physical_bytes / limits::kPhysicalMemoryDivisor, 1, limits::kDefaultMemoryBudget);
}

std::int64_t parse_memory_size(std::string_view text, const std::string& field) {
  // The number: digits with at most one point (no sign, no exponent, no hex).
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  const std::string_view number = text.substr(0, end);
  if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1) throw bad_size(field, text);
  std::string unit;
  for (std::size_t i = end; i < text.size(); ++i)
    if (!(i == end && text[i] == ' ')) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  const auto u = std::find_if(kSizeUnits.begin(), kSizeUnits.end(), [&](const auto& p) { return p.first == unit; });
  if (u == kSizeUnits.end()) throw bad_size(field, text);
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size()) throw bad_size(field, text);
  // Bytes come whole: "1.9999" is not taken as 1 byte; a fraction needs a unit to be a fraction of.
  if (u->second == 1 && value != std::floor(value))
    throw InputError(field, "a number of bytes must be whole (found '" + std::string(text) +
                                "'); use a unit for fractions, such as 1.5G");
  const long double bytes = std::floor(static_cast<long double>(value) * static_cast<long double>(u->second));
  if (bytes > static_cast<long double>(limits::kMaxMemoryBudget))
    throw InputError(
        field, "must be at most " + binary_size(limits::kMaxMemoryBudget) + " but found '" + std::string(text) + "'");
  if (bytes < 1) throw InputError(field, "must be at least 1 byte but found '" + std::string(text) + "'");
  return static_cast<std::int64_t>(bytes);
}

std::string budget_message(std::int64_t needed, std::int64_t budget, std::string_view what, std::string_view fewer,
                           const HeldBeside& beside) {
  std::string m = std::string(what) + " needs " + bytes_text(static_cast<std::uint64_t>(needed)) +
                  " but the memory budget is " + bytes_text(static_cast<std::uint64_t>(budget));
  if (beside.bytes > 0)
    m += ", of which " + bytes_text(static_cast<std::uint64_t>(beside.bytes)) + " are held by " + beside.what;
  // Nothing else to advise when only a larger budget would do.
  return m + "; use --memory-budget" + (fewer.empty() ? "" : ", " + std::string(fewer));
}

std::optional<std::string> budget_refusal(std::int64_t needed, std::int64_t budget, std::string_view what,
                                          std::string_view fewer, const HeldBeside& beside) {
  const std::int64_t total = needed + limits::kProgramBytes;
  if (total + std::max<std::int64_t>(beside.bytes, 0) <= budget) return std::nullopt;
  return budget_message(total, budget, what, fewer, beside);
}

void check_memory_budget(std::int64_t needed, std::int64_t budget, std::string_view what, std::string_view fewer,
                         const HeldBeside& beside) {
  if (std::optional<std::string> refused = budget_refusal(needed, budget, what, fewer, beside))
    throw BudgetError(needed + limits::kProgramBytes, budget, *refused);
}

void check_trace_budget(const Scenario& s, std::int64_t budget, std::int64_t extra) {
  check_memory_budget(predicted_trace_bytes(s) + computing_bytes(s) + extra, budget, "this trace");
}

}  // namespace attn
