#pragma once
// Knocking heads out to see what they were for: head h's output o_h = weights_h v_h (N, head_dim), before the
// output projection, is replaced by zeros or by its mean over the positions (every row the same); the output
// projection and its bias apply as before.
#include <compare>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.h"

namespace attn {

enum class AblationMode {
  Zero,  // o_h = 0
  Mean,  // every row of o_h = the mean of its rows
};

std::optional<AblationMode> parse_ablation_mode(std::string_view s);
// The same for an option or field named `field`: InputError "--ablate-mode: must be zero | mean (found \"half\")".
AblationMode parse_ablation_mode(std::string_view s, const std::string& field);
std::string_view to_string(AblationMode m);
std::string_view ablation_mode_names();  // "zero | mean"

// One query head of one layer, 0-based; "5.1" in files and on the command line.
struct HeadRef {
  int layer = 0, head = 0;
  auto operator<=>(const HeadRef&) const = default;
};
std::string head_name(HeadRef h);  // "5.1"

// The heads a forward pass knocks out, each once, in order.
struct Ablation {
  std::vector<HeadRef> heads{};
  AblationMode mode = AblationMode::Zero;
  bool empty() const { return heads.empty(); }
  bool ablates(HeadRef h) const;
  std::vector<int> heads_of(int layer) const;  // the layer's ablated heads, in order
  auto operator<=>(const Ablation&) const = default;
};

// A list as typed: "5.1,5.5,6" (layer.head, or a layer alone for all its heads). `heads_in(layer)` says how many
// query heads a layer has, or -1 past the model's layers. Throws InputError naming `field` and the item ("5.12:
// layer 5 has 12 heads (0-11)"); an empty list is refused.
Ablation parse_ablation(std::string_view list, const std::function<int(int)>& heads_in, const std::string& field);
// The list as parse_ablation reads it, every head named ("5.1,5.5").
std::string ablation_list(const Ablation& a);

// Replaces the columns [h*head_dim, (h+1)*head_dim) of `outputs` (N, H*head_dim) for every h in `heads`.
void ablate_heads(Matrix& outputs, int head_dim, const std::vector<int>& heads, AblationMode mode);

}  // namespace attn
