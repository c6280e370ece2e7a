#include "core/io/real_session.h"

#include <algorithm>
#include <cstdint>

#include "core/io/converted_folder.h"
#include "core/io/scenario_json.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

using json = nlohmann::json;

// A list of whole numbers from 0 to below `bound` at `where` (token ids; a head's layer and index), each an `item`.
std::vector<int> json_counts(const json& v, const std::string& where, int bound, const char* item) {
  if (!v.is_array()) throw InputError(where, "expected a list");
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_unsigned() || v[i].get<std::uint64_t>() >= static_cast<std::uint64_t>(bound))
      throw InputError(
          where + "[" + std::to_string(i) + "]",
          std::string("expected ") + item + " (a whole number from 0 to " + thousands(std::uint64_t(bound) - 1) + ")");
    out.push_back(v[i].get<int>());
  }
  return out;
}

Ablation json_ablation(const JsonFields& f) {
  Ablation a;
  if (f.has("ablation")) {
    const json& heads = f.at("ablation");
    if (!heads.is_array()) throw InputError(f.child("ablation"), "expected a list of [layer, head]");
    for (std::size_t i = 0; i < heads.size(); ++i) {
      const std::string at = f.child("ablation") + "[" + std::to_string(i) + "]";
      const std::vector<int> h = json_counts(heads[i], at, 1 << 16, "a layer or head number");
      if (h.size() != 2) throw InputError(at, "expected [layer, head]");
      a.heads.push_back({h[0], h[1]});
    }
  }
  a.mode = f.choice("ablation_mode", AblationMode::Zero, parse_ablation_mode, ablation_mode_names());
  std::sort(a.heads.begin(), a.heads.end());
  a.heads.erase(std::unique(a.heads.begin(), a.heads.end()), a.heads.end());
  return a;
}

// The conversion's layers are checked against the model when the folder opens.
KvConversion json_conversion(const JsonFields& f) {
  KvConversion c = conversion_from_json(f);
  c.layers = json_counts(f.require("layers"), f.child("layers"), 1 << 16, "a layer number");
  if (c.layers.empty()) throw InputError(f.child("layers"), "expected at least one layer");
  for (std::size_t i = 1; i < c.layers.size(); ++i)
    if (c.layers[i] <= c.layers[i - 1])
      throw InputError(f.child("layers") + "[" + std::to_string(i) + "]",
                       "layers are listed once each, in ascending order");
  return c;
}

}  // namespace

nlohmann::ordered_json path_json(const std::filesystem::path& p) {
  const std::string& bytes = p.native();
  if (is_utf8(bytes)) return bytes;
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (const char c : bytes) values.push_back(static_cast<unsigned char>(c));
  return values;
}

std::filesystem::path json_path(const JsonFields& f, const char* key) {
  if (!f.has(key)) return {};
  const json& v = f.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) throw InputError(f.child(key), "expected a path (a string or a list of byte values)");
  std::string bytes;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_unsigned() || v[i].get<std::uint64_t>() > 255)
      throw InputError(f.child(key) + "[" + std::to_string(i) + "]", "expected a byte value 0-255");
    bytes.push_back(static_cast<char>(v[i].get<std::uint64_t>()));
  }
  return bytes;
}

nlohmann::ordered_json real_session_json(const RealSession& s) {
  nlohmann::ordered_json j = {{"folder", path_json(s.folder)}, {"text", s.text}};
  if (s.ids) j["ids"] = *s.ids;
  nlohmann::ordered_json heads = nlohmann::ordered_json::array();
  for (const HeadRef& h : s.ablation.heads) heads.push_back({h.layer, h.head});
  j["ablation"] = std::move(heads);
  j["ablation_mode"] = std::string(to_string(s.ablation.mode));
  if (s.conversion) {
    nlohmann::ordered_json c;
    add_conversion_json(c, *s.conversion);
    c["layers"] = s.conversion->layers;
    j["converted"] = std::move(c);
  }
  return j;
}

RealSession real_session_from_json(const JsonFields& f) {
  RealSession s;
  s.folder = json_path(f, "folder");
  if (s.folder.empty()) throw InputError(f.child("folder"), "expected the model's folder");
  s.text = f.string("text", "");
  if (f.has("ids")) s.ids = json_counts(f.at("ids"), f.child("ids"), INT32_MAX, "a token id");
  s.ablation = json_ablation(f);
  if (f.has("converted"))
    s.conversion = json_conversion(JsonFields(f.at("converted"), f.child("converted"),
                                              {"to", "kv_heads", "latent_dim", "layers"}, "", f.source()));
  return s;
}

std::string real_session_file_text(const RealSession& s) {
  // A text typed that is not UTF-8 (the window's --model-text can be) is kept with U+FFFD for its bad bytes.
  return nlohmann::ordered_json{{"real_model", real_session_json(s)}}.dump(2, ' ', false,
                                                                           json::error_handler_t::replace) +
         "\n";
}

RealSession read_real_session_file(const std::filesystem::path& path, std::int64_t budget) {
  const std::string text = read_document_file(path, kMaxScenarioFileBytes, "a Real model file", budget);
  const JsonSource source{text, ""};
  const json j =
      parse_json_document(text, RootKeys{.label = "Real model file", .allowed = {"real_model"}, .tolerated = {}});
  const JsonFields root(j, "", {"real_model"}, "Real model file", &source);
  return real_session_from_json(
      JsonFields(root.require("real_model"), "real_model", kRealSessionKeys, "Real model file", &source));
}

}  // namespace attn
