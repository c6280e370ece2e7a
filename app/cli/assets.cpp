#include "app/cli/assets.h"

#include <cstdlib>

namespace attn::cli {

std::filesystem::path assets_dir() {
  if (const char* assets = std::getenv("ATTENTION_LAB_ASSETS"); assets && *assets) return assets;
  return ATTN_ASSETS_DIR;
}

std::filesystem::path default_scenario() { return assets_dir() / "scenarios" / "the_cat_sat.json"; }
std::filesystem::path default_model() { return assets_dir() / "models" / "tiny.json"; }
std::filesystem::path default_text() { return assets_dir() / "texts" / "sonnets.txt"; }

}  // namespace attn::cli
