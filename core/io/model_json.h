#pragma once
// The loader for model files (assets/models/*.json): a vocabulary, the model's shape and positions, and its
// layers, each an attention block as scenarios write it plus the layer's LayerNorm and feed-forward weights.
// Every problem is an InputError naming the field ("layers[1].weights.W_1[3]") with what was expected and
// what was found.
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/memory_budget.h"
#include "core/model.h"

namespace attn {

inline constexpr std::uintmax_t kMaxModelFileBytes = 256u << 20;

// The keys a model file's root object may hold.
const RootKeys& model_root_keys();

// Whether a parsed document is a model rather than a scenario (it has "layers").
bool is_model_json(const nlohmann::json& j);

// Parses and checks (check_model); throws InputError.
// With the source j was parsed from, a number in a message is quoted as written.
Model model_from_json(const nlohmann::json& j, const JsonSource* source = nullptr);
Model parse_model(std::string_view text);
// Its size and what reading it holds are checked against kMaxModelFileBytes and `budget` before it is read.
Model load_model_file(const std::filesystem::path& path, std::int64_t budget = limits::kDefaultMemoryBudget);

}  // namespace attn
