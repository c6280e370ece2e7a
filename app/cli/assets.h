#pragma once
// Where the shipped scenarios and presets are: $ATTENTION_LAB_ASSETS when set, else the source tree's
// assets/ folder the build was configured from.
#include <filesystem>

namespace attn::cli {

std::filesystem::path assets_dir();
std::filesystem::path default_scenario();  // assets/scenarios/the_cat_sat.json
std::filesystem::path default_model();     // assets/models/tiny.json (the window's Model view)
std::filesystem::path default_text();      // assets/texts/sonnets.txt (train --task text)

}  // namespace attn::cli
