#pragma once
// The dedicated loader for scenario files (assets/scenarios/*.json). Every problem is a InputError
// naming the field (`weights.W_Q`, `embeddings[2][1]`) with what was expected and what was found.
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/memory_budget.h"
#include "core/scenario.h"
#include "core/validate.h"

namespace attn {

// Largest scenario file read; anything bigger is refused before it is read.
inline constexpr std::uintmax_t kMaxScenarioFileBytes = 64u << 20;

// The keys a scenario file's root object may hold.
const RootKeys& scenario_root_keys();

// Parses and validates; throws InputError.
Scenario parse_scenario(std::string_view text);
// With the source j was parsed from, a number in a message is quoted as written.
Scenario scenario_from_json(const nlohmann::json& j, const JsonSource* source = nullptr);

// Reads, parses and validates a file; throws InputError (field "" for problems with the file itself). Its size and
// what reading it holds are checked against kMaxScenarioFileBytes and `budget` before it is read.
Scenario load_scenario_file(const std::filesystem::path& path, std::int64_t budget = limits::kDefaultMemoryBudget);

// A scenario, a model file (one whose root has "layers") or a Real model file ("real_model"), told by a streaming pass that keeps nothing; its size is
// checked against its kind's limit, and what reading it holds against `budget`, before it is read. Throws
// InputError (a file of only whitespace says so).
enum class DocumentKind { Scenario, Model, RealModel };  // RealModel: {"real_model": ...} (core/io/real_session.h)
DocumentKind document_file_kind(const std::filesystem::path& path, std::int64_t budget);

}  // namespace attn
