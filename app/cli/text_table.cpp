#include "app/cli/text_table.h"

#include <algorithm>

namespace attn::cli {

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<std::size_t>& right_aligned, const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool right = std::find(right_aligned.begin(), right_aligned.end(), c) != right_aligned.end();
      line += (c == 0 ? "" : "  ") + (right ? pad + row[c] : row[c] + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing spaces after a short last cell
    out << line << '\n';
  }
}

}  // namespace attn::cli
