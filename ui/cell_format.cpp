#include "ui/cell_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn::ui {
namespace {

std::string printf_double(const char* fmt, int precision, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, precision, x);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // no "-0.00"
  return s;
}

}  // namespace

int needed_decimals(double x) {
  if (!std::isfinite(x) || (std::abs(x - std::round(x)) < 1e-9 && std::abs(x) < 1e15)) return 0;
  for (int d = 1; d < 4; ++d) {
    const std::string s = printf_double("%.*f", d, x);
    if (std::abs(std::stod(s) - x) <= 1e-12 * std::max(1.0, std::abs(x))) return d;
  }
  return 4;
}

std::string format_fixed(double x, int decimals) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::isnan(x)) return "nan";
  if (std::abs(x - std::round(x)) < 1e-9 && std::abs(x) < 1e15) return printf_double("%.*f", 0, x);
  return printf_double("%.*f", decimals, x);
}

std::string format_cell(double x, int max_chars) {
  if (std::isinf(x)) {
    const std::string s = x < 0 ? "-inf" : "inf";
    return static_cast<int>(s.size()) <= max_chars ? s : "";
  }
  if (std::isnan(x)) return max_chars >= 3 ? "nan" : "";
  const bool integer = std::abs(x - std::round(x)) < 1e-9 && std::abs(x) < 1e15;
  if (integer) {
    const std::string s = printf_double("%.*f", 0, x);
    if (static_cast<int>(s.size()) <= max_chars) return s;
  } else {
    // A value with a short exact form keeps it (0.9, not 0.90), so a column of inputs reads evenly.
    for (int decimals = 1; decimals <= 4; ++decimals) {
      const std::string s = printf_double("%.*f", decimals, x);
      if (std::abs(std::stod(s) - x) <= 1e-12 * std::max(1.0, std::abs(x)) && static_cast<int>(s.size()) <= max_chars) return s;
    }
    for (int decimals = 4; decimals >= 1; --decimals) {
      const std::string s = printf_double("%.*f", decimals, x);
      // Drop to fewer decimals only while the number still says something (not 0.0 for 0.004).
      if (static_cast<int>(s.size()) <= max_chars && s.find_first_of("123456789") != std::string::npos) return s;
    }
  }
  for (int digits = 3; digits >= 1; --digits) {
    const std::string s = printf_double("%.*e", digits - 1, x);
    if (static_cast<int>(s.size()) <= max_chars) return s;
  }
  return "";
}

}  // namespace attn::ui
