#pragma once
// The batches file of `train --model FILE --batches FILE`: {"batches": [[[token ids], ...], ...]}, each sequence's
// ids checked against the model's vocabulary and positions, with next-token targets.
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.h"
#include "core/model_gradient.h"

namespace attn {

// Throws InputError naming the field ("batches[0][1][2]: must be <= 9 (found 4294967297)").
std::vector<std::vector<Sequence>> batches_from_json(const nlohmann::json& j, const Model& m);
// Reads at most kMaxModelFileBytes (a batches file may be as large as a model).
std::vector<std::vector<Sequence>> load_batches_file(const std::filesystem::path& path, const Model& m);

}  // namespace attn
