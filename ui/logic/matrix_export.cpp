#include "ui/logic/matrix_export.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace attn::ui {
namespace {

std::string label(const std::vector<std::string>* labels, Eigen::Index i) {
  return labels && i < static_cast<Eigen::Index>(labels->size()) ? (*labels)[static_cast<std::size_t>(i)]
                                                                 : std::to_string(i);
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(double x) {
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (std::isnan(x)) return "nan";
  return round_trip_number(x);
}

}  // namespace

std::string matrix_csv(const Matrix& m, const std::vector<std::string>* rows, const std::vector<std::string>* cols) {
  std::string out;
  for (Eigen::Index c = 0; c < m.cols(); ++c) out += "," + field(label(cols, c));
  out += "\n";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += field(label(rows, r));
    for (Eigen::Index c = 0; c < m.cols(); ++c) out += "," + number(m(r, c));
    out += "\n";
  }
  return out;
}

std::string unique_file_name(const std::string& folder, const std::string& name, const std::string& extension) {
  std::string base;
  for (char c : name) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (base.empty()) base = "picture";
  std::filesystem::path p = std::filesystem::path(folder) / (base + "." + extension);
  for (int i = 2; std::filesystem::exists(p); ++i)
    p = std::filesystem::path(folder) / (base + "-" + std::to_string(i) + "." + extension);
  return p.string();
}

}  // namespace attn::ui
