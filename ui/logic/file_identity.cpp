#include "ui/logic/file_identity.h"

#include <chrono>

namespace attn::ui {
namespace {

// A file time as nanoseconds since the Unix epoch: what a recovery file records, readable beside `stat`.
std::int64_t unix_nanoseconds(std::filesystem::file_time_type t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::file_clock::to_sys(t).time_since_epoch())
      .count();
}

// A stamp as recorded: Unix nanoseconds, or (negative) the file-clock count recovery files held before.
FileStamp unix_stamp(FileStamp s) {
  if (s.modified_ns < 0)
    s.modified_ns = unix_nanoseconds(std::filesystem::file_time_type(std::chrono::nanoseconds(s.modified_ns)));
  return s;
}

}  // namespace

std::optional<FileStamp> file_stamp(const std::filesystem::path& file) {
  std::error_code ec;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) return std::nullopt;
  const auto modified = std::filesystem::last_write_time(file, ec);
  if (ec) return std::nullopt;
  return FileStamp{size, unix_nanoseconds(modified)};
}

std::filesystem::path canonical_path(const std::filesystem::path& file) {
  if (file.empty()) return file;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(file, ec);
  if (ec) p = std::filesystem::absolute(file, ec).lexically_normal();
  return ec ? file : p;
}

bool unchanged_since(const std::filesystem::path& file, const std::optional<FileStamp>& stamp) {
  return stamp && file.is_absolute() && file_stamp(file) == unix_stamp(*stamp);
}

std::optional<std::string> changed_on_disk(const std::filesystem::path& file, const std::optional<FileStamp>& stamp) {
  const std::optional<FileStamp> now = file_stamp(file);
  if (now == stamp) return std::nullopt;
  if (!now) return shown_path(file) + " is no longer on disk (deleted or moved since it was opened or last saved)";
  return shown_path(file) + " has changed on disk since it was opened or last saved";
}

}  // namespace attn::ui
