#pragma once
// What names a file and what it held, so that the recovery file can tell whether its original is still the
// file the work was made from: the absolute canonical path (the same file whatever folder the app starts in),
// and a fingerprint (size and modification time, taken when the document was opened or last saved). Messages and
// titles show a path with core/text_format's shown_path (paths are bytes: those that are not UTF-8 are escaped).
#include <cstdint>
#include <filesystem>
#include <optional>

#include <string>
#include <string_view>
#include "core/text_format.h"

namespace attn::ui {

struct FileStamp {
  std::uintmax_t size = 0;
  // The modification time, nanoseconds since the Unix epoch (1970). Recovery files written before held the count of
  // libstdc++'s file clock (epoch 2174, so negative): unchanged_since still reads those.
  std::int64_t modified_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

// nullopt when there is no such regular file (or it cannot be examined).
std::optional<FileStamp> file_stamp(const std::filesystem::path& file);
// Absolute, with ".", ".." and symbolic links resolved as far as the path exists; empty stays empty.
std::filesystem::path canonical_path(const std::filesystem::path& file);
// Whether `file` is absolute, still exists and has the stamp it had when `stamp` was taken: a file Save may
// write over. False without a stamp. A stamp of the old file-clock count (negative) is converted first.
bool unchanged_since(const std::filesystem::path& file, const std::optional<FileStamp>& stamp);
// Why Save must ask before writing over `file`: it has changed on disk (or is gone, or has appeared) since `stamp` was
// taken, when the document was opened or last saved: "docC.json has changed on disk since it was opened or last
// saved". nullopt when it is as it was.
std::optional<std::string> changed_on_disk(const std::filesystem::path& file, const std::optional<FileStamp>& stamp);

}  // namespace attn::ui
