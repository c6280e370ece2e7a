// The numbers in heatmap cells (ui/logic/cell_format): one format per matrix, what fits a cell.
#include "core/text_format.h"
#include "helpers.h"
#include "ui/logic/cell_format.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("a matrix's cells share its decimals: an integer among thousandths keeps them, an exact 0 does not") {
  CHECK(format_fixed(1.0, 3) == "1.000");
  CHECK(format_fixed(-1.0, 1) == "-1.0");
  CHECK(format_fixed(2.0, 0) == "2");
  CHECK(format_fixed(0.0, 3) == "0");
  CHECK(format_fixed(-0.0, 3) == "0");
  CHECK(format_fixed(0.0004, 3) == "0.000");  // the heatmap gives such a cell a form of its own (format_cell)
  CHECK(format_fixed(-0.7426921, 3) == "-0.743");
  CHECK(format_fixed(-std::numeric_limits<double>::infinity(), 3) == "-inf");
  Matrix m(1, 3);
  m << 0.5, 1.0, 0.25;
  CHECK(matrix_decimals(m) == 3);  // the magnitude decides, not the digits the values happen to need
  m << 0.0031, 1.0, 0.5;
  CHECK(matrix_decimals(m) == 3);
  m << 12.25, 1.0, 0.25;
  CHECK(matrix_decimals(m) == 2);
  Matrix hidden(1, 3);
  hidden << 0, 1, 1;
  CHECK(matrix_decimals(m, &hidden) == 3);  // hidden cells do not count: 1.0 is the largest seen
  m << 0.9, -0.2, 0.0;
  CHECK(matrix_decimals(m) == 1);  // tenths typed by hand read as typed
  m << 0.9, -0.2, 0.05;
  CHECK(matrix_decimals(m) == 3);
  m << 1.0, 0.0, -3.0;
  CHECK(matrix_decimals(m) == 0);  // whole numbers (a one-hot X, an identity W) read whole
  m << 0.0, -0.0, 0.0;
  CHECK(matrix_decimals(m) == 0);
  m << 10.5664, -0.684, 9.999;
  CHECK(matrix_decimals(m) == 2);  // four significant digits: 10.57
  m << 123.456, 0.5, 0.25;
  CHECK(matrix_decimals(m) == 1);
  m << -2048.5, 0.5, 0.25;
  CHECK(matrix_decimals(m) == 0);
  m << 9.9994, 0.001, -std::numeric_limits<double>::infinity();
  CHECK(matrix_decimals(m) == 3);  // -inf (a masked score) is not a magnitude
  m << -1e-5, 4e-4, -4e-4;         // every value 0.000 at 3 decimals: the largest gets two significant digits
  CHECK(matrix_decimals(m) == 5);
  CHECK(format_fixed(-4e-4, 5) == "-0.00040");
  CHECK(format_fixed(-1e-5, 5) == "-0.00001");
  m << 2.05e-4, -2e-4, 0;
  CHECK(matrix_decimals(m) == 5);
  m << 4.9e-4, 0, 0;
  CHECK(matrix_decimals(m) == 5);
  m << 5e-4, 0, 0;  // 0.001 at 3 decimals: as before
  CHECK(matrix_decimals(m) == 3);
  m << 1e-12, 0, 0;
  CHECK(matrix_decimals(m) == kTinyActivationDecimals);
}

TEST_CASE("cell values: as many decimals as fit, -inf for hidden scores, scientific when nothing else fits") {
  CHECK(format_cell(0.7426921, 6) == "0.7427");
  CHECK(format_cell(0.7426921, 5) == "0.743");
  CHECK(format_cell(0.7426921, 4) == "0.74");
  CHECK(format_cell(0.7426921, 3) == ".74");  // "0.7" is 6% off
  CHECK(format_cell(0.7426921, 2) == ".7");
  CHECK(format_cell(0.7426921, 1) == "");
  CHECK(format_cell(16.0, 6) == "16");
  CHECK(format_cell(-8.0829, 6) == "-8.083");
  CHECK(format_cell(-std::numeric_limits<double>::infinity(), 6) == "-inf");
  CHECK(format_cell(-std::numeric_limits<double>::infinity(), 3) == "");
  CHECK(format_cell(0.00002, 8) == "2e-5");
  CHECK(format_cell(0.000812, 8) == "0.0008");
  CHECK(format_cell(0.000812, 5) == ".0008");
  CHECK(format_cell(0.000812, 4) == "8e-4");
  CHECK(format_cell(-0.0008, 5) == "-8e-4");  // "-.001" is 25% off
  CHECK(format_cell(-0.0008, 4) == "");
  CHECK(format_cell(-0.037, 6) == "-0.037");
  CHECK(format_cell(-0.037, 5) == "-.037");
  CHECK(format_cell(-0.037, 4) == "-.04");
  CHECK(format_cell(0.75, 3) == ".75");
  CHECK(format_cell(123456.789, 8) == "123456.8");
  CHECK(format_cell(123456.789, 7) == "123457");
  CHECK(format_cell(123456.789, 5) == "1.2e5");
  CHECK(format_cell(1234567.0, 6) == "1.23e6");
  CHECK(format_cell(123456.789, 3) == "1e5");
  CHECK(format_cell(-0.00001, 6) == "-1e-5");
  CHECK(format_cell(123456789.0, 4) == "1e8");
  CHECK(format_cell(123456789.0, 2) == "");
}

TEST_CASE("q and RoPE(q) side by side: the same magnitudes, the same decimals") {
  // The positions lesson's second "the": q needs two decimals, its turn three; both are written with three.
  Matrix q(1, 2), rope_q(1, 2);
  q << -0.06, 0.95;
  rope_q << -0.0749, -0.9490;
  REQUIRE(matrix_decimals(q) == 3);
  REQUIRE(matrix_decimals(rope_q) == 3);
  CHECK(format_fixed(q(0, 0), matrix_decimals(q)) == "-0.060");
  CHECK(format_fixed(q(0, 1), matrix_decimals(q)) == "0.950");
  CHECK(format_fixed(rope_q(0, 0), matrix_decimals(rope_q)) == "-0.075");
  CHECK(format_fixed(rope_q(0, 1), matrix_decimals(rope_q)) == "-0.949");
  // Scores in the tens beside queries below 10: four significant digits for each, 18.91 and 0.950.
  Matrix scores(1, 2);
  scores << 10.5664, 18.9081;
  CHECK(matrix_decimals(scores) == 2);
}
