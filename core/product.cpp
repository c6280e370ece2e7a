#include "core/product.h"

#include <algorithm>
#include <vector>

#include <cblas.h>

#include "core/same_bits.h"

namespace attn {
namespace {

// OpenBLAS's own threads off, before main(): ours share out the tiles and the heads, one level of threads (as
// EIGEN_DONT_PARALLELIZE does for Eigen's). Products on both would wait on each other.
[[maybe_unused]] const bool kOneBlasThread = (openblas_set_num_threads(1), true);

// Tiles of 128 rows by a width fixed by the shapes alone: the same tiles on any number of threads, so the same bits
// (a product cut elsewhere may round a cell's last bit differently). Each tile is one single-threaded OpenBLAS call,
// which repacks its rows of a and columns of b: a tile as wide as b packs a's rows once, and runs a 512-wide projection
// about a fifth faster than tiles 96 wide did. Fewer than 4 row tiles (under 512 tokens) also cut the columns in up to
// 4 parts (fewer for a b under 32 columns), so that two threads still have tiles to share.
constexpr Eigen::Index kRows = 128, kMinTiles = 4;

Eigen::Index tiles(Eigen::Index size, Eigen::Index tile) { return (size + tile - 1) / tile; }

// The tile width for a b of `cols` columns under a of `rows` rows: all of b, or an equal cut of it rounded up to 8
// columns (the register tile's width, so no tile but the last has a ragged edge).
Eigen::Index tile_width(Eigen::Index rows, Eigen::Index cols) {
  const Eigen::Index cuts = tiles(kMinTiles, std::max<Eigen::Index>(1, tiles(rows, kRows)));
  return std::max<Eigen::Index>(1, tiles(tiles(cols, cuts), 8) * 8);
}

// Which row tiles of a and column tiles of b are the bits `earlier` had: none (no vectors) without it or when a
// shape differs, so a product with nothing earlier allocates nothing more.
struct Unchanged {
  std::vector<char> rows, cols;
  bool tile(Eigen::Index rt, Eigen::Index ct) const {
    return !rows.empty() && rows[static_cast<std::size_t>(rt)] && cols[static_cast<std::size_t>(ct)];
  }
};
Unchanged unchanged(const Matrix& a, const Matrix& b, Eigen::Index width,
                    const std::optional<EarlierProduct>& earlier) {
  if (!earlier || earlier->a.rows() != a.rows() || earlier->a.cols() != a.cols() || earlier->b.rows() != b.rows() ||
      earlier->b.cols() != b.cols() || earlier->out.rows() != a.rows() || earlier->out.cols() != b.cols())
    return {};
  Unchanged u{std::vector<char>(static_cast<std::size_t>(tiles(a.rows(), kRows))),
              std::vector<char>(static_cast<std::size_t>(tiles(b.cols(), width)))};
  for (std::size_t t = 0; t < u.rows.size(); ++t) {
    const Eigen::Index r = static_cast<Eigen::Index>(t) * kRows, n = std::min(kRows, a.rows() - r);
    u.rows[t] = same_bits(a.middleRows(r, n), earlier->a.middleRows(r, n));
  }
  for (std::size_t t = 0; t < u.cols.size(); ++t) {
    const Eigen::Index c = static_cast<Eigen::Index>(t) * width, m = std::min(width, b.cols() - c);
    u.cols[t] = &b == &earlier->b || same_bits(b.middleCols(c, m), earlier->b.middleCols(c, m));
  }
  return u;
}

}  // namespace

Matrix product(const Matrix& a, const Matrix& b, const std::optional<EarlierProduct>& earlier) {
  Matrix out(a.rows(), b.cols());
  const Eigen::Index width = tile_width(a.rows(), b.cols());
  const Unchanged same = unchanged(a, b, width, earlier);
  const Eigen::Index row_tiles = tiles(a.rows(), kRows), col_tiles = tiles(b.cols(), width);
  [[maybe_unused]] const bool big = a.rows() * a.cols() * b.cols() > kParallelWork;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) if (big)  // dynamic: the tiles left to compute may be few
#endif
  for (Eigen::Index t = 0; t < row_tiles * col_tiles; ++t) {
    const Eigen::Index rt = t / col_tiles, ct = t % col_tiles;
    const Eigen::Index r = rt * kRows, c = ct * width;
    const Eigen::Index n = std::min(kRows, a.rows() - r), m = std::min(width, b.cols() - c);
    if (same.tile(rt, ct)) out.block(r, c, n, m) = earlier->out.block(r, c, n, m);
    else out.block(r, c, n, m).noalias() = a.middleRows(r, n) * b.middleCols(c, m);
  }
  return out;
}

}  // namespace attn
