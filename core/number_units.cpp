#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "core/text_format.h"

// Numbers with their units (bytes, tokens, FLOPs): the short forms of chart ticks and bars, and the exact forms of
// tooltips and messages. Declared in core/text_format.h.
namespace attn {
namespace {

constexpr std::array<const char*, 7> kByteUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
constexpr std::array<const char*, 7> kDecimalByteUnits{"B", "kB", "MB", "GB", "TB", "PB", "EB"};
constexpr std::array<const char*, 7> kFlopUnits{"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};

// m·10^k with a single rounding, so 3·10^-1 is the double nearest 0.3 and not 0.30000000000000004.
double times_ten_to(double m, int k) { return k >= 0 ? m * std::pow(10.0, k) : m / std::pow(10.0, -k); }

std::string fixed_trimmed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), x);
  return without_trailing_zeros(buf);
}

// Decimals that keep `sig` significant digits of x > 0 (none for x >= 10^(sig-1)).
int decimals_for(double x, int sig) { return std::max(0, sig - 1 - static_cast<int>(std::floor(std::log10(x)))); }

std::string with_sign(double v, std::string text) { return v < 0 && text != "0" ? "-" + text : text; }

std::string plain(double v, int sig) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  const double mag = std::abs(v);
  if (mag == 0) return "0";
  const int e = static_cast<int>(std::floor(std::log10(mag)));
  if (mag >= 1e-3 && mag < 1e6) {
    // Round to `sig` digits first, so 1234 reads "1230" rather than keeping a 4th digit.
    const double r = std::round(mag / times_ten_to(1, e - sig + 1)) * times_ten_to(1, e - sig + 1);
    return with_sign(v, fixed_trimmed(r, sig - 1 - e));
  }
  std::string mantissa = fixed_trimmed(mag / times_ten_to(1, e), sig - 1);
  int exponent = e;
  if (mantissa == "10") {  // 9.996e9 rounds up into the next decade
    mantissa = "1";
    ++exponent;
  }
  return with_sign(v, mantissa + "e" + std::to_string(exponent));
}

// v in the largest unit that keeps it at 1 or more, moving up when rounding reaches `base`; trailing zeros dropped
// (a tick's "10 GB") or kept (a value's "2.30 GB").
std::string scaled_unit(double v, double base, std::span<const char* const> units, int sig, bool keep_zeros = false) {
  if (!std::isfinite(v)) return plain(v, sig) + " " + units[0];
  double x = std::abs(v);
  std::size_t k = 0;
  while (k + 1 < units.size() && x >= base) {
    x /= base;
    ++k;
  }
  const auto digits = [&](double y) {
    return keep_zeros ? significant_text(y, sig) : fixed_trimmed(y, decimals_for(y, sig));
  };
  std::string text = x == 0 ? "0" : digits(x);
  if (k + 1 < units.size() && std::strtod(text.c_str(), nullptr) >= base) {
    x /= base;
    ++k;
    text = digits(x);
  }
  return with_sign(v, text) + " " + units[k];
}

std::string tokens(double v, int sig) {
  if (!std::isfinite(v)) return plain(v, sig);
  const double r = std::round(v);
  if (v != r) return std::abs(v) < 100 ? plain(v, sig) : whole_number(r);
  const double mag = std::abs(r);
  if (mag >= 1024 * 1024 && std::fmod(mag, 1024.0 * 1024.0) == 0)
    return with_sign(r, fixed_trimmed(mag / (1024.0 * 1024.0), 0) + "M");
  if (mag >= 1024 && std::fmod(mag, 1024.0) == 0) return with_sign(r, fixed_trimmed(mag / 1024.0, 0) + "k");
  return whole_number(r);
}

}  // namespace

std::string whole_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::abs(std::round(v)));
  return with_sign(std::round(v), group_digits(buf));  // any size: FLOP counts pass 2^64
}

std::string tick_text(double v, NumberUnit u, int sig) {
  switch (u) {
    case NumberUnit::Bytes: return scaled_unit(v, 1024, kByteUnits, sig);
    case NumberUnit::DecimalBytes: return scaled_unit(v, 1000, kDecimalByteUnits, sig);
    case NumberUnit::Tokens: return tokens(v, sig);
    case NumberUnit::Flops: return scaled_unit(v, 1000, kFlopUnits, sig);
    case NumberUnit::Plain:
    case NumberUnit::Probability: break;  // ticks
  }
  return plain(v, sig);
}

std::string format_unit(double v, NumberUnit u) {
  return u == NumberUnit::Probability ? probability_text(v) : tick_text(v, u, 3);
}

std::string format_value(double v, NumberUnit u) {
  switch (u) {
    case NumberUnit::Bytes: return scaled_unit(v, 1024, kByteUnits, 3, true);
    case NumberUnit::DecimalBytes: return scaled_unit(v, 1000, kDecimalByteUnits, 3, true);
    case NumberUnit::Flops: return scaled_unit(v, 1000, kFlopUnits, 3, true);
    case NumberUnit::Tokens:
    case NumberUnit::Probability:
    case NumberUnit::Plain: break;
  }
  return format_unit(v, u);
}

std::string format_exact(double v, NumberUnit u) {
  const double r = std::round(v);
  switch (u) {
    case NumberUnit::Bytes:
    case NumberUnit::DecimalBytes: {
      const std::string exact = whole_number(r) + (std::abs(r) == 1 ? " byte" : " bytes");
      return std::abs(r) < (u == NumberUnit::Bytes ? 1024 : 1000) ? exact : exact + " (" + format_value(r, u) + ")";
    }
    case NumberUnit::Tokens: {
      const std::string exact = whole_number(r) + (std::abs(r) == 1 ? " token" : " tokens");
      const std::string brief = format_unit(r, u);
      return brief == whole_number(r) ? exact : exact + " (" + brief + ")";
    }
    case NumberUnit::Flops: {
      const std::string exact = whole_number(r) + " FLOP";
      return std::abs(r) < 1000 ? exact : exact + " (" + format_value(r, u) + ")";
    }
    case NumberUnit::Probability: return probability_text(v);
    case NumberUnit::Plain: break;
  }
  return v == r && std::abs(v) < 1e15 ? whole_number(v) : plain(v, 6);  // whole numbers to the last digit
}

}  // namespace attn
