#pragma once
// What every loader of a JSON file here shares: reading the file, parsing with positions and repeated-key
// detection, and reading the fields of an object so that every problem names its path
// (`attention.heads`, `models[3].kv_heads`) with what was expected and what was found.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/validate.h"

namespace attn {

// "string \"x\"", "number 2.5", "array", ...: how a found value is named in messages.
std::string describe_found(const nlohmann::json& j);

// v, an integer of the document, within [lo, hi]; else "must be <= 9 (found 18446744073709551615)" at `field`, the
// value as written (no wrap to 64 or 32 bits).
std::int64_t integer_within(const nlohmann::json& v, std::int64_t lo, std::int64_t hi, const std::string& field);

// The text of a regular file of at most max_bytes; throws InputError with field "".
std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

// Nesting deeper than this is refused before any tree is built (the deepest file the lab writes, a recovery of a
// model, has 8 levels).
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses a whole document; a syntax error names its line and column, a repeated key its full path. A streaming
// pass first refuses nesting past kMaxJsonDepth and documents whose tree would take more than about ten times
// the text's size (many tiny lists), so reading any file costs a small multiple of its size.
nlohmann::json parse_json_document(std::string_view text);

// The fields of one JSON object. Unknown keys are an error: they are usually typos.
class JsonFields {
 public:
  // path "" is the document root, called root_label in messages ("scenario", "presets").
  JsonFields(const nlohmann::json& j, std::string path, const std::vector<std::string_view>& allowed,
             std::string root_label = "scenario");

  bool has(const char* key) const { return j_.contains(key); }
  const nlohmann::json& at(const char* key) const { return j_.at(key); }
  std::string child(std::string_view key) const;

  const nlohmann::json& require(const char* key) const;
  std::string string(const char* key, std::string fallback) const;
  std::string nonempty_string(const char* key) const;  // required
  bool boolean(const char* key, bool fallback) const;
  double number(const char* key, double fallback) const;
  // Integers only (2.5 or "2" is a typo worth reporting, not rounding), range-checked on the full 64-bit
  // value so the message shows the number as written.
  int integer(const char* key, int fallback, std::int64_t lo, std::int64_t hi) const;
  // A name from a fixed set, e.g. parse_mask with mask_names().
  template <typename E>
  E choice(const char* key, E fallback, std::optional<E> (*parse)(std::string_view), std::string_view names) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = at(key);
    if (v.is_string())
      if (auto e = parse(v.get<std::string>())) return *e;
    throw InputError(child(key), "expected one of " + std::string(names) + " but found " + describe_found(v));
  }
  // Throws when `key` is present: it belongs to `owner` (e.g. variant mla), and this is `actual`.
  void only_for(const char* key, const std::string& owner, std::string_view actual) const;

 private:
  const nlohmann::json& j_;
  std::string path_;
};

}  // namespace attn
