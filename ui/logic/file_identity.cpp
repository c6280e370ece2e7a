#include "ui/logic/file_identity.h"

#include <chrono>
#include <cstdio>

namespace attn::ui {

std::optional<FileStamp> file_stamp(const std::filesystem::path& file) {
  std::error_code ec;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) return std::nullopt;
  const auto modified = std::filesystem::last_write_time(file, ec);
  if (ec) return std::nullopt;
  return FileStamp{size, std::chrono::duration_cast<std::chrono::nanoseconds>(modified.time_since_epoch()).count()};
}

std::filesystem::path canonical_path(const std::filesystem::path& file) {
  if (file.empty()) return file;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(file, ec);
  if (ec) p = std::filesystem::absolute(file, ec).lexically_normal();
  return ec ? file : p;
}

bool unchanged_since(const std::filesystem::path& file, const std::optional<FileStamp>& stamp) {
  return stamp && file.is_absolute() && file_stamp(file) == stamp;
}

namespace {

// The length of the well-formed UTF-8 character at s[i] (Unicode's table of well-formed byte sequences), 0 if
// the byte there does not start one.
std::size_t utf8_character_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  if (n == 0 || i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

bool is_utf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8_character_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escaped_text(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    if (const std::size_t n = utf8_character_length(bytes, i)) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(bytes[i++]));
      out += hex;
    }
  }
  return out;
}

}  // namespace attn::ui
