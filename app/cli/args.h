#pragma once
// A small cursor over command-line words that turns every malformed value into a UsageError naming the option.
#include <cstdint>
#include <set>
#include <span>
#include <stdexcept>
#include <string>

namespace attn::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  explicit Args(std::span<const std::string> words) : words_(words) {}

  bool done() const { return pos_ >= words_.size(); }
  const std::string& next() { return words_[pos_++]; }
  // The value after an option such as `--heads 2`. An option given a second time is refused ("--heads: given
  // twice"): silently keeping the last one hides a typo.
  std::string value(const std::string& option);
  // A flag such as `--json`, refused the second time as an option with a value is: every option is given once.
  void flag(const std::string& option);
  // Out of range (also past 64 bits) is refused with the value as written: "must be between 1 and 256 (found
  // 4294967297)".
  std::int64_t integer(const std::string& option, std::int64_t lo, std::int64_t hi);
  std::uint64_t unsigned_integer(const std::string& option);
  double number(const std::string& option, double lo, double hi);

 private:
  std::span<const std::string> words_;
  std::size_t pos_ = 0;
  std::set<std::string> given_;
};

}  // namespace attn::cli
