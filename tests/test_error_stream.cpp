#include <doctest/doctest.h>

#include <ostream>
#include <sstream>
#include <string>

#include "app/cli/error_stream.h"

namespace {

std::string through_escaping(const std::string& message) {
  std::ostringstream terminal;
  {
    attn::cli::EscapingStreamBuf buffer(terminal.rdbuf());
    std::ostream err(&buffer);
    err << message << std::flush;
  }
  return terminal.str();
}

}  // namespace

TEST_CASE("a message's control characters reach the terminal escaped, its newlines, tabs and UTF-8 as they are") {
  // A mask value from a shared file that would clear the screen; a name that would retitle the terminal.
  CHECK(through_escaping("attention.mask: found string \"\x1b[2Jx\"\n") ==
        "attention.mask: found string \"\\x1b[2Jx\"\n");
  CHECK(through_escaping(std::string("a\x07" "b\0c\x7f\r", 7)) == "a\\x07b\\x00c\\x7f\\x0d");
  // U+009B (CSI) is a control too; U+00E9 and U+00A0 share its lead byte and are text.
  CHECK(through_escaping("\xc2\x9b" "31m caf\xc3\xa9 \xc2\xa0.\t|\n") == "\\u009b31m caf\xc3\xa9 \xc2\xa0.\t|\n");
  // A lead byte at the very end, or before another, is written as it came.
  CHECK(through_escaping("\xc2") == "\xc2");
  CHECK(through_escaping("\xc2\xc2\x85") == "\xc2\\u0085");
}
