#pragma once
// Zeros that cost no memory until written. Matrix::Zero writes every cell, which for a fresh allocation means the
// kernel faults in and clears each page first; a causal head's weights above the diagonal (exactly 0) would be paid
// for twice and never read by the computation. Here the whole pages inside the matrix that are not in memory are
// handed back to the kernel (madvise MADV_DONTNEED: a private page then reads as zeros, and costs memory only once
// written); the pages in memory already (a heap that keeps freed pages, as the window's does) and the partial pages
// at the two ends are cleared by hand, which is cheaper than handing them back and faulting them in again.
#include "core/matrix.h"

namespace attn {

// Makes every cell of m read 0 without paging in any more of it, for a matrix of 32 MiB or more (T = 2,048 tokens
// and up): true. A smaller one is most likely recycled heap memory, already paged in, where writing zeros is cheaper:
// false, and the caller writes the zeros it needs (m as it was, or in part zeroed already if the kernel refused a
// request midway).
bool zero_without_writing(Matrix& m);

}  // namespace attn
