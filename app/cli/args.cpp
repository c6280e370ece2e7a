#include "app/cli/args.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/text_format.h"

namespace attn::cli {
namespace {

// A number out of a double's range that is not huge is too close to 0 ("1e-400"): strtod says which, from_chars not.
bool underflows(const std::string& text) { return std::abs(std::strtod(text.c_str(), nullptr)) <= 1.0; }

}  // namespace

std::string Args::value(const std::string& option) {
  if (done()) throw UsageError(option + ": missing value");
  if (!given_.insert(option).second) throw UsageError(option + ": given twice (give each option once)");
  return next();
}

void Args::flag(const std::string& option) {
  if (!given_.insert(option).second) throw UsageError(option + ": given twice (give each option once)");
}

std::int64_t Args::integer(const std::string& option, std::int64_t lo, std::int64_t hi) {
  const std::string text = value(option);
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(option + ": expected a whole number but found '" + text + "'");
  if (ec == std::errc::result_out_of_range || x < lo || x > hi)
    throw UsageError(option + ": must be between " + limit_text(lo) + " and " + limit_text(hi) + " (found " + text +
                     ")");
  return x;
}

std::uint64_t Args::unsigned_integer(const std::string& option) {
  const std::string text = value(option);
  std::uint64_t x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(option + ": expected a non-negative whole number but found '" + text + "'");
  if (ec == std::errc::result_out_of_range)
    throw UsageError(option + ": must be at most " + std::to_string(UINT64_MAX) + " (found " + text + ")");
  return x;
}

double Args::number(const std::string& option, double lo, double hi) {
  const std::string text = value(option);
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(option + ": expected a number but found '" + text + "'");
  if (ec == std::errc::result_out_of_range && underflows(text))
    throw UsageError(option + ": too small to be represented: it would be 0 (found " + text + ")");
  if (ec == std::errc::result_out_of_range || !(x >= lo && x <= hi))
    throw UsageError(option + ": must be between " + general_number(lo) + " and " + general_number(hi) + " (found " +
                     text + ")");
  return x;
}

}  // namespace attn::cli
