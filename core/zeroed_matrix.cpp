#include "core/zeroed_matrix.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace attn {

#if defined(__linux__)
namespace {

// Whether the page at `at` holds anything but zero bits, compared 4 KiB at a time.
bool written(const void* at, std::uintptr_t page) {
  static constexpr unsigned char kZeros[4096] = {};
  const auto* bytes = static_cast<const unsigned char*>(at);
  for (std::uintptr_t o = 0; o < page; o += sizeof kZeros)
    if (std::memcmp(bytes + o, kZeros, std::min<std::uintptr_t>(sizeof kZeros, page - o)) != 0) return true;
  return false;
}

// Pages [lo, hi) made to read 0. A page not in memory is handed back (madvise MADV_DONTNEED: it then reads as zeros
// and costs nothing until written; for fresh pages of a new mapping that is a no-op). A page in memory that holds
// anything else is cleared by hand: it is paid for already, and handing it back would fault it in again when written.
// A page in memory that reads 0 (the kernel's shared zero page, once read) is left alone: writing it would take a
// page of its own. Which pages are in memory decides the cheaper way, never the result: a page swapped out is handed
// back too.
bool zero_pages(std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t page) {
  std::vector<unsigned char> resident((hi - lo) / page);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, resident.data()) != 0) return false;
  for (std::size_t p = 0; p < resident.size();) {
    const bool in_memory = resident[p] & 1;
    std::size_t end = p;
    while (end < resident.size() && bool(resident[end] & 1) == in_memory) ++end;
    if (!in_memory && madvise(reinterpret_cast<void*>(lo + p * page), (end - p) * page, MADV_DONTNEED) != 0)
      return false;
    for (; in_memory && p < end; ++p) {
      void* at = reinterpret_cast<void*>(lo + p * page);
      if (written(at, page)) std::memset(at, 0, page);
    }
    p = end;
  }
  return true;
}

}  // namespace
#endif

bool zero_without_writing(Matrix& m) {
#if defined(__linux__)
  // A block this large is either a mapping of its own that no one has touched (glibc's default) or pages a freed
  // trace left in the heap (the window keeps them: app/main.cpp); zero_pages is right, and cheap, for both.
  constexpr std::uintptr_t kFreshBytes = std::uintptr_t{32} << 20;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(m.data());
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(m.size()) * sizeof(double);
  const std::uintptr_t lo = (begin + page - 1) / page * page, hi = end / page * page;  // the whole pages inside
  if (end - begin < kFreshBytes || !zero_pages(lo, hi, page)) return false;
  std::memset(m.data(), 0, lo - begin);
  std::memset(reinterpret_cast<void*>(hi), 0, end - hi);
  return true;
#else
  (void)m;
  return false;
#endif
}

}  // namespace attn
