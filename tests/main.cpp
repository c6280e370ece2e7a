#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>
#include <string_view>

#include "app/cli/cli.h"
#include "app/gui/gui_options.h"
#include "helpers.h"

namespace attn::test {

CliRun run_cli_capture(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = attn::cli::run_cli(args, out, err, attn::gui::kGuiHelp);  // as main passes it
  return {code, out.str(), err.str()};
}

namespace {

// Remembers how many test cases the run's filters selected.
struct RunCount : doctest::IReporter {
  static inline bool ran = false;
  static inline unsigned selected = 0;
  explicit RunCount(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    ran = true;
    selected = s.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("run_count", 1, RunCount);

}  // namespace
}  // namespace attn::test

// CTest runs the test cases of each source file in a process (--source-file=*/tests/test_x.cpp); by hand one runs
// by name (--test-case=NAME). A filter that selects nothing (a file without test cases, a name CTest split at ';')
// used to pass: it fails here instead.
int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int code = context.run();
  if (context.shouldExit()) return code;
  bool filtered = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    filtered = filtered || a.starts_with("--test-case=") || a.starts_with("-tc=") || a.starts_with("--source-file=") ||
               a.starts_with("-sf=");
  }
  if (code == 0 && filtered && attn::test::RunCount::ran && attn::test::RunCount::selected == 0) {
    std::cerr << "attn_tests: no test case matches the name or source file asked for; a test case's name must not "
                 "contain ';'\n";
    return 1;
  }
  return code;
}
