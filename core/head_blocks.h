#pragma once
// One head's attention a block of query rows at a time. A block's scores and weights, over the keys some row of it
// sees, live in scratch that stays in cache; the head keeps each row's statistics and output. attend runs every
// block once; HeadTrace::weights and HeadTrace::scores run them again (the same code on the same numbers, so the
// same bits) to make the matrices when someone asks for them.
#include <vector>

#include "core/attention.h"

namespace attn {

// A row of numbers, as a matrix's row is (a column mixed into a row's arithmetic is a shape error).
using RowArray = Eigen::Array<double, 1, Eigen::Dynamic>;

// What a head's rows read.
struct HeadInputs {
  const Matrix& q;          // (N_Q, d_s) the queries the scores use (rope: turned)
  const Matrix& k;          // (N_KV, d_s)
  const Matrix& mask;       // (N_Q, N_KV) 1 = may attend
  const VisibleKeys& keys;  // where each row of mask sees keys
  Kernel kernel;
  double scale_factor;
};

// Rows [r, r + n) of a head: the block's scores over keys [0, keys) (block_width), which each row's softmax turns
// into its weights in the same cells (the row's scaled scores are copied to x first, so a 512-token block is 512 KiB
// of scratch, not twice that), and each row's statistics. Its storage is kept from block to block. A row of it is laid
// out as the head's matrix row is (N_KV wide, key j at column j, blocks starting at a multiple of 128 rows), so each
// row sits at the same alignment as in a whole matrix and its vectorised sums add in the same order.
class RowBlock {
 public:
  using View = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
  using ConstView = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

  Eigen::Index r = 0, n = 0, n_kv = 0;
  Eigen::Index keys = 0;             // the block computes keys 0 .. keys-1
  Vector row_max, row_sum, entropy;  // (n)
  std::vector<RowStatus> status;     // (n)
  RowArray x;                        // scratch: one row's scaled scores

  Eigen::Index width() const { return keys; }
  // The same cells: a row's scores until compute_block fills it, its weights after.
  View scores() { return {store_.data(), n, keys, Eigen::OuterStride<>(n_kv)}; }  // (n, keys)
  View weights() { return scores(); }
  ConstView weights() const { return {store_.data(), n, keys, Eigen::OuterStride<>(n_kv)}; }
  void reserve_cells() {
    if (store_.size() < n * n_kv) store_.resize(n * n_kv);
  }

 private:
  // Eigen's allocation, aligned as a Matrix's: a vectorised sum peels its first cells up to an aligned address, so
  // storage whose alignment varied from run to run would give sums (and weights) that differ in the last bit.
  Vector store_;
};

inline constexpr Eigen::Index kRowBlock = 128;

// How many keys, from key 0, rows [r, r + n) compute: up to the last one some row of them sees (a causal block stops
// at its last row), rounded up to a multiple of 24 keys (whole register tiles); 0 when no row sees any. Starting at 0
// even for a band keeps the scores the bits HeadTrace::scores() makes them with (block_scores): a product cut
// elsewhere may round a cell's last bit differently. The linear kernel takes every key, since it divides the hidden
// ones by Z too (0 / Z, -0 for a negative Z), as the trace has always printed them.
Eigen::Index block_width(Kernel kernel, const VisibleKeys& keys, Eigen::Index r, Eigen::Index n, Eigen::Index n_kv);

// Rows [r, r + n) of q k^T over keys [0, w) into out (n, w): the one product both a block and HeadTrace::scores()
// make, so that the same shapes run the same kernel of any BLAS and give the same bits.
template <class Out>
void block_scores(const Matrix& q, const Matrix& k, Eigen::Index r, Eigen::Index n, Eigen::Index w, Out&& out) {
  out.noalias() = q.middleRows(r, n) * k.topRows(w).transpose();
}

// Fills b for rows [r, r + n): scores, then weights over them (0 outside each row's visible keys) and statistics.
void compute_block(const HeadInputs& in, Eigen::Index r, Eigen::Index n, RowBlock& b);
// compute_block's first phase alone: b's shape and its scores.
void score_block(const HeadInputs& in, Eigen::Index r, Eigen::Index n, RowBlock& b);

// Rows [b.r, b.r + b.n) of weights v into out (N_Q, d), which holds zeros there.
void block_output(const RowBlock& b, const VisibleKeys& keys, const Matrix& v, Matrix& out);

}  // namespace attn
