#pragma once
// One row of attention computed as a GPU kernel does: over blocks of keys, never holding the whole row, with a
// running maximum m and a running normaliser l rescaled whenever m grows (Milakov and Gimelshein 2018,
// Algorithm 3; FlashAttention, Dao et al. 2022, Algorithm 1). It ends on exactly the dense row's output.
#include <vector>

#include "core/attention.h"

namespace attn {

struct OnlineBlock {
  int start = 0, end = 0;  // the keys [start, end)
  double block_max = 0;    // the block's largest masked score (-inf: every key of it hidden)
  double m = 0;            // the running maximum after the block (-inf while every key so far is hidden)
  double rescale = 1;      // e^(m_old - m): what the earlier sum and output are multiplied by (1 while m is -inf)
  double l = 0;            // the running normaliser: sum over keys so far of e^(x_j - m)
  Matrix output;           // (1, d) the running output acc / l (0 while l is 0)
};

struct OnlineSoftmax {
  int head = 0, row = 0, block = 0;
  std::vector<OnlineBlock> blocks;
  Matrix output;          // (1, d) after the last block
  Matrix dense_output;    // (1, d) the head's output row, computed with the whole row at once
  double max_difference;  // max |output - dense_output|
};

// Row `row` of head `head` of the trace over key blocks of `block`: from the head's masked scores (-inf where
// hidden) and its values. Softmax kernel only. Throws InputError naming --head, --row or --block when out of range.
OnlineSoftmax online_softmax(const Trace& t, int head, int row, int block);

}  // namespace attn
