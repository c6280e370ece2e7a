#include "app/cli/args.h"

#include <charconv>

#include "core/text_format.h"

namespace attn::cli {

std::string Args::value(const std::string& option) {
  if (done()) throw UsageError(option + ": missing value");
  if (!given_.insert(option).second) throw UsageError(option + ": given twice (give each option once)");
  return next();
}

std::int64_t Args::integer(const std::string& option, std::int64_t lo, std::int64_t hi) {
  const std::string text = value(option);
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec == std::errc::invalid_argument || end != text.data() + text.size())
    throw UsageError(option + ": expected a whole number but found '" + text + "'");
  if (ec == std::errc::result_out_of_range || x < lo || x > hi)
    throw UsageError(option + ": must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (found " +
                     text + ")");
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
  if (ec == std::errc::result_out_of_range || !(x >= lo && x <= hi))
    throw UsageError(option + ": must be between " + general_number(lo) + " and " + general_number(hi) + " (found " +
                     text + ")");
  return x;
}

}  // namespace attn::cli
