// Where a heatmap puts its cells, labels and legend, and the texels of one drawn as a texture
// (ui/widgets/heatmap_layout, heatmap_pixels).
#include "helpers.h"
#include "ui/widgets/heatmap_layout.h"
#include "ui/widgets/heatmap_pixels.h"

using namespace attn;
using namespace attn::ui;
using namespace attn::test;

TEST_CASE("heatmap layout: cells fit the box, labels and legend get their room, large matrices use a texture") {
  HeatmapLayoutInput in;
  in.rows = 3;
  in.cols = 3;
  in.avail_w = 400;
  in.row_label_w = 30;
  in.line_h = 20;
  in.max_cell = 72;
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_w == 72);  // capped
  CHECK(l.cell_h == 72);
  CHECK(l.label_w == 40);
  CHECK(l.header_h == 22);
  CHECK(l.legend_h == 34);
  CHECK(l.width == 40 + 3 * 72);
  CHECK(l.height == 22 + 3 * 72 + 34);
  CHECK_FALSE(l.texture);
  in.avail_h = 200;  // (200 - 22 - 34) / 3 = 48 per row
  CHECK(layout_heatmap(in).cell_h == 48);
  in.cols = 7;  // non-square: width decides, (400 - 40) / 7 = 51.43 -> 51.25
  in.avail_h = 0;
  CHECK(layout_heatmap(in).cell_w == doctest::Approx(51.25));
  CHECK(layout_heatmap(in).cell_h == doctest::Approx(51.25));
  in.labels = false;
  in.legend = false;
  CHECK(layout_heatmap(in).width == doctest::Approx(7 * 57.0));
  in.rows = in.cols = 1024;
  in.avail_w = 600;
  l = layout_heatmap(in);
  CHECK(l.texture);
  CHECK(l.cell_w == doctest::Approx(600.0f / 1024));  // below a pixel: the texture is scaled down
  CHECK(l.cell_h == doctest::Approx(600.0f / 1024));  // square: not stretched, however tall the box
  in.avail_h = 400;
  CHECK(layout_heatmap(in).cell_w == doctest::Approx(400.0f / 1024));
  CHECK(layout_heatmap(in).cell_h == doctest::Approx(400.0f / 1024));
}

TEST_CASE("heatmap layout: a tall matrix of few columns is widened to the width asked for, as far as the box allows") {
  HeatmapLayoutInput in;
  in.rows = 4096;  // q of one head at 4,096 tokens
  in.cols = 64;
  in.avail_w = 150;
  in.avail_h = 190;
  in.row_label_w = 30;
  in.line_h = 20;
  in.legend = false;
  // Square cells: (190 - 22) / 4096 of a pixel, the whole grid 2.6 pixels wide.
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_h == doctest::Approx(168.0f / 4096));
  CHECK(l.cell_w == doctest::Approx(168.0f / 4096));
  in.min_w = 42;
  l = layout_heatmap(in);
  CHECK(l.cell_w == doctest::Approx(42.0f / 64));
  CHECK(l.cell_h == doctest::Approx(168.0f / 4096));  // the height is what it was
  CHECK(l.width == doctest::Approx(40 + 42));
  CHECK(l.texture);
  in.avail_w = 70;  // the box leaves 30 pixels beside the labels
  CHECK(layout_heatmap(in).width == doctest::Approx(70));
  in.avail_w = 600;  // a grid already wider than asked is left alone
  in.rows = 64;
  CHECK(layout_heatmap(in).cell_w == 2.5f);  // (190 - 22) / 64 = 2.625, to a quarter pixel
}

TEST_CASE("heatmap layout: a tall matrix of more rows than pixels widened to its box or a square, when asked") {
  HeatmapLayoutInput in;
  in.rows = 4096;  // X at 4,096 tokens in a formula
  in.cols = 512;
  in.avail_w = 700;
  in.avail_h = 190;
  in.row_label_w = 30;
  in.line_h = 20;
  in.legend = false;
  CHECK(layout_heatmap(in).width == doctest::Approx(40 + 512 * 168.0f / 4096));  // square cells: 21 pixels wide
  in.stretch_tall = true;
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_w == doctest::Approx(168.0f / 512));  // as wide as tall: 168 pixels, the box would allow 660
  CHECK(l.cell_h == doctest::Approx(168.0f / 4096));
  CHECK(l.width == doctest::Approx(40 + 168));
  in.avail_w = 140;  // a narrower box: all of it
  CHECK(layout_heatmap(in).width == doctest::Approx(140));
  in.avail_w = 700;
  in.rows = 600;  // a pixel a row or more: square cells (stretched, they would be 4.5 pixels wide)
  in.cols = 128;
  in.avail_h = 700;
  CHECK(layout_heatmap(in).cell_w == 1.0f);
}

TEST_CASE("texture extent: a texel per drawn pixel, at least one, at most the GL's limit and 4096") {
  CHECK(texture_extent(300.0f, 16384) == 300);
  CHECK(texture_extent(299.2f, 16384) == 300);
  CHECK(texture_extent(0.3f, 16384) == 1);
  CHECK(texture_extent(163840.0f, 16384) == kMaxTexels);  // 4096 queries of 40-pixel cells
  CHECK(texture_extent(3000.0f, 2048) == 2048);           // a GL with smaller textures
  CHECK(texture_extent(3000.0f, 0) == 3000);              // no answer from the GL: our own bound
}

TEST_CASE("heatmap layout: a few rows of many columns get rows a text line tall, and the transpose columns") {
  HeatmapLayoutInput in;
  in.rows = 3;
  in.cols = 512;  // a 3-token X at d_model 512
  in.avail_w = 800;
  in.line_h = 18;
  in.labels = in.legend = false;
  HeatmapLayout l = layout_heatmap(in);
  CHECK(l.cell_w == 1.5);  // 800 / 512 = 1.5625, snapped to quarter pixels
  CHECK(l.cell_h == 18);   // not a 1.5-pixel sliver
  CHECK(l.height == 54);
  CHECK(l.texture);
  in.avail_h = 30;  // a thumbnail's box: 10 per row
  l = layout_heatmap(in);
  CHECK(l.cell_h == 10);
  in.avail_h = 12;  // 4 per row is less than half a line, and still no 1.5-pixel sliver: as tall as the box lets it be
  CHECK(layout_heatmap(in).cell_h == 4);
  in.avail_h = 0;
  in.fill = true;  // a thumbnail without a height is not stretched
  CHECK(layout_heatmap(in).cell_h == 18);
  in.rows = 16;
  in.avail_w = 90;
  in.avail_h = 58;  // a step strip's box for a 16 x 512 output: filled, 3.5 pixels a row
  in.max_cell = 18;
  l = layout_heatmap(in);
  CHECK(l.cell_h == 3.5);
  CHECK(l.width == doctest::Approx(l.cell_w * 512));
  CHECK(l.cell_w * 512 <= 90);
  in.rows = in.cols = 3;  // a 3 x 3 thumbnail: square cells of at most max_cell, as without fill
  l = layout_heatmap(in);
  CHECK(l.cell_w == 18);
  CHECK(l.cell_h == 18);
  in = {};
  in.rows = 1024;
  in.cols = 2;  // the transpose: two columns of 1024 rows in a 300-pixel box
  in.avail_w = 500;
  in.avail_h = 300;
  in.line_h = 18;
  in.labels = in.legend = false;
  l = layout_heatmap(in);
  CHECK(l.cell_h == doctest::Approx(300.0f / 1024));
  CHECK(l.cell_w == 18);
  CHECK(l.width == 36);
}

TEST_CASE("heatmap texels: one per cell, row-major, hidden cells grey with a diagonal stroke every 6 texels") {
  const Matrix m = mat({{-1, 0, 1}, {1, 1, 1}});
  const Matrix visible = mat({{1, 1, 1}, {1, 0, 1}});
  const std::vector<std::uint32_t> px = heatmap_pixels(m, ColourMap::Diverging, {-1, 1}, &visible);
  REQUIRE(px.size() == 6);
  CHECK(px[0] == pack(sample(ColourMap::Diverging, 0.0)));
  CHECK(px[1] == pack(sample(ColourMap::Diverging, 0.5)));
  CHECK(px[2] == pack(sample(ColourMap::Diverging, 1.0)));
  CHECK(px[4] == pack(kHiddenCell));  // (1, 1): 1 + 1 is not a multiple of 6
  // A hidden region 12 texels wide: the strokes run where row + column is a multiple of 6.
  const Matrix wide = Matrix::Zero(2, 12);
  const std::vector<std::uint32_t> hidden = heatmap_pixels(wide, ColourMap::Sequential, {0, 1}, &wide);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 12; ++c)
      CHECK(hidden[std::size_t(r * 12 + c)] == pack((r + c) % 6 == 0 ? kHatchLine : kHiddenCell));
  CHECK(content_hash(m, &visible, {-1, 1}, ColourMap::Diverging) ==
        content_hash(m, &visible, {-1, 1}, ColourMap::Diverging));
  Matrix changed = m;
  changed(1, 2) = 0.5;
  CHECK(content_hash(changed, &visible, {-1, 1}, ColourMap::Diverging) !=
        content_hash(m, &visible, {-1, 1}, ColourMap::Diverging));
}

TEST_CASE("heatmap texels for a matrix drawn smaller than its cells: the cell at each texel's centre") {
  // 4 x 6 values r*10 + c, drawn as 2 x 3 texels: rows 1 and 3, columns 1, 3 and 5.
  const Matrix m = Matrix::NullaryExpr(4, 6, [](Eigen::Index r, Eigen::Index c) { return double(r * 10 + c); });
  const std::vector<std::uint32_t> px = heatmap_pixels(m, ColourMap::Sequential, {0, 64}, nullptr, 2, 3);
  REQUIRE(px.size() == 6);
  const double picked[6] = {11, 13, 15, 31, 33, 35};
  for (int i = 0; i < 6; ++i) CHECK(px[std::size_t(i)] == pack(sample(ColourMap::Sequential, picked[i] / 64)));
  // Drawn larger than its cells: a texel per pixel, each the cell at its centre (8 rows: 2 per matrix row).
  const std::vector<std::uint32_t> up = heatmap_pixels(m, ColourMap::Sequential, {0, 64}, nullptr, 8, 12);
  REQUIRE(up.size() == 96);
  CHECK(up[0] == pack(sample(ColourMap::Sequential, 0.0)));
  CHECK(up[1] == pack(sample(ColourMap::Sequential, 0.0)));                               // still cell (0, 0)
  CHECK(up[2] == pack(sample(ColourMap::Sequential, 1.0 / 64)));                          // cell (0, 1)
  CHECK(up[std::size_t(7 * 12 + 11)] == pack(sample(ColourMap::Sequential, 35.0 / 64)));  // cell (3, 5)
}

TEST_CASE("outlined cells are framed as blocks: a row is one frame, a column one, scattered cells one each") {
  using Cells = std::vector<std::pair<int, int>>;
  const Cells row{{1, 0}, {1, 1}, {1, 2}, {1, 3}};  // a lesson's outlined row of a 3 x 4 X
  CHECK(outline_blocks(row, 3, 4) == std::vector<CellBlock>{{1, 0, 1, 4}});
  const Cells column{{2, 1}, {0, 1}, {1, 1}};  // any order
  CHECK(outline_blocks(column, 3, 4) == std::vector<CellBlock>{{0, 1, 3, 1}});
  const Cells square{{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  CHECK(outline_blocks(square, 3, 4) == std::vector<CellBlock>{{0, 0, 2, 2}});
  // Two cells apart, a repeat, and cells outside the matrix (a head's slice of concat: columns past its own).
  const Cells scattered{{0, 0}, {0, 2}, {0, 2}, {5, 0}, {0, -1}, {-1, 0}, {0, 4}};
  CHECK(outline_blocks(scattered, 3, 4) == std::vector<CellBlock>{{0, 0, 1, 1}, {0, 2, 1, 1}});
  // An L: the row's run and the cell under its start are two blocks, not a rectangle over a cell never outlined.
  const Cells ell{{0, 0}, {0, 1}, {1, 0}};
  CHECK(outline_blocks(ell, 3, 4) == std::vector<CellBlock>{{0, 0, 1, 2}, {1, 0, 1, 1}});
  CHECK(outline_blocks(Cells{}, 3, 4).empty());
  // A block holds the cells it frames and no others (the pointed cell inside one is framed in white alone).
  const CellBlock cat_row{1, 0, 1, 4};
  CHECK(cat_row.contains(1, 0));
  CHECK(cat_row.contains(1, 3));
  CHECK_FALSE(cat_row.contains(1, 4));
  CHECK_FALSE(cat_row.contains(0, 0));
  CHECK_FALSE(cat_row.contains(2, 2));
}
