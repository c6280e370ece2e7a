#pragma once
// The Real model view written to a file: the model folder, the class's text (or the token ids drawn at random) and
// the heads knocked out. File > Save writes it as {"real_model": {...}}; the recovery file keeps the same object.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ablation.h"
#include "core/io/json_fields.h"
#include "core/kv_conversion.h"

namespace attn {

struct RealSession {
  std::filesystem::path folder;
  std::string text;
  std::optional<std::vector<int>> ids;  // drawn at random and run as they are; `text` is then their pieces joined
  Ablation ablation;
  std::optional<KvConversion> conversion{};  // the folder's model converted in memory, as the window opened it
};

// A path as JSON: its string, or its bytes as a list of numbers where it is not UTF-8 (a folder's name may not be).
nlohmann::ordered_json path_json(const std::filesystem::path& p);
// `key` of `f` read back as path_json wrote it; empty when absent.
std::filesystem::path json_path(const JsonFields& f, const char* key);

// {"folder", "text", "ids" (only when drawn), "ablation": [[layer, head], ...], "ablation_mode", and for a converted
// model "converted": {"to": "gqa" | "mla", "kv_heads" | "latent_dim", "layers": [...]}}.
nlohmann::ordered_json real_session_json(const RealSession& s);
// The object real_session_json writes, its fields checked (InputError naming the field); the heads are checked against
// the model when the folder opens.
RealSession real_session_from_json(const JsonFields& f);
inline const std::vector<std::string_view> kRealSessionKeys = {"folder",   "text",          "ids",
                                                               "ablation", "ablation_mode", "converted"};

// The file File > Save writes: {"real_model": real_session_json(s)}, indented.
std::string real_session_file_text(const RealSession& s);
// A file of that form (at most 64 MiB); InputError naming the field.
RealSession read_real_session_file(const std::filesystem::path& path, std::int64_t budget);

}  // namespace attn
