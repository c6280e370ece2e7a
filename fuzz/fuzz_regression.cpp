// Runs the fuzz target's body over every file of the directories (or files) given: the seed corpus and
// every input the fuzzer ever found, kept in tests/corpus/. Any broken invariant aborts, after the name of
// the file that broke it was printed. Built with any compiler; CTest runs it as fuzz_corpus_regression.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_scenario_body.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code ec;
    if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> here;
      for (const fs::directory_entry& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) here.push_back(e.path());
      std::sort(here.begin(), here.end());
      if (here.empty()) {
        std::fprintf(stderr, "%s: no files\n", arg.c_str());
        return 2;
      }
      files.insert(files.end(), here.begin(), here.end());
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", arg.c_str());
      return 2;
    }
  }
  for (const fs::path& f : files) {
    std::printf("%s\n", f.c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot be read\n", f.c_str());
      return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    attn::fuzz::fuzz_one_input(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu files: every invariant held\n", files.size());
  return 0;
}
