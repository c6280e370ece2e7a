#include "app/cli/units.h"

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

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return fixed2(whole == 0 ? 0.0L : 100.0L * static_cast<long double>(part) / static_cast<long double>(whole)) + "%";
}

}  // namespace attn::cli
