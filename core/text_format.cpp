#include "core/text_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace attn {

std::string plural(std::int64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string group_digits(std::string_view digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string thousands(std::uint64_t n) { return group_digits(std::to_string(n)); }

std::string thousands_signed(std::int64_t n) {
  if (n >= 0) return thousands(static_cast<std::uint64_t>(n));
  return "-" + thousands(0 - static_cast<std::uint64_t>(n));
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

std::string join(std::span<const std::string_view> parts, std::string_view separator) {
  std::string out;
  for (const std::string_view p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

std::string general_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string general_number_beside(double x, double limit) {
  const auto with_digits = [](double v, int digits) {
    std::ostringstream out;
    out.precision(digits);
    out << v;
    return out.str();
  };
  std::string shown = general_number(x);
  for (int digits = 7; x != limit && shown == with_digits(limit, digits - 1) && digits <= 17; ++digits)
    shown = with_digits(x, digits);
  return shown;
}

std::string line_and_column(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + byte, '\n'));
  const std::size_t line_start = text.rfind('\n', byte == 0 ? 0 : byte - 1);
  const std::size_t column = line_start == std::string_view::npos || byte == 0 ? byte : byte - line_start - 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column == 0 ? 1 : column);
}

std::size_t invalid_utf8_at(std::string_view text) {
  const auto byte = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned c = byte(i);
    // The sequence's length and the range of its second byte (which excludes overlong forms and surrogates).
    std::size_t n = 1;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80) n = 1;
    else if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else return i;
    for (std::size_t k = 1; k < n; ++k) {
      const unsigned b = byte(i + k);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) return words;
    const std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    words.emplace_back(text.substr(start, i - start));
  }
}

std::string format_number(double x, int precision) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::isnan(x)) return "nan";
  std::string s(static_cast<std::size_t>(std::snprintf(nullptr, 0, "%.*f", precision, x)), '\0');
  std::snprintf(s.data(), s.size() + 1, "%.*f", precision, x);
  // "-0.0000" would suggest a negative value that is not there.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

}  // namespace attn
