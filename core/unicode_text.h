#pragma once
// What tokenizers ask of Unicode, from the libraries that know it: patterns run as written by PCRE2 (UTF and UCP, so
// \p{L}, \p{N}, \s and (?i:...) mean what they mean in Hugging Face's Oniguruma and OpenAI's regex), and the
// normalisation forms from utf8proc. Nothing here approximates a Unicode category by hand.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// A compiled pattern. Throws InputError (field "", the problem naming the offset in the pattern) when PCRE2 does
// not compile it.
class Regex {
 public:
  explicit Regex(std::string_view pattern);
  const std::string& pattern() const { return pattern_; }
  // Every non-overlapping match in `text` (valid UTF-8), left to right, as [begin, end) byte offsets; after an empty
  // match the search goes on one character later.
  std::vector<std::pair<std::size_t, std::size_t>> matches(std::string_view text) const;

 private:
  struct Compiled;
  std::string pattern_;
  std::shared_ptr<const Compiled> compiled_;
};

// A pattern that matches `text` literally: every ASCII character that is not a letter or a digit escaped.
std::string literal_pattern(std::string_view text);

enum class NormalForm { Nfc, Nfd, Nfkc, Nfkd };
// `text` (valid UTF-8) in the normal form.
std::string normalized(std::string_view text, NormalForm form);

}  // namespace attn
