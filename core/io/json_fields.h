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

// The text of a regular file of at most max_bytes; throws InputError with field "".
std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

// Parses a whole document; a syntax error names its line and column, a repeated key its full path.
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
