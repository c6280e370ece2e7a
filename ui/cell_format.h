#pragma once
// Numbers inside heatmap cells: as many decimals as the cell has room for, never more than 4,
// so a 3x3 matrix shows 0.7427 and a crowded one 0.74; -inf for hidden scores.
#include <string>

namespace attn::ui {

// The shortest faithful text of x within max_chars characters: fixed-point with up to 4 decimals,
// integers without decimals, then without the leading zero ("-.04"), then compact scientific notation
// ("8e-4", "1.2e5"). "" if nothing fits.
std::string format_cell(double x, int max_chars);

// Decimals x needs to be written exactly (0.9 -> 1, 0.25 -> 2), 0 for integers, 4 at most.
int needed_decimals(double x);
// x with exactly `decimals` decimals; integers without any; -inf, inf, nan as words; never "-0.0".
std::string format_fixed(double x, int decimals);

}  // namespace attn::ui
