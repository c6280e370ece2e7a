#include "core/io/scenario_json.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

namespace attn {
namespace {

using nlohmann::json;

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::string found(const json& j) {
  if (j.is_string()) return "string \"" + j.get<std::string>() + "\"";
  if (j.is_number()) return "number " + j.dump();
  return std::string(j.type_name());
}

// Reads fields of one JSON object and knows its own path, so every message can say where it is.
class Reader {
 public:
  Reader(const json& j, std::string path, std::vector<std::string_view> allowed)
      : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) throw ScenarioError(where(), "expected an object but found " + found(j_));
    for (const auto& [key, value] : j_.items())
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        throw ScenarioError(child(key), "unknown key (expected one of: " + join(allowed) + ")");
  }

  bool has(const char* key) const { return j_.contains(key); }
  const json& at(const char* key) const { return j_.at(key); }
  std::string child(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
  std::string where() const { return path_.empty() ? "scenario" : path_; }

  const json& require(const char* key) const {
    if (!has(key)) throw ScenarioError(child(key), "missing (required)");
    return at(key);
  }

  std::string string(const char* key, std::string fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_string()) throw ScenarioError(child(key), "expected a string but found " + found(at(key)));
    return at(key).get<std::string>();
  }

  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_boolean()) throw ScenarioError(child(key), "expected true or false but found " + found(at(key)));
    return at(key).get<bool>();
  }

  // Integers only: 2.5 or "2" is a typo worth reporting, not rounding.
  // Range-checked here, on the full 64-bit value, so the message shows the number as written.
  int integer(const char* key, int fallback, int lo, int hi) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      throw ScenarioError(child(key), "must be <= " + std::to_string(hi) + " (found " + v.dump() + ")");
    if (!v.is_number_integer()) throw ScenarioError(child(key), "expected an integer but found " + found(v));
    check_range(v.get<std::int64_t>(), lo, hi, child(key));
    return static_cast<int>(v.get<std::int64_t>());
  }

  template <typename E>
  E choice(const char* key, E fallback, std::optional<E> (*parse)(std::string_view), std::string_view names) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (v.is_string())
      if (auto e = parse(v.get<std::string>())) return *e;
    throw ScenarioError(child(key), "expected one of " + std::string(names) + " but found " + found(v));
  }

 private:
  const json& j_;
  std::string path_;
};

std::string index_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::vector<std::string> read_tokens(const json& j, const std::string& path) {
  if (!j.is_array()) throw ScenarioError(path, "expected an array of strings but found " + found(j));
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) throw ScenarioError(index_path(path, i), "expected a string but found " + found(j[i]));
    tokens.push_back(j[i].get<std::string>());
    if (tokens.back().empty()) throw ScenarioError(index_path(path, i), "a token label must not be empty");
  }
  return tokens;
}

Matrix read_matrix(const json& j, const std::string& path) {
  if (!j.is_array()) throw ScenarioError(path, "expected an array of rows but found " + found(j));
  if (j.empty()) throw ScenarioError(path, "expected at least one row but found none");
  std::size_t cols = 0;
  for (std::size_t r = 0; r < j.size(); ++r) {
    const std::string row_path = index_path(path, r);
    if (!j[r].is_array()) throw ScenarioError(row_path, "expected an array of numbers but found " + found(j[r]));
    if (r == 0) {
      cols = j[r].size();
      if (cols == 0) throw ScenarioError(row_path, "expected at least one number but found none");
    } else if (j[r].size() != cols) {
      throw ScenarioError(row_path, "expected " + std::to_string(cols) + " numbers (as in row 0) but found " +
                                        std::to_string(j[r].size()));
    }
  }
  Matrix m(j.size(), cols);
  for (std::size_t r = 0; r < j.size(); ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const json& v = j[r][c];
      if (!v.is_number()) throw ScenarioError(index_path(index_path(path, r), c), "expected a number but found " + found(v));
      m(r, c) = v.get<double>();
    }
  check_values(m, path);
  return m;
}

TokenRows read_token_rows(const json& tokens, const json& embeddings, const std::string& prefix) {
  return {read_tokens(tokens, prefix + "tokens"), read_matrix(embeddings, prefix + "embeddings")};
}

AttentionConfig read_attention(const json& j, bool has_w_o) {
  const Reader r(j, "attention",
                 {"variant", "heads", "head_dim", "mask", "window", "custom_mask", "scale", "kernel", "output_projection"});
  AttentionConfig a;
  a.variant = r.choice("variant", Variant::Mha, parse_variant, variant_names());
  r.require("heads");
  a.heads = r.integer("heads", 1, 1, limits::kMaxHeads);
  r.require("head_dim");
  a.head_dim = r.integer("head_dim", 1, 1, limits::kMaxHeadDim);
  a.mask = r.choice("mask", MaskKind::None, parse_mask, mask_names());
  if (a.mask == MaskKind::SlidingWindow) r.require("window");
  a.window = r.integer("window", 1, 1, limits::kMaxTokens);
  if (a.mask == MaskKind::Custom) a.custom_mask = read_matrix(r.require("custom_mask"), "attention.custom_mask");
  else if (r.has("custom_mask")) throw ScenarioError("attention.custom_mask", "given, but attention.mask is not \"custom\"");
  a.scale = r.boolean("scale", true);
  a.kernel = r.choice("kernel", Kernel::Softmax, parse_kernel, kernel_names());
  a.output_projection = r.boolean("output_projection", has_w_o);
  return a;
}

PartialWeights read_weights(const json& j) {
  const Reader r(j, "weights", {"W_Q", "W_K", "W_V", "W_O"});
  PartialWeights w;
  const std::pair<const char*, std::optional<Matrix>*> fields[] = {{"W_Q", &w.W_Q}, {"W_K", &w.W_K}, {"W_V", &w.W_V}, {"W_O", &w.W_O}};
  for (auto [key, target] : fields)
    if (r.has(key)) *target = read_matrix(r.at(key), r.child(key));
  return w;
}

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

}  // namespace

Scenario scenario_from_json(const json& j) {
  const Reader r(j, "", {"name", "description", "tokens", "embeddings", "context", "attention", "weights", "seed"});
  Scenario s;
  s.name = r.string("name", "untitled");
  s.description = r.string("description", "");
  s.input = read_token_rows(r.require("tokens"), r.require("embeddings"), "");
  if (r.has("context")) {
    const Reader c(r.at("context"), "context", {"tokens", "embeddings"});
    s.context = read_token_rows(c.require("tokens"), c.require("embeddings"), "context.");
  }
  s.weights = r.has("weights") ? read_weights(r.at("weights")) : PartialWeights{};
  s.attention = read_attention(r.require("attention"), s.weights.W_O.has_value());
  if (r.has("seed")) {
    const json& seed = r.at("seed");
    if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0))
      throw ScenarioError("seed", "expected a non-negative integer but found " + found(seed));
    s.seed = seed.get<std::uint64_t>();
  }
  validate(s);
  return s;
}

Scenario parse_scenario(std::string_view text) {
  // Repeated keys would silently keep the last one; like unknown keys, they are usually mistakes.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  const json::parser_callback_t on_event = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    if (event == json::parse_event_t::key && !open_objects.empty() && duplicate.empty() &&
        !open_objects.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  json j;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw ScenarioError("", "the file is empty (expected a JSON object)");
  try {
    j = json::parse(text.begin(), text.end(), on_event);
  } catch (const json::parse_error& e) {
    throw ScenarioError("", line_and_column(text, e.byte) + ": not valid JSON: " + library_message(e));
  } catch (const json::exception& e) {
    throw ScenarioError("", "not valid JSON: " + library_message(e));
  }
  if (!duplicate.empty()) throw ScenarioError(duplicate, "key appears twice in one object");
  return scenario_from_json(j);
}

Scenario load_scenario_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ScenarioError("", "no such file");
  if (std::filesystem::file_size(path, ec) > kMaxScenarioFileBytes)
    throw ScenarioError("", "file is larger than " + std::to_string(kMaxScenarioFileBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError("", "cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str());
}

}  // namespace attn
