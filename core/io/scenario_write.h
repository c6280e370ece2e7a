#pragma once
// Writes a scenario back to its file format, readable by people: one matrix row per line, keys in the
// order the documentation gives them. What is written loads back to the same scenario.
#include <filesystem>
#include <string>

#include "core/scenario.h"

namespace attn {

std::string scenario_to_text(const Scenario& s);

// Writes to a temporary file beside `path`, then renames it over `path`, so a failure never leaves a
// half-written file. Throws InputError (field "") naming what failed.
void save_scenario_file(const Scenario& s, const std::filesystem::path& path);

}  // namespace attn
