#pragma once
// What names a file and what it held, so that the recovery file can tell whether its original is still the
// file the work was made from: the absolute canonical path (the same file whatever folder the app starts in),
// a fingerprint (size and modification time, taken when the document was opened or last saved), and the path
// as text for messages and titles (paths are bytes: those that are not UTF-8 are shown escaped).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace attn::ui {

struct FileStamp {
  std::uintmax_t size = 0;
  std::int64_t modified_ns = 0;  // the modification time, nanoseconds since the file clock's epoch
  bool operator==(const FileStamp&) const = default;
};

// nullopt when there is no such regular file (or it cannot be examined).
std::optional<FileStamp> file_stamp(const std::filesystem::path& file);
// Absolute, with ".", ".." and symbolic links resolved as far as the path exists; empty stays empty.
std::filesystem::path canonical_path(const std::filesystem::path& file);
// Whether `file` is absolute, still exists and has the stamp it had when `stamp` was taken: a file Save may
// write over. False without a stamp.
bool unchanged_since(const std::filesystem::path& file, const std::optional<FileStamp>& stamp);

// Whether `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_utf8(std::string_view bytes);
// The bytes as text: well-formed UTF-8 as it is, every other byte as \xHH ("b\xFF.json").
std::string escaped_text(std::string_view bytes);
inline std::string shown_path(const std::filesystem::path& p) { return escaped_text(p.native()); }

}  // namespace attn::ui
