#include "ui/logic/cell_format.h"

#include <algorithm>
#include <cmath>

#include "core/text_format.h"

namespace attn::ui {
namespace {

// "8e-4", "1.23e5", "-1e-5": printf's %e without the exponent's sign and zero padding or the mantissa's
// trailing zeros, so a narrow cell still holds the value.
std::string compact_scientific(double x, int digits) {
  const std::string s = scientific_text(x, digits);
  const std::size_t e = s.find('e');
  const std::string mantissa = without_trailing_zeros(s.substr(0, e));
  const int exponent = std::stoi(s.substr(e + 1));
  return mantissa + "e" + std::to_string(exponent);
}

std::string without_leading_zero(std::string s) {
  s.erase(s[0] == '-' ? 1 : 0, 1);
  return s;
}

std::string shortest_scientific(double x, int max_chars) {
  for (int digits = 3; digits >= 1; --digits) {
    const std::string s = compact_scientific(x, digits);
    if (static_cast<int>(s.size()) <= max_chars) return s;
  }
  return "";
}

}  // namespace

int matrix_decimals(const Matrix& m, const Matrix* visible) {
  double largest = 0.0;
  bool all_whole = true, all_tenths = true;
  const auto whole = [](double y) { return std::abs(y - std::round(y)) < 1e-9 && std::abs(y) < 1e15; };
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    if (visible && visible->data()[i] == 0.0) continue;
    const double x = m.data()[i];
    if (!std::isfinite(x)) continue;  // -inf (a masked score) is not a magnitude
    largest = std::max(largest, std::abs(x));
    all_whole = all_whole && whole(x);
    all_tenths = all_tenths && whole(10.0 * x);
  }
  return activation_decimals(largest, all_whole, all_tenths);
}

bool shows_numbers(const Matrix& m) { return m.cols() <= 32 && m.size() <= 1024; }

std::string format_fixed(double x, int decimals) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::isnan(x)) return "nan";
  // 0 stays "0" (a hidden weight is exactly that); 1 in a matrix of thousandths is "1.000", not "1" beside "0.003".
  if (x == 0.0 || (std::abs(x - std::round(x)) < 1e-9 && std::abs(x) < 1e15 && decimals == 0))
    return format_number(std::round(x), 0);
  return format_number(x, decimals);
}

std::string format_cell(double x, int max_chars) {
  const auto fits = [&](const std::string& s) { return static_cast<int>(s.size()) <= max_chars; };
  if (std::isinf(x)) {
    const std::string s = x < 0 ? "-inf" : "inf";
    return fits(s) ? s : "";
  }
  if (std::isnan(x)) return max_chars >= 3 ? "nan" : "";
  const bool integer = std::abs(x - std::round(x)) < 1e-9 && std::abs(x) < 1e15;
  if (integer && fits(format_number(x, 0))) return format_number(x, 0);
  if (integer) return shortest_scientific(x, max_chars);
  // A value with a short exact form keeps it (0.9, not 0.90), so a column of inputs reads evenly.
  for (int decimals = 1; decimals <= 4; ++decimals) {
    const std::string s = format_number(x, decimals);
    if (std::abs(std::stod(s) - x) <= 1e-12 * std::max(1.0, std::abs(x)) && fits(s)) return s;
  }
  // Fewer decimals while the text stays within 5% of the value (0.743 as 0.74, never 0.0008 as 0.001), first
  // with the leading zero, then without it (-0.037 as "-.04"), then in scientific notation.
  const auto close = [&](const std::string& s) { return std::abs(std::stod(s) - x) <= 0.05 * std::abs(x); };
  for (int decimals = 4; decimals >= (std::abs(x) >= 10 ? 0 : 1); --decimals) {
    const std::string s = format_number(x, decimals);
    if (fits(s) && close(s)) return s;
  }
  for (int decimals = 4; decimals >= 1 && std::abs(x) < 1; --decimals) {
    const std::string s = without_leading_zero(format_number(x, decimals));
    if (fits(s) && close(s)) return s;
  }
  if (const std::string s = shortest_scientific(x, max_chars); !s.empty()) return s;
  // Nothing close fits: the roughest form that still says something (0.74 as ".7" in two characters).
  for (int decimals = 2; decimals >= 1 && std::abs(x) < 1; --decimals) {
    const std::string s = without_leading_zero(format_number(x, decimals));
    if (fits(s) && s.find_first_of("123456789") != std::string::npos) return s;
  }
  return "";
}

}  // namespace attn::ui
