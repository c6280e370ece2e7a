#pragma once
// Shared test helpers: matrices from literals, element-wise comparison with a message naming the cell.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/io/scenario_json.h"

namespace attn::test {

// A file's bytes as a string ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An empty folder of this test run's own (the process id keeps parallel runs apart).
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("attention-lab-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline Matrix mat(std::initializer_list<std::initializer_list<double>> rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index r = 0;
  for (const auto& row : rows) {
    Eigen::Index c = 0;
    for (double x : row) m(r, c++) = x;
    ++r;
  }
  return m;
}

// Same shape, and every entry within tol (infinities must match exactly).
inline void check_matrix(const Matrix& actual, const Matrix& expected, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(actual.rows() == expected.rows());
  REQUIRE(actual.cols() == expected.cols());
  for (Eigen::Index r = 0; r < expected.rows(); ++r)
    for (Eigen::Index c = 0; c < expected.cols(); ++c) {
      INFO("[" << r << "][" << c << "] expected " << expected(r, c) << " found " << actual(r, c));
      if (std::isinf(expected(r, c))) CHECK(actual(r, c) == expected(r, c));
      else CHECK(std::abs(actual(r, c) - expected(r, c)) <= tol);
    }
}

// `m` with one cell changed: a weight is replaced whole (SharedMatrix), never changed in place.
inline Matrix with_cell(Matrix m, Eigen::Index r, Eigen::Index c, double value) {
  m(r, c) = value;
  return m;
}

inline std::string asset(const std::string& name) { return std::string(ATTN_ASSETS_DIR) + "/scenarios/" + name; }
inline std::string data(const std::string& name) { return std::string(ATTN_TEST_DATA_DIR) + "/" + name; }

// The command line run in-process, as a user would type it.
struct CliRun {
  int code;
  std::string out, err;
};
CliRun run_cli_capture(const std::vector<std::string>& args);
using Run = CliRun;
inline Run run(const std::vector<std::string>& args) { return run_cli_capture(args); }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An environment variable set for one test, and put back as it was.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};
inline const std::string kShippedPresets = std::string(ATTN_ASSETS_DIR) + "/presets/models.json";

inline Scenario cat_sat() { return load_scenario_file(asset("the_cat_sat.json")); }

}  // namespace attn::test
