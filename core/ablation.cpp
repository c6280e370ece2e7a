#include "core/ablation.h"

#include <algorithm>
#include <charconv>

#include "core/name_table.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr NameTable<AblationMode, 2> kModes{{{AblationMode::Zero, "zero"}, {AblationMode::Mean, "mean"}}};

bool blank(char c) { return c == ' ' || c == '\t'; }
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// A whole number of at most 9 digits, or nullopt.
std::optional<int> index_number(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::string range_of(int count) { return count > 0 ? " (0-" + std::to_string(count - 1) + ")" : ""; }

// One item of the list, its heads added to `heads`.
void add_item(std::string_view item, const std::function<int(int)>& heads_in, const std::string& field,
              std::vector<HeadRef>& heads) {
  const std::size_t dot = item.find('.');
  const std::optional<int> layer = index_number(item.substr(0, dot));
  const std::optional<int> head =
      dot == std::string_view::npos ? std::optional<int>(-1) : index_number(item.substr(dot + 1));
  const std::string quoted = "\"" + shorten_label(escaped_text(item), 40) + "\"";
  if (!layer || !head)
    throw InputError(field, quoted + " is not a head (write layer.head, 0-based, like 5.1, or a layer alone like 5)");
  const int count = heads_in(*layer);
  if (count < 0) {
    int layers = 0;
    while (heads_in(layers) >= 0) ++layers;
    throw InputError(field, quoted + ": the model has " + plural(layers, "layer") + range_of(layers));
  }
  if (*head >= count)
    throw InputError(field,
                     quoted + ": layer " + std::to_string(*layer) + " has " + plural(count, "head") + range_of(count));
  if (*head >= 0) heads.push_back({*layer, *head});
  else
    for (int h = 0; h < count; ++h) heads.push_back({*layer, h});
}

}  // namespace

std::optional<AblationMode> parse_ablation_mode(std::string_view s) { return parse_name(kModes, s); }

AblationMode parse_ablation_mode(std::string_view s, const std::string& field) {
  const std::optional<AblationMode> mode = parse_ablation_mode(s);
  if (!mode)
    throw InputError(field, "must be " + std::string(ablation_mode_names()) + " (found \"" + escaped_text(s) + "\")");
  return *mode;
}
std::string_view to_string(AblationMode m) { return name_of(kModes, m); }
std::string_view ablation_mode_names() { return "zero | mean"; }

std::string head_name(HeadRef h) { return std::to_string(h.layer) + "." + std::to_string(h.head); }

bool Ablation::ablates(HeadRef h) const { return std::binary_search(heads.begin(), heads.end(), h); }

std::vector<int> Ablation::heads_of(int layer) const {
  std::vector<int> out;
  for (const HeadRef& h : heads)
    if (h.layer == layer) out.push_back(h.head);
  return out;
}

Ablation parse_ablation(std::string_view list, const std::function<int(int)>& heads_in, const std::string& field) {
  Ablation a;
  if (trimmed(list).empty()) throw InputError(field, "empty: name the heads to knock out (layer.head, like 5.1)");
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    add_item(trimmed(list.substr(start, comma - start)), heads_in, field, a.heads);
    start = comma + 1;
  }
  std::sort(a.heads.begin(), a.heads.end());
  a.heads.erase(std::unique(a.heads.begin(), a.heads.end()), a.heads.end());
  return a;
}

std::string ablation_list(const Ablation& a) {
  std::string out;
  for (const HeadRef& h : a.heads) out += (out.empty() ? "" : ",") + head_name(h);
  return out;
}

void ablate_heads(Matrix& outputs, int head_dim, const std::vector<int>& heads, AblationMode mode) {
  for (const int h : heads) {
    auto block = outputs.middleCols(static_cast<Eigen::Index>(h) * head_dim, head_dim);
    if (mode == AblationMode::Zero || block.rows() == 0) block.setZero();
    else block.rowwise() = block.colwise().mean().eval();
  }
}

}  // namespace attn
