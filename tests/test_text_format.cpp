// The one vocabulary every message, view and report writes numbers and counts in.
#include <doctest/doctest.h>

#include "core/text_format.h"

using namespace attn;

TEST_CASE("thousands separators, unsigned and signed, to the 64-bit limits") {
  CHECK(thousands(0) == "0");
  CHECK(thousands(999) == "999");
  CHECK(thousands(1000) == "1,000");
  CHECK(thousands(10737418240ull) == "10,737,418,240");
  CHECK(thousands(18446744073709551615ull) == "18,446,744,073,709,551,615");
  CHECK(thousands_signed(-1234) == "-1,234");
  CHECK(thousands_signed(-9223372036854775807 - 1) == "-9,223,372,036,854,775,808");
  CHECK(thousands_signed(12) == "12");
}

TEST_CASE("plural: the count, then the word with an s unless it is one") {
  CHECK(plural(1, "head") == "1 head");
  CHECK(plural(0, "head") == "0 heads");
  CHECK(plural(4096, "token") == "4096 tokens");  // digits as typed in files and options
  CHECK(plural(-1, "row") == "-1 rows");
}

TEST_CASE("bits as bytes: exact halves for int4, one byte in the singular") {
  CHECK(bits_in_bytes(4) == "0.5");
  CHECK(bits_in_bytes(12) == "1.5");
  CHECK(bits_in_bytes(2) == "0.25");
  CHECK(bits_in_bytes(1) == "0.125");
  CHECK(bits_in_bytes(8196) == "1,024.5");
  CHECK(bits_in_bytes(16) == "2");
  CHECK(bits_text(4) == "0.5 bytes");
  CHECK(bits_text(8) == "1 byte");
  CHECK(bits_text(12) == "1.5 bytes");
  CHECK(bits_text(8196) == "1,024.5 bytes");
  CHECK(bits_size_text(12) == "1.5 bytes");
  CHECK(bits_size_text(8196) == "1,024.5 bytes (1.00 KiB)");
  CHECK(bits_size_text(8192) == "1,024 bytes (1.00 KiB)");
}

TEST_CASE("limit_text: bounds grouped from five digits on") {
  CHECK(limit_text(17) == "17");
  CHECK(limit_text(4096) == "4096");
  CHECK(limit_text(9999) == "9999");
  CHECK(limit_text(10000) == "10,000");
  CHECK(limit_text(1048576) == "1,048,576");
  CHECK(limit_text(-9999) == "-9999");
  CHECK(limit_text(-10000) == "-10,000");
}

TEST_CASE("upper: ASCII letters only") {
  CHECK(upper("mla") == "MLA");
  CHECK(upper("gqa (G=8)") == "GQA (G=8)");
  CHECK(upper("caf\u00E9") == "CAF\u00E9");
}

TEST_CASE("join: the parts with the separator between them, none for one part or none") {
  const std::string_view three[] = {"a", "b", "c"};
  CHECK(join(three, ", ") == "a, b, c");
  CHECK(join(std::span(three, 1), " | ") == "a");
  CHECK(join({}, ", ") == "");
}

TEST_CASE("activation_decimals: three, fewer for four significant digits, none for whole numbers, more for tiny") {
  CHECK(activation_decimals(0.95, false) == 3);
  CHECK(activation_decimals(-0.95, false) == 3);
  CHECK(activation_decimals(9.99, false) == 3);
  CHECK(activation_decimals(18.91, false) == 2);
  CHECK(activation_decimals(123.5, false) == 1);
  CHECK(activation_decimals(2048.5, false) == 0);
  CHECK(activation_decimals(3.0, true) == 0);
  CHECK(activation_decimals(0.9, false, true) == 1);
  CHECK(activation_decimals(123.5, false, true) == 1);
  CHECK(activation_decimals(2048.5, false, true) == 0);
  CHECK(activation_decimals(0.0, false) == 0);
  CHECK(activation_decimals(-0.0, false) == 0);
  CHECK(activation_decimals(5e-4, false) == 3);  // reads 0.001 at three decimals
  CHECK(activation_decimals(4e-4, false) == 5);  // would read 0.000: two significant digits, 0.00040
  CHECK(activation_decimals(1e-12, false) == kTinyActivationDecimals);
}

TEST_CASE("prediction_text: three decimals, and two significant digits under 0.0005") {
  CHECK(prediction_text(0.2421) == "0.242");
  CHECK(prediction_text(0.0005) == "0.001");
  CHECK(prediction_text(0.000499) == "5.0e-04");
  CHECK(prediction_text(2.14e-5) == "2.1e-05");
  CHECK(prediction_text(0.0) == "0");
}

TEST_CASE("probability_text: every probability of a list with three decimals, 0 as 0") {
  const double ps[] = {0.4623, 0.0977, 3.85e-4, 0.0, -0.0, 1.0, 1e-300, -1e-17, 0.9996};
  std::string shown;
  for (const double p : ps) shown += (shown.empty() ? "" : " ") + probability_text(p);
  CHECK(shown == "0.462 0.098 0.000 0 0 1.000 0.000 0.000 1.000");
}

TEST_CASE("a printed number without a negative zero or zeros after its last digit") {
  CHECK(without_negative_zero("-0") == "0");
  CHECK(without_negative_zero("-0.000") == "0.000");
  CHECK(without_negative_zero("-0.001") == "-0.001");
  CHECK(without_negative_zero("-10") == "-10");
  CHECK(without_negative_zero("") == "");
  CHECK(without_trailing_zeros("2.500") == "2.5");
  CHECK(without_trailing_zeros("3.000") == "3");
  CHECK(without_trailing_zeros("100") == "100");  // no decimal point: its zeros are digits
  CHECK(without_trailing_zeros("-0.050") == "-0.05");
  CHECK(format_number(-0.00001, 3) == "0.000");
}

TEST_CASE("sizes as values: three significant digits, halves up, in the unit named by its base") {
  CHECK(binary_size(1024) == "1.00 KiB");
  CHECK(binary_size(1207959552) == "1.13 GiB");  // 1.125 GiB exactly: halves round up
  CHECK(binary_size(438829056) == "419 MiB");    // 418.5 MiB exactly
  CHECK(binary_size(1056696008) == "1008 MiB");  // 1000..1023 of a unit stay whole
  CHECK(binary_size((1ull << 30) - 1) == "1.00 GiB");
  CHECK(format_value(2.3e9, NumberUnit::DecimalBytes) == "2.30 GB");
  CHECK(format_value(1e10, NumberUnit::DecimalBytes) == "10.0 GB");
  CHECK(format_exact(2.3e9, NumberUnit::DecimalBytes) == "2,300,000,000 bytes (2.30 GB)");
  CHECK(format_exact(262144, NumberUnit::Flops) == "262,144 FLOP (262 kFLOP)");
  CHECK(percent_text(0.9545) == "95.45%");
  CHECK(percent_text(0.00125) == "0.13%");
  CHECK(milliseconds_text(0.01234, 2) == "12.34 ms");
  CHECK(scientific_text(12345, 3) == "1.23e+04");
  CHECK(round_trip_number(0.1) == "0.10000000000000001");
  CHECK(hex_text(255, 4) == "00ff");
}

TEST_CASE("UTF-8 one character at a time: 1 to 4 bytes both ways, bytes that are not a character as U+FFFD") {
  for (const char32_t c : {U'a', U'\u00e9', U'\u2581', U'\u732b', U'\U0001F63A'}) {
    std::string s;
    append_utf8(s, c);
    std::size_t i = 0;
    CHECK(next_code_point(s, i) == c);
    CHECK(i == s.size());
  }
  std::string s;
  append_utf8(s, U'\u0120');
  CHECK(s == "\xC4\xA0");  // Ġ
  const std::string bad =
      "\xff"
      "a";
  std::size_t i = 0;
  CHECK(next_code_point(bad, i) == U'\uFFFD');
  CHECK(i == 1);
  CHECK(next_code_point(bad, i) == U'a');
}

TEST_CASE("escaped_text cuts a long text at a whole character and says how long it was") {
  const std::string long_text = std::string(1023, 'a') + "\u00e9" + std::string(10, 'b');  // é straddles byte 1024
  CHECK(escaped_text(long_text) == std::string(1023, 'a') + "\u2026 (1,035 bytes)");
  CHECK(escaped_text(std::string(1024, 'a')) == std::string(1024, 'a'));
}
