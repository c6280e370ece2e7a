#include "core/text_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

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

namespace {

// value >= 0 with `decimals` decimals, halves rounded up (1.125 -> "1.13"; printf would give the even "1.12"), for
// values whose digits fit 64 bits.
std::string fixed_half_up(long double value, int decimals) {
  const long double scale = std::pow(10.0L, decimals);
  std::string digits = std::to_string(static_cast<std::uint64_t>(std::floor(value * scale + 0.5L)));
  if (decimals == 0) return digits;
  if (digits.size() <= static_cast<std::size_t>(decimals)) digits.insert(0, decimals + 1 - digits.size(), '0');
  return digits.insert(digits.size() - decimals, ".");
}

std::string hundredths_text(long double value) { return fixed_half_up(value, 2); }

}  // namespace

std::string percent(std::uint64_t part, std::uint64_t whole) {
  const long double share =
      whole == 0 ? 0.0L : 100.0L * static_cast<long double>(part) / static_cast<long double>(whole);
  return hundredths_text(share) + "%";
}

std::string percent_text(double share) {
  if (!std::isfinite(share)) return general_number(100 * share) + "%";
  return (share < 0 ? "-" : "") + hundredths_text(100.0L * std::abs(static_cast<long double>(share))) + "%";
}

std::string milliseconds_text(double seconds, int decimals) { return format_number(seconds * 1e3, decimals) + " ms"; }

std::string binary_size(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  return format_value(static_cast<double>(bytes), NumberUnit::Bytes);
}

std::string bytes_text(std::uint64_t bytes) {
  const std::string exact = thousands(bytes) + (bytes == 1 ? " byte" : " bytes");
  return bytes < 1024 ? exact : exact + " (" + binary_size(bytes) + ")";
}

std::string bits_in_bytes(std::uint64_t bits) {
  if (bits % 8 == 0) return thousands(bits / 8);
  std::string eighths = std::to_string(bits % 8 * 125);  // thousandths, always three digits: 4 bits -> "500"
  while (eighths.back() == '0') eighths.pop_back();
  return thousands(bits / 8) + "." + eighths;
}

std::string bits_text(std::uint64_t bits) { return bits_in_bytes(bits) + (bits == 8 ? " byte" : " bytes"); }

std::string bits_size_text(std::uint64_t bits) {
  return bits < 8 * 1024 ? bits_text(bits) : bits_text(bits) + " (" + binary_size(bits / 8) + ")";
}

std::string thousands_signed(std::int64_t n) {
  if (n >= 0) return thousands(static_cast<std::uint64_t>(n));
  return "-" + thousands(0 - static_cast<std::uint64_t>(n));
}

std::string limit_text(std::int64_t n) {
  // Four digits read at a glance (and 4096 reads as the size it often is); five or more are grouped.
  return n > -10000 && n < 10000 ? std::to_string(n) : thousands_signed(n);
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

std::string significant_text(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x == 0 ? "0" : general_number(x);
  if (std::abs(x) >= 1e15) return format_number(x, 0);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(x))));
  int decimals = std::max(0, digits - 1 - magnitude);
  std::string shown = fixed_half_up(std::abs(x), decimals);
  // 9.996 to 3 digits rounds up to "10.00": a digit more than wanted, so one decimal fewer.
  if (decimals > 0 && std::strtod(shown.c_str(), nullptr) >= std::pow(10.0, magnitude + 1))
    shown = fixed_half_up(std::abs(x), --decimals);
  return (x < 0 ? "-" : "") + shown;
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

std::string quoted_number(std::string_view written) {
  const std::string shown = escaped_text(written.substr(0, kMaxQuotedNumber));
  if (written.size() <= kMaxQuotedNumber) return shown;
  const auto digits = std::count_if(written.begin(), written.end(), [](char c) { return c >= '0' && c <= '9'; });
  return shown + "\u2026, " + thousands(static_cast<std::uint64_t>(digits)) + " digits";
}

std::string line_and_column(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + byte, '\n'));
  const std::size_t line_start = text.rfind('\n', byte == 0 ? 0 : byte - 1);
  const std::size_t column = line_start == std::string_view::npos || byte == 0 ? byte : byte - line_start - 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column == 0 ? 1 : column);
}

std::size_t invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length_at(text, i);
    if (n == 0) return i;
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

std::string without_negative_zero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string without_trailing_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string short_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  const double a = std::abs(x);
  if (std::abs(x - std::round(x)) < 1e-9 && a < 1e15) return format_number(std::round(x), 0);
  if (a >= 1e7 || a < 1e-3) return scientific_text(x, 3);
  return without_trailing_zeros(format_number(x, 3));
}

std::string scientific_text(double x, int digits) {
  if (!std::isfinite(x)) return format_number(x, 0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", std::max(0, digits - 1), x);
  return without_negative_zero(buf);
}

std::string round_trip_number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string hex_text(std::uint64_t value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llx", std::max(0, digits), static_cast<unsigned long long>(value));
  return buf;
}

std::string format_number(double x, int precision) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::isnan(x)) return "nan";
  std::string s(static_cast<std::size_t>(std::snprintf(nullptr, 0, "%.*f", precision, x)), '\0');
  std::snprintf(s.data(), s.size() + 1, "%.*f", precision, x);
  return without_negative_zero(std::move(s));
}

int activation_decimals(double largest, bool all_whole, bool all_tenths) {
  largest = std::abs(largest);
  if (!std::isfinite(largest) || largest == 0.0) return 0;
  // Values that would all read 0.000 (a deep red cell written "0.000" teaches the wrong thing): the largest with two
  // significant digits, 4e-4 as 0.00040. Before whole numbers: 1e-12 is "whole" only within rounding.
  if (largest < 0.5e-3) return std::min(kTinyActivationDecimals, 1 - static_cast<int>(std::floor(std::log10(largest))));
  if (all_whole) return 0;
  // Four significant digits at most: 18.908 as 18.91, so scores in the tens keep a readable cell.
  const int whole_digits = largest >= 1.0 ? static_cast<int>(std::floor(std::log10(largest))) + 1 : 1;
  // Numbers typed in tenths (an input X of 0.9 and -0.2) read as typed.
  return std::clamp(kSignificantDigits - whole_digits, 0, all_tenths ? 1 : kActivationDecimals);
}

std::string probability_text(double p) { return p == 0.0 ? "0" : format_number(p, kProbabilityDecimals); }

std::string prediction_text(double p) { return p >= 0.0005 || p <= 0.0 ? probability_text(p) : scientific_text(p, 2); }

std::size_t utf8_length_at(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (Unicode's table of well-formed sequences)
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  if (n == 0 || i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

char32_t next_code_point(std::string_view s, std::size_t& i) {
  const std::size_t n = utf8_length_at(s, i);
  const auto byte = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
  if (n == 0) {
    ++i;
    return 0xFFFD;
  }
  char32_t c = n == 1 ? byte(0) : byte(0) & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) c = c << 6 | (byte(k) & 0x3F);
  i += n;
  return c;
}

void append_utf8(std::string& s, char32_t c) {
  if (c < 0x80) {
    s += static_cast<char>(c);
    return;
  }
  const int n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  s += static_cast<char>((0xF00 >> n) | (c >> (6 * (n - 1))));  // 110xxxxx, 1110xxxx or 11110xxx
  for (int k = n - 2; k >= 0; --k) s += static_cast<char>(0x80 | (c >> (6 * k) & 0x3F));
}

std::string escaped_text(std::string_view bytes) {
  std::string out;
  // A message quotes a file's text: a 10 MB "dtype" would otherwise be a 10 MB line.
  constexpr std::size_t kMostBytes = 1024;
  if (bytes.size() > kMostBytes) {
    std::size_t cut = kMostBytes;
    while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) --cut;  // a whole character
    return escaped_text(bytes.substr(0, cut)) + "\u2026 (" + thousands(std::uint64_t(bytes.size())) + " bytes)";
  }
  for (std::size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const std::size_t n = utf8_length_at(bytes, i);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x" + hex_text(c, 2);
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string shorten_label(const std::string& label, std::size_t columns) {
  if (display_width(label) <= columns) return label;
  std::size_t kept = 0, end = 0;  // the bytes of the first columns - 1 code points
  for (; end < label.size(); ++end)
    if ((static_cast<unsigned char>(label[end]) & 0xC0) != 0x80 && kept++ == columns - 1) break;
  return label.substr(0, end) + "\u2026";
}

}  // namespace attn
