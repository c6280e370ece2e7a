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
