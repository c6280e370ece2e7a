#include "core/io/json_fields.h"

#include "core/memory_budget.h"
#include "core/text_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>

namespace attn {
namespace {

using nlohmann::json;

// nlohmann's own message without its "[json.exception...] " and "parse error at line 1, column 2: " prefixes.
std::string library_message(const std::exception& e) {
  std::string m = e.what();
  if (const auto at = m.find("] "); at != std::string::npos) m.erase(0, at + 2);
  if (m.starts_with("parse error")) {
    if (const auto at = m.find(": "); at != std::string::npos) m.erase(0, at + 2);
  }
  // "last read: '...'" quotes the file's bytes: a stray byte of another encoding is shown as \xff, not printed.
  return escaped_text(m);
}

// Where the bracket that opens nesting level `depth` is. The text before it is valid JSON (the streaming pass
// read it), so only brackets outside strings count.
std::size_t opening_bracket_at(std::string_view text, std::size_t depth) {
  std::size_t level = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++level == depth) return i;
    } else if (c == ']' || c == '}') {
      --level;
    }
  }
  return text.size();
}

// The streaming pass before any tree is built (nlohmann's SAX interface): the nesting depth, what the tree will
// take in memory, and repeated keys. Repeated keys would silently keep the last one; like unknown keys, they are
// usually mistakes, so the pass follows the nesting to name the first by its full path.
class DocumentCheck final : public json::json_sax_t {
 public:
  DocumentCheck(std::string_view text, const RootKeys& root) : text_(text), root_(root) {}

  bool null() override { return value(kValueBytes); }
  bool boolean(bool) override { return value(kValueBytes); }
  bool number_integer(json::number_integer_t) override { return value(kValueBytes); }
  bool number_unsigned(json::number_unsigned_t) override { return value(kValueBytes); }
  bool number_float(json::number_float_t, const json::string_t&) override { return value(kValueBytes); }
  bool string(json::string_t& s) override { return value(kValueBytes + heap_bytes(s.size())); }
  bool binary(json::binary_t&) override { return value(kValueBytes); }  // never in a text
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t& k) override {
    Frame& f = stack_.back();
    f.key = k;
    if (stack_.size() == 1 && !root_allows(k)) return false;
    if (!f.keys.insert(k).second && duplicate_.empty()) duplicate_ = path();
    return add(kMemberBytes + heap_bytes(k.size()));
  }
  bool parse_error(std::size_t position, const std::string& last, const nlohmann::detail::exception& e) override {
    error_ = json_syntax_error(text_, position, last, e);
    return false;
  }

  const std::string& error() const { return error_; }
  const std::string& error_field() const { return error_field_; }
  const std::string& duplicate() const { return duplicate_; }
  // Every array's length, in the order the arrays open: the tree is built with each list's room reserved.
  const std::vector<std::size_t>& array_sizes() const { return array_sizes_; }

 private:
  // What nlohmann's tree takes, roughly: a value, a container's own allocation, an object member's map node, and a
  // string's heap past the short-string buffer (with the allocator's overhead).
  static constexpr std::uint64_t kValueBytes = 16, kContainerBytes = 64, kMemberBytes = 96;
  static std::uint64_t heap_bytes(std::size_t n) { return n < 16 ? 0 : n + 17; }

  struct Frame {
    bool object;
    std::string key;
    std::size_t index;
    std::set<std::string> keys;
    std::size_t slot;  // an array's place in array_sizes_
  };

  bool value(std::uint64_t bytes) {
    next_element();
    return add(bytes);
  }
  bool open(bool object) {
    if (stack_.size() == kMaxJsonDepth) {
      error_ = line_and_column(text_, opening_bracket_at(text_, kMaxJsonDepth + 1) + 1) + ": nested deeper than " +
               std::to_string(kMaxJsonDepth) + " levels (the limit for every file)";
      return false;
    }
    stack_.push_back({object, {}, 0, {}, array_sizes_.size()});
    if (!object) array_sizes_.push_back(0);
    return add(kValueBytes + kContainerBytes);
  }
  bool close() {
    const Frame f = std::move(stack_.back());
    stack_.pop_back();
    next_element();
    if (f.object) return true;
    array_sizes_[f.slot] = f.index;
    // nlohmann frees a tree by moving a list's values into a stack of its length first: the longest list costs
    // its values twice when the tree goes.
    if (f.index <= longest_list_) return true;
    const std::uint64_t more = kValueBytes * (f.index - longest_list_);
    longest_list_ = f.index;
    return add(more);
  }
  void next_element() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
  }
  // Many tiny values ("[[],[],...]") would make a tree far larger than the text.
  bool add(std::uint64_t bytes) {
    tree_bytes_ += bytes;
    if (tree_bytes_ <= kMaxTreeBytesPerTextByte * text_.size() + kTreeBytesAllowance) return true;
    error_ = "too many small values for its size of " + bytes_text(text_.size()) +
             ": reading it would take more than " + std::to_string(kMaxTreeBytesPerTextByte) +
             " times that in memory. The files the lab reads hold rows of numbers, not many tiny lists or values: "
             "check that this is the file meant, or split it into smaller files";
    return false;
  }
  // An unknown key at the root is refused at once: a file of a million keys is not read into a tree first.
  bool root_allows(const std::string& k) {
    const auto in = [&k](const std::vector<std::string_view>& keys) {
      return std::find(keys.begin(), keys.end(), k) != keys.end();
    };
    if (root_.allowed.empty() || in(root_.allowed) || in(root_.tolerated)) return true;
    error_field_ = k;
    error_ = "unknown key (expected one of: " + join(root_.allowed, ", ") + ")";
    return false;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) p += f.object ? (p.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
    return p;
  }

  std::string_view text_;
  const RootKeys& root_;
  std::vector<Frame> stack_;
  std::vector<std::size_t> array_sizes_;
  std::size_t longest_list_ = 0;
  std::string error_, error_field_, duplicate_;
  std::uint64_t tree_bytes_ = 0;
};

// The tree, as nlohmann's own builder makes it, but with every array's room reserved from the lengths the
// streaming pass counted: a list grown by doubling would hold up to twice its values while the file is read.
class TreeBuilder final : public json::json_sax_t {
 public:
  TreeBuilder(json& root, const std::vector<std::size_t>& sizes) : root_(root), sizes_(sizes) {}

  bool null() override { return place(nullptr) != nullptr; }
  bool boolean(bool b) override { return place(b) != nullptr; }
  bool number_integer(json::number_integer_t x) override { return place(x) != nullptr; }
  bool number_unsigned(json::number_unsigned_t x) override { return place(x) != nullptr; }
  bool number_float(json::number_float_t x, const json::string_t&) override { return place(x) != nullptr; }
  bool string(json::string_t& s) override { return place(std::move(s)) != nullptr; }
  bool binary(json::binary_t& b) override { return place(json::binary(std::move(b))) != nullptr; }
  bool start_object(std::size_t) override {
    stack_.push_back(place(json::object()));
    return true;
  }
  bool start_array(std::size_t) override {
    json* a = place(json::array());
    if (next_ < sizes_.size()) a->get_ref<json::array_t&>().reserve(sizes_[next_++]);
    stack_.push_back(a);
    return true;
  }
  bool key(json::string_t& k) override {
    member_ = &(*stack_.back())[k];
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  // A new value: the root, the next element of the open array, or the member whose key came last.
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
      return &stack_.back()->back();
    }
    *member_ = std::move(v);
    return member_;
  }

  json& root_;
  const std::vector<std::size_t>& sizes_;
  std::size_t next_ = 0;
  std::vector<json*> stack_;
  json* member_ = nullptr;
};

// A streaming pass that keeps nothing but its depth: whether the root object has a key, stopping there.
class RootKeyScan final : public json::json_sax_t {
 public:
  explicit RootKeyScan(std::span<const std::string_view> keys) : keys_(keys) {}

  bool null() override { return seen(); }
  bool boolean(bool) override { return seen(); }
  bool number_integer(json::number_integer_t) override { return seen(); }
  bool number_unsigned(json::number_unsigned_t) override { return seen(); }
  bool number_float(json::number_float_t, const json::string_t&) override { return seen(); }
  bool string(json::string_t&) override { return seen(); }
  bool binary(json::binary_t&) override { return seen(); }
  bool start_object(std::size_t) override { return seen() && ++depth_ <= kMaxJsonDepth; }
  bool start_array(std::size_t) override { return seen() && ++depth_ <= kMaxJsonDepth; }
  // The root's end is the answer: what follows it is not read (the lexer would keep its whitespace).
  bool end_object() override { return --depth_ > 0; }
  bool end_array() override { return --depth_ > 0; }
  bool key(json::string_t& k) override {
    if (depth_ == 1)
      if (const auto it = std::find(keys_.begin(), keys_.end(), k); it != keys_.end()) {
        found_ = RootKeyFound::Present;
        found_key_ = *it;
      }
    return found_ != RootKeyFound::Present;
  }
  bool parse_error(std::size_t, const std::string& last, const nlohmann::detail::exception&) override {
    if (!any_ && last.find_first_not_of(" \t\r\n") == std::string::npos) found_ = RootKeyFound::OnlyWhitespace;
    return false;
  }
  RootKeyFound found() const { return found_; }
  std::string_view found_key() const { return found_key_; }

 private:
  bool seen() { return any_ = true; }

  std::span<const std::string_view> keys_;
  std::string_view found_key_;
  std::size_t depth_ = 0;
  bool any_ = false;
  RootKeyFound found_ = RootKeyFound::Absent;
};

// A streaming pass that follows the path of every value, as messages write it ("layers[0].attention.heads"), and
// stops at `target`: a number there is kept as the lexer read it, the text the user wrote.
class WrittenNumberScan final : public json::json_sax_t {
 public:
  explicit WrittenNumberScan(std::string_view target) : target_(target) {}

  bool null() override { return !arrive(); }
  bool boolean(bool) override { return !arrive(); }
  bool number_integer(json::number_integer_t) override { return !arrive(); }
  bool number_unsigned(json::number_unsigned_t) override { return !arrive(); }
  bool number_float(json::number_float_t, const json::string_t& s) override {
    if (!arrive()) return true;
    written_ = s;
    return false;
  }
  bool string(json::string_t&) override { return !arrive(); }
  bool binary(json::binary_t&) override { return !arrive(); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t& k) override {
    path_.resize(frames_.back().base);
    if (!path_.empty()) path_ += '.';
    path_ += k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  const std::optional<std::string>& written() const { return written_; }

 private:
  struct Frame {
    bool object;
    std::size_t base, index;  // the length of the container's own path; an array's next element
  };

  // A value begins: an array's element gets its index. True when it is the target (the pass then stops).
  bool arrive() {
    if (!frames_.empty() && !frames_.back().object) {
      path_.resize(frames_.back().base);
      path_ += "[" + std::to_string(frames_.back().index++) + "]";
    }
    return path_ == target_;
  }
  bool open(bool object) {
    if (arrive()) return false;
    frames_.push_back({object, path_.size(), 0});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  std::string_view target_;
  std::string path_;
  std::vector<Frame> frames_;
  std::optional<std::string> written_;
};

// `path` below `at`: "model" and "layers[0]" make "model.layers[0]", "models" and "[3]" make "models[3]".
std::string path_below(std::string_view at, std::string_view path) {
  if (at.empty()) return std::string(path);
  if (path.empty()) return std::string(at);
  return std::string(at) + (path.front() == '[' ? "" : ".") + std::string(path);
}

}  // namespace

std::string describe_found(const json& j) {
  if (j.is_string()) return "string \"" + j.get<std::string>() + "\"";
  if (j.is_number()) return "number " + j.dump();
  return std::string(j.type_name());
}

JsonSource JsonSource::under(std::string_view path) const { return {text, path_below(at, path)}; }

std::string written_value(const json& v, const std::string& path, const JsonSource* source) {
  // An integer of 64 bits is shown exactly as it is; only a double may differ from its text.
  if (!v.is_number_float() || source == nullptr) return v.dump();
  const std::string target = path_below(source->at, path);
  WrittenNumberScan scan(target);
  json::sax_parse(source->text.begin(), source->text.end(), &scan);
  return scan.written() ? quoted_number(*scan.written()) : v.dump();
}

std::string describe_found(const json& j, const std::string& path, const JsonSource* source) {
  if (j.is_number()) return "number " + written_value(j, path, source);
  return describe_found(j);
}

std::int64_t integer_within(const json& v, std::int64_t lo, std::int64_t hi, const std::string& field) {
  // An unsigned value past the signed range would read as negative: compare it unsigned, quote it as written.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::max<std::int64_t>(hi, 0)))
    throw InputError(field, "must be <= " + std::to_string(hi) + " (found " + v.dump() + ")");
  check_range(v.get<std::int64_t>(), lo, hi, field);
  return v.get<std::int64_t>();
}

std::int64_t predicted_document_bytes(std::uintmax_t size) {
  const auto n = static_cast<std::int64_t>(std::min<std::uintmax_t>(size, std::uintmax_t(1) << 50));
  return n + static_cast<std::int64_t>(kMaxTreeBytesPerTextByte) * n;
}

void check_reading_budget(std::int64_t needed, std::int64_t budget, std::string_view what, std::string_view fewer) {
  if (needed > kReadingFloorBytes) check_memory_budget(needed, budget, what, fewer);
}

namespace {

// The size of a regular file of at most max_bytes.
// A system error as a message's tail: "Permission denied" as "permission denied".
std::string system_error_words(const std::error_code& ec) {
  std::string words = ec.message();
  if (!words.empty()) words[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(words[0])));
  return words;
}

std::uintmax_t checked_file_size(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::directory)
    throw InputError("", "is a directory, not a file to load");
  if (status.type() == std::filesystem::file_type::not_found) throw InputError("", "no such file");
  // A folder on the way that cannot be entered, a loop of links: the reason, not "no such file".
  if (ec) throw InputError("", "cannot be read: " + system_error_words(ec));
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError("", "not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError("", "its size cannot be read: " + ec.message());
  if (size > max_bytes)
    throw InputError("", "file is larger than " + std::to_string(max_bytes >> 20) + " MiB, the limit for " +
                             std::string(kind) + " (found " + bytes_text(size) + ")");
  return size;
}

// The first `size` bytes of the file, in one allocation of that size (a stream into a string would hold it two or
// three times over); a file grown since it was checked is read only up to the size checked.
std::string read_checked_file(const std::filesystem::path& path, std::uintmax_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("", "cannot be opened for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

constexpr std::string_view kReadingFewer = "or a smaller file";

}  // namespace

namespace {

// A token as nlohmann names it ("number literal", "'}'"), in the words of a person reading the file.
std::string token_words(std::string_view t) {
  if (t == "end of input") return "the end of the file";
  if (t == "number literal") return "a number";
  if (t == "string literal") return "a string";
  if (t == "'[', '{', or a literal")
    return "a value (a number, a string in double quotes, true, false, null, a list [...] or an object {...})";
  return std::string(t);
}

// What was expected, in words: after a value in a list or an object either a comma or its end may come, although
// the library names only the end.
std::string expected_words(std::string_view t) {
  if (t == "']'") return "',' before another value or ']' to end the list";
  if (t == "'}'") return "',' before another key or '}' to end the object";
  if (t == "':'") return "':' after the key";
  if (t == "string literal") return "a key in double quotes";
  if (t == "end of input") return "the end of the file (a file holds one value)";
  return token_words(t);
}

// What the lexer could not read, in words; empty when the library's message is not one of these.
std::string lexer_words(std::string_view what) {
  if (what.starts_with("invalid literal"))
    return "not a value: true, false and null are written in lower case, text in double quotes";
  if (what.find("missing closing quote") != std::string::npos) return "a string without its closing quote";
  if (what.find("control character") != std::string::npos)
    return "a line break or control character inside a string (write it as \\n or \\u00XX)";
  if (what.find("after backslash") != std::string::npos)
    return "an unknown escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX)";
  if (what.find("surrogate") != std::string::npos || what.find("'\\u'") != std::string::npos)
    return "a \\u escape that is not a character";
  if (what.starts_with("invalid number")) return "not a number";
  if (what.starts_with("invalid comment")) return "a comment, which JSON does not have";
  return {};
}

// nlohmann's "syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal", in words.
std::string syntax_words(const std::string& what) {
  std::string_view w = what;
  if (const auto dash = w.find(" - "); w.starts_with("syntax error") && dash != std::string_view::npos)
    w.remove_prefix(dash + 3);
  if (const auto at = w.find("; last read:"); at != std::string_view::npos) w = w.substr(0, at);
  if (w.starts_with("unexpected ")) {
    w.remove_prefix(11);
    const auto semi = w.find("; expected ");
    if (semi == std::string_view::npos) return "found " + token_words(w) + " where it cannot be";
    return "found " + token_words(w.substr(0, semi)) + " where " + expected_words(w.substr(semi + 11)) +
           " was expected";
  }
  if (std::string words = lexer_words(w); !words.empty()) return words;
  return what;
}

// The word the library could not read as a literal: the lexer's last text holds what came since the last string
// ("name": tru}), so the word is what follows its last separator, without the byte that ended it.
std::string literal_read(std::string_view last) {
  if (const auto at = last.find_last_of(" \t\r\n:,[{"); at != std::string_view::npos) last.remove_prefix(at + 1);
  if (last.size() > 1 && (last.back() == '}' || last.back() == ']')) last.remove_suffix(1);
  return escaped_text(last);
}

}  // namespace

std::string json_syntax_error(std::string_view text, std::size_t position, const std::string& last,
                              const nlohmann::detail::exception& e) {
  const std::string what = library_message(e);
  if (e.id == 406) {  // a number past a double's range, which the library reports without a position
    const std::size_t start = position + 1 >= last.size() ? position + 1 - last.size() : 0;
    return line_and_column(text, start) + ": number too large (found " + quoted_number(last) + ")";
  }
  if (what.find("UTF-8") != std::string::npos) return line_and_column(text, position) + ": not valid UTF-8 text";
  std::string words = syntax_words(what);
  if (words.starts_with("not a value")) words.insert(11, " (found " + literal_read(last) + ")");
  return line_and_column(text, position) + ": not valid JSON: " + words;
}

std::uintmax_t checked_document_size(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                                     std::int64_t budget) {
  const std::uintmax_t size = checked_file_size(path, max_bytes, kind);
  check_reading_budget(predicted_document_bytes(size), budget, "reading this file and parsing it", kReadingFewer);
  return size;
}

std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                               std::int64_t budget) {
  return read_checked_file(path, checked_document_size(path, max_bytes, kind, budget));
}

std::string read_document_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  return read_document_file(path, max_bytes, "this kind of file", limits::kDefaultMemoryBudget);
}

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind,
                           std::int64_t budget) {
  const std::uintmax_t size = checked_file_size(path, max_bytes, kind);
  check_reading_budget(static_cast<std::int64_t>(size), budget, "reading this file", kReadingFewer);
  std::string text = read_checked_file(path, size);
  if (text.size() < size) return text;
  // The size is the system's word, not the file's: /proc's files say 0 and hold more, a file may grow. The rest is
  // read to its end in blocks, each held to the limit and the budget before it is read.
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(size));
  constexpr std::size_t kBlock = 64 << 10;
  while (in) {
    const std::size_t at = text.size(), block = std::min(kBlock, static_cast<std::size_t>(max_bytes) + 1 - at);
    check_reading_budget(static_cast<std::int64_t>(at + block), budget, "reading this file", kReadingFewer);
    text.resize(at + block);
    in.read(text.data() + at, static_cast<std::streamsize>(block));
    text.resize(at + static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw InputError("", "file is larger than " + std::to_string(max_bytes >> 20) + " MiB, the limit for " +
                               std::string(kind) + " (found more than " + bytes_text(max_bytes) + ")");
  }
  return text;
}

json parse_json_document(std::string_view text, const RootKeys& root) {
  if (text.empty()) throw InputError("", "the file is empty (expected a JSON object)");
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError("", "the file holds only whitespace (expected a JSON object)");
  DocumentCheck check(text, root);
  if (!json::sax_parse(text.begin(), text.end(), &check)) throw InputError(check.error_field(), check.error());
  if (!check.duplicate().empty()) throw InputError(check.duplicate(), "key appears twice in one object");
  json root_value;
  TreeBuilder tree(root_value, check.array_sizes());
  if (!json::sax_parse(text.begin(), text.end(), &tree))  // the streaming pass has read the same text
    throw InputError("", "not valid JSON");
  return root_value;
}

RootKeyFound find_root_key(std::istream& in, std::span<const std::string_view> keys, std::string_view& found_key) {
  // Leading whitespace skipped here: the library's lexer keeps every byte of it for its messages.
  in >> std::ws;
  if (in.peek() == std::istream::traits_type::eof()) return RootKeyFound::OnlyWhitespace;
  RootKeyScan scan(keys);
  json::sax_parse(in, &scan);
  found_key = scan.found_key();
  return scan.found();
}

RootKeyFound find_root_key(std::istream& in, std::string_view key) {
  std::string_view found;
  return find_root_key(in, std::span(&key, 1), found);
}

JsonFields::JsonFields(const json& j, std::string path, const std::vector<std::string_view>& allowed,
                       std::string root_label, const JsonSource* source)
    : j_(j), path_(std::move(path)), source_(source) {
  if (!j_.is_object())
    throw InputError(path_.empty() ? root_label : path_,
                     "expected an object but found " + describe_found(j_, path_, source_));
  for (const auto& [key, value] : j_.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw InputError(child(key), "unknown key (expected one of: " + join(allowed, ", ") + ")");
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
  if (!at(key).is_string()) throw InputError(child(key), "expected a string but found " + found(key));
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
  if (!at(key).is_boolean()) throw InputError(child(key), "expected true or false but found " + found(key));
  return at(key).get<bool>();
}

double JsonFields::number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_number()) throw InputError(child(key), "expected a number but found " + found(key));
  return at(key).get<double>();
}

int JsonFields::integer(const char* key, int fallback, std::int64_t lo, std::int64_t hi) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (!v.is_number_integer()) throw InputError(child(key), "expected an integer but found " + found(key));
  return static_cast<int>(integer_within(v, lo, hi, child(key)));
}

const json* ForeignFields::find(std::string_view key) const {
  const auto it = j.find(std::string(key));
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::int64_t ForeignFields::integer(std::string_view key, std::int64_t fallback, std::int64_t lo,
                                    std::int64_t hi) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number_integer()) throw InputError(field(key), "expected a whole number but found " + describe_found(*v));
  return integer_within(*v, lo, hi, field(key));
}

double ForeignFields::positive(std::string_view key, double fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_number() || !(v->get<double>() > 0) || !std::isfinite(v->get<double>()))
    throw InputError(field(key), "expected a number above 0 but found " + describe_found(*v));
  return v->get<double>();
}

bool ForeignFields::boolean(std::string_view key, bool fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw InputError(field(key), "expected true or false but found " + describe_found(*v));
  return v->get<bool>();
}

std::string ForeignFields::text(std::string_view key, std::string fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_string()) throw InputError(field(key), "expected a string but found " + describe_found(*v));
  return v->get<std::string>();
}

ForeignFields ForeignFields::object(std::string_view key) const {
  const json* v = find(key);
  if (!v || !v->is_object())
    throw InputError(field(key), "expected an object but found " + (v ? describe_found(*v) : std::string("none")));
  return {*v, field(key) + "."};
}

void JsonFields::only_for(const char* key, const std::string& owner, std::string_view actual) const {
  if (has(key)) throw InputError(child(key), "only used by " + owner + " (this is " + std::string(actual) + ")");
}

}  // namespace attn
