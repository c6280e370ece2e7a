#pragma once
// 64-bit arithmetic that refuses to wrap: cache sizes of real models get within a few bits of the limit
// once sequence, batch and layers multiply, and a silently wrapped total would look plausible.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

// A product or sum that does not fit in 64 bits; `what` names the quantity being computed.
class OverflowError : public std::overflow_error {
 public:
  explicit OverflowError(const std::string& what)
      : std::overflow_error(what + " exceeds the 64-bit limit of 18,446,744,073,709,551,615") {}
};

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw OverflowError(what);
  return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw OverflowError(what);
  return r;
}

// a * b * c * ..., every step checked.
template <typename... T>
std::uint64_t checked_product(const std::string& what, std::uint64_t first, T... rest) {
  std::uint64_t r = first;
  ((r = checked_mul(r, static_cast<std::uint64_t>(rest), what)), ...);
  return r;
}

}  // namespace attn
