#include "app/cli/assets.h"

#include <cstdlib>

namespace attn::cli {

std::filesystem::path assets_dir() {
  if (const char* assets = std::getenv("ATTENTION_LAB_ASSETS"); assets && *assets) return assets;
  return ATTN_ASSETS_DIR;
}

std::filesystem::path default_scenario() { return assets_dir() / "scenarios" / "the_cat_sat.json"; }

}  // namespace attn::cli
