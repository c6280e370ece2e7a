#pragma once
// The names an enum takes in files and on the command line, one table per enum: name_of and parse_name
// read it both ways.
#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace attn {

template <typename E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <typename Table, typename E>
std::string_view name_of(const Table& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <typename Table>
auto parse_name(const Table& table, std::string_view s) -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [e, name] : table)
    if (name == s) return e;
  return std::nullopt;
}

}  // namespace attn
