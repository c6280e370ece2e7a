#include "core/io/json_fields.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace attn {
namespace {

using nlohmann::json;

std::string line_and_column(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + byte, '\n');
  const std::size_t line_start = text.rfind('\n', byte == 0 ? 0 : byte - 1);
  const std::size_t column = line_start == std::string_view::npos || byte == 0 ? byte : byte - line_start - 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column == 0 ? 1 : column);
}

// nlohmann's own message without its "[json.exception...] " and "parse error at line 1, column 2: " prefixes.
std::string library_message(const std::exception& e) {
  std::string m = e.what();
  if (const auto at = m.find("] "); at != std::string::npos) m.erase(0, at + 2);
  if (m.starts_with("parse error")) {
    if (const auto at = m.find(": "); at != std::string::npos) m.erase(0, at + 2);
  }
  return m;
}

// Repeated keys would silently keep the last one; like unknown keys, they are usually mistakes. The parser
// only reports events, so this follows the nesting to name the repeated key by its full path.
class DuplicateKeyFinder {
 public:
  json::parser_callback_t callback() {
    return [this](int, json::parse_event_t event, json& parsed) {
      switch (event) {
        case json::parse_event_t::object_start: stack_.push_back({true, {}, 0, {}}); break;
        case json::parse_event_t::array_start: stack_.push_back({false, {}, 0, {}}); break;
        case json::parse_event_t::key: {
          Frame& f = stack_.back();
          f.key = parsed.get<std::string>();
          if (!f.keys.insert(f.key).second && first_.empty()) first_ = path();
          break;
        }
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
          stack_.pop_back();
          next_element();
          break;
        case json::parse_event_t::value: next_element(); break;
      }
      return true;
    };
  }
  const std::string& first() const { return first_; }

 private:
  struct Frame {
    bool object;
    std::string key;
    std::size_t index;
    std::set<std::string> keys;
  };
  void next_element() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) p += f.object ? (p.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
    return p;
  }
  std::vector<Frame> stack_;
  std::string first_;
};

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace

std::string describe_found(const json& j) {
  if (j.is_string()) return "string \"" + j.get<std::string>() + "\"";
  if (j.is_number()) return "number " + j.dump();
  return std::string(j.type_name());
}

std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("", "is a directory, not a file to load");
  if (!std::filesystem::exists(path, ec)) throw InputError("", "no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError("", "not a regular file");
  if (std::filesystem::file_size(path, ec) > max_bytes)
    throw InputError("", "file is larger than " + std::to_string(max_bytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse_json_document(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError("", "the file is empty (expected a JSON object)");
  json j;
  DuplicateKeyFinder duplicates;
  try {
    j = json::parse(text.begin(), text.end(), duplicates.callback());
  } catch (const json::parse_error& e) {
    throw InputError("", line_and_column(text, e.byte) + ": not valid JSON: " + library_message(e));
  } catch (const json::exception& e) {
    throw InputError("", "not valid JSON: " + library_message(e));
  }
  if (!duplicates.first().empty()) throw InputError(duplicates.first(), "key appears twice in one object");
  return j;
}

JsonFields::JsonFields(const json& j, std::string path, const std::vector<std::string_view>& allowed,
                       std::string root_label)
    : j_(j), path_(std::move(path)) {
  if (!j_.is_object())
    throw InputError(path_.empty() ? root_label : path_, "expected an object but found " + describe_found(j_));
  for (const auto& [key, value] : j_.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw InputError(child(key), "unknown key (expected one of: " + join(allowed) + ")");
}

std::string JsonFields::child(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const json& JsonFields::require(const char* key) const {
  if (!has(key)) throw InputError(child(key), "missing (required)");
  return at(key);
}

std::string JsonFields::string(const char* key, std::string fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_string()) throw InputError(child(key), "expected a string but found " + describe_found(at(key)));
  return at(key).get<std::string>();
}

std::string JsonFields::nonempty_string(const char* key) const {
  require(key);
  std::string s = string(key, "");
  if (s.empty()) throw InputError(child(key), "must not be empty");
  return s;
}

bool JsonFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_boolean())
    throw InputError(child(key), "expected true or false but found " + describe_found(at(key)));
  return at(key).get<bool>();
}

double JsonFields::number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_number()) throw InputError(child(key), "expected a number but found " + describe_found(at(key)));
  return at(key).get<double>();
}

int JsonFields::integer(const char* key, int fallback, std::int64_t lo, std::int64_t hi) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
    throw InputError(child(key), "must be <= " + std::to_string(hi) + " (found " + v.dump() + ")");
  if (!v.is_number_integer()) throw InputError(child(key), "expected an integer but found " + describe_found(v));
  check_range(v.get<std::int64_t>(), lo, hi, child(key));
  return static_cast<int>(v.get<std::int64_t>());
}

void JsonFields::only_for(const char* key, const std::string& owner, std::string_view actual) const {
  if (has(key)) throw InputError(child(key), "only used by " + owner + " (this is " + std::string(actual) + ")");
}

}  // namespace attn
