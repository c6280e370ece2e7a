#pragma once
// The dedicated loader for scenario files (assets/scenarios/*.json). Every problem is a InputError
// naming the field (`weights.W_Q`, `embeddings[2][1]`) with what was expected and what was found.
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/scenario.h"
#include "core/validate.h"

namespace attn {

// Largest scenario file read; anything bigger is refused before it is read.
inline constexpr std::uintmax_t kMaxScenarioFileBytes = 64u << 20;

// Parses and validates; throws InputError.
Scenario parse_scenario(std::string_view text);
Scenario scenario_from_json(const nlohmann::json& j);

// Reads, parses and validates a file; throws InputError (field "" for problems with the file itself).
Scenario load_scenario_file(const std::filesystem::path& path);

}  // namespace attn
