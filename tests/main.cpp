#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sstream>

#include "app/cli.h"
#include "helpers.h"

namespace attn::test {

CliRun run_cli_capture(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = attn::cli::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace attn::test
