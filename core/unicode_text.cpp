#define PCRE2_CODE_UNIT_WIDTH 8
#include "core/unicode_text.h"

#include <pcre2.h>
#include <utf8proc.h>

#include <cctype>
#include <cstdlib>

#include "core/text_format.h"
#include "core/validate.h"

namespace attn {

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

Regex::Regex(std::string_view pattern) : pattern_(pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto c = std::make_shared<Compiled>();
  c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &error,
                          &offset, nullptr);
  if (!c->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw InputError("", "the pattern does not compile at character " + std::to_string(offset) + ": " +
                             reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);  // where the JIT is missing, matching is interpreted: same results
  compiled_ = std::move(c);
}

std::vector<std::pair<std::size_t, std::size_t>> Regex::matches(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> found;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t at = 0;
  while (at <= text.size()) {
    // The text was checked as UTF-8 once, by the caller: PCRE2 need not check it again at every start.
    const int rc = pcre2_match(compiled_->code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc < 0) break;  // PCRE2_ERROR_NOMATCH, or a resource limit: no more matches
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const std::size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      found.emplace_back(begin, end);
      at = end;
    } else {
      if (begin >= text.size()) break;
      at = begin + std::max<std::size_t>(1, utf8_length_at(text, begin));
    }
  }
  return found;
}

std::string literal_pattern(std::string_view text) {
  std::string p;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) p += '\\';
    p += c;
  }
  return p;
}

std::string normalized(std::string_view text, NormalForm form) {
  // utf8proc_NFC and its kin, with the length given rather than a NUL ending the text.
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::Nfc: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::Nfd: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::Nfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::Nfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &out, static_cast<utf8proc_option_t>(options));
  if (n < 0) throw InputError("", std::string("the text cannot be normalised: ") + utf8proc_errmsg(n));
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return result;
}

}  // namespace attn
