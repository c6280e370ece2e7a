#pragma once
// What every loader of a JSON file here shares: reading the file, parsing with positions and repeated-key
// detection, and reading the fields of an object so that every problem names its path
// (`attention.heads`, `models[3].kv_heads`) with what was expected and what was found.
#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/validate.h"

namespace attn {

// "string \"x\"", "number 2.5", "array", ...: how a found value is named in messages.
std::string describe_found(const nlohmann::json& j);

// The text a tree was parsed from, and the path in it of the value being read ("scenario" for a recovery file's
// scenario, "" for a whole document): what a number was written as, for messages. The tree holds every number that is
// not an integer of 64 bits as a double (1e3 as 1000.0, 18446744073709551616 as 1.8446744073709552e+19); the text is
// scanned again only when a message quotes such a number, so reading holds nothing more.
struct JsonSource {
  std::string_view text;
  std::string at;
  // The value at `path` below this one ("model" under "model": "model.model").
  JsonSource under(std::string_view path) const;
};

// v, found at `path` (as messages name it, below source->at), as the user wrote it: a number's own text from the
// source (1e3, 18446744073709551616, 2.50; past 40 characters as quoted_number shortens it), any other value, or any
// value without a source, as dump() gives it.
std::string written_value(const nlohmann::json& v, const std::string& path, const JsonSource* source);
// describe_found with a number as written: "number 1e3".
std::string describe_found(const nlohmann::json& j, const std::string& path, const JsonSource* source);

// v, an integer of the document, within [lo, hi]; else "must be <= 9 (found 18446744073709551615)" at `field`, the
// value as written (no wrap to 64 or 32 bits).
std::int64_t integer_within(const nlohmann::json& v, std::int64_t lo, std::int64_t hi, const std::string& field);

// Nesting deeper than this is refused before any tree is built (the deepest file the lab writes, a recovery of a
// model, has 8 levels).
inline constexpr std::size_t kMaxJsonDepth = 64;
// The streaming pass refuses a document whose tree would take more than this many times its text (plus an
// allowance of kTreeBytesAllowance), so reading any file costs a small multiple of its size.
inline constexpr std::uint64_t kMaxTreeBytesPerTextByte = 10, kTreeBytesAllowance = 4u << 20;

// What reading and parsing a document of `size` bytes may hold at its peak: the text and the tree the streaming
// pass allows (kMaxTreeBytesPerTextByte times the text; its allowance for small files is the floor below).
std::int64_t predicted_document_bytes(std::uintmax_t size);
// Reading that holds at most this is never refused by the memory budget: the lab's own small files (a settings or
// lesson file, the scenario of a tiny budget's test) take less, and their trace is what the budget is about.
inline constexpr std::int64_t kReadingFloorBytes = kTreeBytesAllowance;
// Throws BudgetError ("reading this file and parsing it needs ... but the memory budget is ...") when `needed`,
// what reading holds, is past both the budget and kReadingFloorBytes.
void check_reading_budget(std::int64_t needed, std::int64_t budget, std::string_view what, std::string_view fewer);

// The size of the regular file at `path`, refused (InputError with field "") when it is not one, when it is larger
// than max_bytes (`kind` names the limit: "a scenario file") or when reading and parsing it into a tree would take
// more than `budget` bytes: nothing of it is read.
std::uintmax_t checked_document_size(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                                     std::int64_t budget);

// The text of a regular file, checked by checked_document_size before a byte is read; throws InputError with
// field "".
std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                               std::int64_t budget);
// The same for the small files of fixed limits (settings, presets, lessons) and the readers not given a budget yet:
// "this kind of file" in the message, and the default budget.
std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes);
// The same for a file read by streaming (no tree): only its text is held to `budget` here; the reader checks what
// it makes of it.
std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                           std::int64_t budget);

// A syntax error of a streaming pass over `text` ("line 3, column 7: not valid JSON: ..."), nlohmann's jargon left
// out.
std::string json_syntax_error(std::string_view text, std::size_t position, const std::string& last,
                              const nlohmann::detail::exception& e);

// What the root of a document may hold: an object of these keys, called `label` in messages ("scenario"). With
// keys given, the streaming pass refuses the first root key in neither list, with the words of JsonFields, before
// any tree is built. `tolerated` are another kind's keys (a model's in a scenario),
// left for the reader of the tree to say "this is a model file".
struct RootKeys {
  std::string_view label;
  std::vector<std::string_view> allowed, tolerated;
};

// Parses a whole document; a syntax error names its line and column, a repeated key its full path. A streaming
// pass first refuses nesting past kMaxJsonDepth, unknown root keys (with `root`) and documents whose tree would take
// more than kMaxTreeBytesPerTextByte times the text's size (many tiny lists).
nlohmann::json parse_json_document(std::string_view text, const RootKeys& root = {});

// What a streaming pass that keeps nothing tells of a document before it is read whole: its root object has `key`
// (the pass stops there), or it holds only whitespace, or neither (a broken document's error is said when it is
// read whole).
enum class RootKeyFound { Present, Absent, OnlyWhitespace };
RootKeyFound find_root_key(std::istream& in, std::string_view key);
// The same pass for several keys at once: `found_key` is the one of `keys` the root has first (a model file's "layers",
// a Real model file's "real_model"), so that telling a file's kind reads it once.
RootKeyFound find_root_key(std::istream& in, std::span<const std::string_view> keys, std::string_view& found_key);

// The fields of an object another program wrote (a Hugging Face config.json or tokenizer.json): keys the lab does not
// need are left alone, null reads as absent (as transformers writes an unset value), and a value of the wrong type or
// range is refused naming its path: "n_head: expected a whole number but found string \"12\"".
struct ForeignFields {
  const nlohmann::json& j;
  std::string path;  // what the keys are below: "" at the root, "model." inside "model"

  const nlohmann::json* find(std::string_view key) const;  // nullptr when absent or null
  std::string field(std::string_view key) const { return path + std::string(key); }
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  double positive(std::string_view key, double fallback) const;  // a finite number above 0
  bool boolean(std::string_view key, bool fallback) const;
  std::string text(std::string_view key, std::string fallback) const;
  // The object at `key`, required.
  ForeignFields object(std::string_view key) const;
};

// The fields of one JSON object. Unknown keys are an error: they are usually typos.
class JsonFields {
 public:
  // path "" is the document root, called root_label in messages ("scenario", "presets"). With a source (the text
  // j was parsed from, `path` below its `at`), a number in a message is quoted as written.
  JsonFields(const nlohmann::json& j, std::string path, const std::vector<std::string_view>& allowed,
             std::string root_label = "scenario", const JsonSource* source = nullptr);

  bool has(const char* key) const { return j_.contains(key); }
  const nlohmann::json& at(const char* key) const { return j_.at(key); }
  std::string child(std::string_view key) const;
  const JsonSource* source() const { return source_; }
  // The value of `key` as describe_found names it, a number as written.
  std::string found(const char* key) const { return describe_found(at(key), child(key), source_); }

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
    throw InputError(child(key), "expected one of " + std::string(names) + " but found " + found(key));
  }
  // Throws when `key` is present: it belongs to `owner` (e.g. variant mla), and this is `actual`.
  void only_for(const char* key, const std::string& owner, std::string_view actual) const;

 private:
  const nlohmann::json& j_;
  std::string path_;
  const JsonSource* source_;
};

}  // namespace attn
