// A matrix as CSV and the names of exported files (ui/logic/matrix_export).
#include <fstream>
#include "helpers.h"
#include "ui/logic/matrix_export.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("a matrix as CSV: labels on rows and columns, full precision, -inf kept, labels quoted when needed") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::string> rows{"the", "say \"hi\""}, cols{"a,b", "c"};
  CHECK(matrix_csv(mat({{1.0 / 3, -inf}, {2, 0.1}}), &rows, &cols) ==
        ",\"a,b\",c\n"
        "the,0.33333333333333331,-inf\n"
        "\"say \"\"hi\"\"\",2,0.10000000000000001\n");
  CHECK(matrix_csv(mat({{1, 2, 3}}), nullptr, nullptr) == ",0,1,2\n0,1,2,3\n");
}

TEST_CASE("exported pictures get a file name that is new in the folder and safe on every system") {
  const std::filesystem::path dir = fresh_dir("pictures");
  CHECK(picture_file_name(dir.string(), "KV cache, bf16") == (dir / "KV_cache__bf16.png").string());
  std::ofstream(dir / "scores.png") << "x";
  std::ofstream(dir / "scores-2.png") << "x";
  CHECK(picture_file_name(dir.string(), "scores") == (dir / "scores-3.png").string());
  CHECK(picture_file_name(dir.string(), "") == (dir / "picture.png").string());
  std::filesystem::remove_all(dir);
}
