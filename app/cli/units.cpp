#include "app/cli/units.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace attn::cli {
namespace {

// Two decimals, halves rounded up (1.125 -> "1.13"; printf would give the even "1.12").
std::string fixed2(long double value) {
  const auto hundredths = static_cast<std::uint64_t>(std::floor(value * 100.0L + 0.5L));
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%02llu", static_cast<unsigned long long>(hundredths / 100),
                static_cast<unsigned long long>(hundredths % 100));
  return text;
}

}  // namespace

std::string binary_size(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> kUnits{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  std::size_t unit = 0;
  long double value = static_cast<long double>(bytes) / 1024.0L;
  // Move up while the value would print as 1024.00 or more, so 1,073,741,823 bytes reads "1.00 GiB".
  while (unit + 1 < kUnits.size() && value >= 1023.995L) {
    value /= 1024.0L;
    ++unit;
  }
  return fixed2(value) + " " + kUnits[unit];
}

std::string bytes_text(std::uint64_t bytes) {
  const std::string exact = thousands(bytes) + (bytes == 1 ? " byte" : " bytes");
  return bytes < 1024 ? exact : exact + " (" + binary_size(bytes) + ")";
}

std::string over_budget(const std::string& what, std::int64_t needs, std::int64_t budget) {
  return what + " needs " + binary_size(static_cast<std::uint64_t>(needs)) + " but the memory budget is " +
         binary_size(static_cast<std::uint64_t>(budget));
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return fixed2(whole == 0 ? 0.0L : 100.0L * static_cast<long double>(part) / static_cast<long double>(whole)) + "%";
}

}  // namespace attn::cli
