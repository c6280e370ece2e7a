#pragma once
// Plain-text tables for the terminal: columns padded to their widest cell, two spaces apart.
#include <ostream>
#include <string>
#include <vector>

namespace attn::cli {

// rows[0] is the header. Columns listed in right_aligned (numbers) are padded on the left.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<std::size_t>& right_aligned, const std::string& indent = "");

}  // namespace attn::cli
