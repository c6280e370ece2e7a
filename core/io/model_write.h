#pragma once
// Writes a model back to its file format, readable by people: one matrix row per line, keys in the order
// docs/FORMATS.md gives them, only the weights the model holds. What is written loads back to the same model.
#include <filesystem>
#include <string>

#include "core/model.h"

namespace attn {

std::string model_to_text(const Model& m);

// Atomic (a temporary file, then a rename); throws InputError (field "") naming what failed.
void save_model_file(const Model& m, const std::filesystem::path& path);

}  // namespace attn
