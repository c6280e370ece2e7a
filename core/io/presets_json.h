#pragma once
// The loader for model presets (assets/presets/models.json): the attention shapes of published models
// for `attention-lab kv`. Same conventions as the scenario loader: every problem is a InputError
// naming the field (`models[3].kv_heads`), unknown and repeated keys are errors, and each shape passes
// validate_shape, the check a shape typed on the command line gets too.
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory.h"

namespace attn {

struct JsonSource;  // core/io/json_fields.h

inline constexpr std::uintmax_t kMaxPresetsFileBytes = 1u << 20;

// Throws InputError. The order of the file is kept.
std::vector<ModelShape> parse_presets(std::string_view text);
// With the source j was parsed from, a number in a message is quoted as written.
std::vector<ModelShape> presets_from_json(const nlohmann::json& j, const JsonSource* source = nullptr);
// Field "" for problems with the file itself (missing, too large, not JSON).
std::vector<ModelShape> load_presets_file(const std::filesystem::path& path);

// One entry in the file's own form (fields that do not apply are left out), for --json output.
nlohmann::json shape_to_json(const ModelShape& m);

}  // namespace attn
