#pragma once
// The batches file of `train --model FILE --batches FILE`: {"batches": [[[token ids], ...], ...]}, each sequence's
// ids checked against the model's vocabulary and positions, with next-token targets. Read straight from the text
// into the id lists, never into a document tree: a batch costs its ids.
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "core/model.h"
#include "core/model_gradient.h"

namespace attn {

// What holding these batches takes: each id and its target, and every list's own allocation.
std::int64_t predicted_batches_bytes(std::int64_t batches, std::int64_t sequences, std::int64_t ids);

// A first streaming pass checks every field and counts the lists; what they will hold (predicted_batches_bytes, with
// the text) is held to `budget`; a second pass fills them. Throws InputError naming the field
// ("batches[0][1][2]: must be <= 9 (found 4294967297)"), or BudgetError.
std::vector<std::vector<Sequence>> parse_batches(std::string_view text, const Model& m, std::int64_t budget);
// Reads at most kMaxModelFileBytes (a batches file may be as large as a model).
std::vector<std::vector<Sequence>> load_batches_file(const std::filesystem::path& path, const Model& m,
                                                     std::int64_t budget);

}  // namespace attn
