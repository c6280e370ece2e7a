#include "core/zeroed_matrix.h"

#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace attn {

bool zero_without_writing(Matrix& m) {
#if defined(__linux__)
  // glibc serves a block this large from a mapping of its own, whose pages no one has touched yet: madvise costs
  // nothing there, and makes the zeros certain under any allocator.
  constexpr std::uintptr_t kFreshBytes = std::uintptr_t{32} << 20;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(m.data());
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(m.size()) * sizeof(double);
  const std::uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;  // the whole pages inside
  if (end - begin < kFreshBytes || madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED) != 0) return false;
  std::memset(m.data(), 0, lo - begin);
  std::memset(reinterpret_cast<void*>(hi), 0, end - hi);
  return true;
#else
  (void)m;
  return false;
#endif
}

}  // namespace attn
