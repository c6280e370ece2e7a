#include "ui/logic/model_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "core/text_format.h"
#include "ui/logic/cell_format.h"

namespace attn::ui {
namespace {

std::string norm_text(const Model& m) {
  const bool rms = m.norm_function == NormFunction::RmsNorm;
  switch (m.norm) {
    case Norm::Pre: return rms ? "Pre-RMSNorm" : "Pre-LN";
    case Norm::Post: return rms ? "Post-RMSNorm" : "Post-LN";
    case Norm::None: return "no LayerNorm";
  }
  return "";
}

std::string ffn_text(const FfnConfig& f) {
  switch (f.kind) {
    case FfnKind::None: return "attention only";
    case FfnKind::Relu: return "ReLU feed-forward (d_ff " + std::to_string(f.d_ff) + ")";
    case FfnKind::Gelu: return "GELU feed-forward (d_ff " + std::to_string(f.d_ff) + ")";
    case FfnKind::Swiglu: return "SwiGLU feed-forward (d_ff " + std::to_string(f.d_ff) + ")";
    case FfnKind::GeluTanh: return "GELU (tanh) feed-forward (d_ff " + std::to_string(f.d_ff) + ")";
  }
  return "";
}

// RoPE says its pairing: the same rotation, on (2i, 2i+1) or on (i, i + d/2).
std::string positions_text(const Model& m) {
  if (m.positions == Positions::None) return "no positions";
  if (m.positions != Positions::Rope) return std::string(to_string(m.positions)) + " positions";
  return std::string("rope positions, pairs ") +
         (m.rope_pairing == RopePairing::RotateHalf ? "(i, i + d/2)" : "(2i, 2i+1)") +
         (m.rope_scaling ? ", llama3 scaling" : "");
}

}  // namespace

// The layers' attention when it is not plain multi-head: "MLA (latent 32)", "GQA (2 KV heads)", "MQA", or
// "attention variants mixed" when the layers differ; empty for mha.
std::string variant_text(const Model& m) {
  const AttentionConfig& a = m.layers.front().attention;
  for (const ModelLayer& l : m.layers)
    if (l.attention.variant != a.variant || l.attention.kv_heads != a.kv_heads ||
        l.attention.latent_dim != a.latent_dim)
      return "attention variants mixed";
  switch (a.variant) {
    case Variant::Gqa: return "GQA (" + plural(a.kv_heads, "KV head") + ")";
    case Variant::Mqa: return "MQA";
    case Variant::Mla: return "MLA (latent " + std::to_string(a.latent_dim) + ")";
    case Variant::Mha: break;
  }
  return "";
}

std::string model_summary(const Model& m, std::int64_t parameters) {
  const std::string dot = " \u00B7 ", variant = m.layers.empty() ? "" : variant_text(m);
  return plural(static_cast<std::int64_t>(m.layers.size()), "layer") + dot + "d_model " + std::to_string(m.d_model) +
         (variant.empty() ? "" : dot + variant) + dot + norm_text(m) + dot + ffn_text(m.ffn) + dot + positions_text(m) +
         dot + thousands(static_cast<std::uint64_t>(parameters)) + " parameters";
}

std::string norm_symbol(const Model& m) { return m.norm_function == NormFunction::RmsNorm ? "RMS" : "LN"; }

std::vector<std::vector<StreamPart>> layer_parts(const Model& m, const LayerTrace& t) {
  std::vector<std::vector<StreamPart>> rows;
  const std::string n1 = norm_symbol(m) + "1", n2 = norm_symbol(m) + "2";
  switch (m.norm) {
    case Norm::Pre:
      // The sums' short titles name the norm without its argument: "x + Attn(RMS1)" fits where "(x))" would not.
      rows.push_back({{n1 + "(x)", &t.attention.x, false},
                      {"Attn(" + n1 + "(x))", &t.attention.output, true},
                      {"x + Attn(" + n1 + "(x))", &t.after_attention, false, "x + Attn(" + n1 + ")"}});
      if (m.ffn.kind != FfnKind::None)
        rows.push_back({{n2 + "(x)", &t.ffn_in, false},
                        {"FFN(" + n2 + "(x))", &t.ffn_out, false},
                        {"x + FFN(" + n2 + "(x))", &t.residual_out, false, "x + FFN(" + n2 + ")"}});
      break;
    case Norm::Post:
      rows.push_back({{"Attn(x)", &t.attention.output, true}, {n1 + "(x + Attn(x))", &t.after_attention, false}});
      if (m.ffn.kind != FfnKind::None)
        rows.push_back({{"FFN(x)", &t.ffn_out, false}, {n2 + "(x + FFN(x))", &t.residual_out, false}});
      break;
    case Norm::None:
      rows.push_back({{"Attn(x)", &t.attention.output, true}, {"x + Attn(x)", &t.after_attention, false}});
      if (m.ffn.kind != FfnKind::None)
        rows.push_back({{"FFN(x)", &t.ffn_out, false}, {"x + FFN(x)", &t.residual_out, false}});
      break;
  }
  return rows;
}

std::string head_weight_text(int layer, int head, const std::vector<std::string>& tokens, int row, int col,
                             double weight) {
  const auto token = [&](int i) { return "\"" + shorten_label(tokens[static_cast<std::size_t>(i)]) + "\""; };
  return "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": " + token(row) + " (query " +
         std::to_string(row) + ") looks at " + token(col) + " (key " + std::to_string(col) + ") with weight " +
         probability_text(weight);
}

std::string head_cell_text(int layer, int head, const std::vector<std::string>& tokens, const Matrix& overview, int row,
                           int col) {
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (overview.rows() == n && overview.cols() == n)
    return head_weight_text(layer, head, tokens, row, col, overview(row, col));
  // The block rows [i n / cells, (i + 1) n / cells), as the overview's block means are taken.
  const auto span = [n](int i, Eigen::Index cells, const char* what) {
    const std::int64_t first = std::int64_t(i) * n / cells, last = std::int64_t(i + 1) * n / cells - 1;
    return std::string(what) + " " + std::to_string(first) + "\u2013" + std::to_string(last);
  };
  return "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": " +
         span(row, overview.rows(), "queries") + " look at " + span(col, overview.cols(), "keys") +
         " with mean weight " + probability_text(overview(row, col));
}

std::string kv_group_text(const AttentionConfig& a, int h) {
  const int groups = kv_head_count(a);
  if (a.variant == Variant::Mla || groups >= a.heads) return "";
  const int g = kv_head_for(a, h), per = a.heads / groups;
  const std::string heads = groups == 1
                                ? "all " + std::to_string(a.heads) + " heads"
                                : "heads " + std::to_string(g * per) + "\u2013" + std::to_string(g * per + per - 1);
  return "reads key/value head " + std::to_string(g) + " with " + heads;
}

std::vector<Prediction> top_predictions(const ModelTrace& t, const std::vector<std::string>& vocab, int row, int k) {
  std::vector<int> order(vocab.size());
  std::iota(order.begin(), order.end(), 0);
  const auto p = [&](int v) { return t.probabilities(row, v); };
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(std::max(k, 0)), order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](int a, int b) { return p(a) > p(b) || (p(a) == p(b) && a < b); });
  std::vector<Prediction> top;
  for (std::size_t i = 0; i < n; ++i) top.push_back({vocab[static_cast<std::size_t>(order[i])], p(order[i])});
  return top;
}

std::optional<ModelPart> parse_model_part(std::string_view text) {
  if (text == "input") return ModelPart{ModelPart::Place::Input};
  if (text == "output") return ModelPart{ModelPart::Place::Output};
  constexpr std::string_view kLayer = "layer ";
  if (!text.starts_with(kLayer)) return std::nullopt;
  text.remove_prefix(kLayer.size());
  ModelPart p{ModelPart::Place::Layer};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p.layer);
  if (ec != std::errc() || end == text.data() || p.layer < 0 || !std::isdigit(static_cast<unsigned char>(text[0])))
    return std::nullopt;
  const std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (rest == " attention") p.sublayer = 0;
  else if (rest == " ffn") p.sublayer = 1;
  else if (!rest.empty()) return std::nullopt;
  return p;
}

bool outlines(std::span<const ModelPart> outline, const ModelPart& row) {
  return std::any_of(outline.begin(), outline.end(), [&](const ModelPart& o) {
    if (o.place != row.place) return false;
    return o.place != ModelPart::Place::Layer ||
           (o.layer == row.layer && (o.sublayer < 0 || o.sublayer == row.sublayer));
  });
}

RowLabelFit fit_row_labels(int rows, float budget, float line, float min_line) {
  // Whole quarter pixels, as the heatmap snaps its cells: the labels stay level with their rows.
  const auto snap = [](float h) { return std::floor(h * 4.0f) / 4.0f; };
  const float share = budget / static_cast<float>(std::max(rows, 1));
  if (share >= line) return {snap(line), 1.0f, 1};
  if (share >= min_line || rows <= kAllLabelledRows) {
    const float h = snap(std::max(share, min_line));
    return {h, h / line, 1};
  }
  const float h = snap(std::max(share, 3.0f));
  return {h, min_line / line, static_cast<int>(std::ceil(min_line / h - 0.01f))};
}

int column_label_every(float col_w, float label_w) {
  for (int k = 1;; k *= 10)
    for (const int m : {1, 2, 5})
      if (static_cast<float>(k * m) * col_w >= label_w || k * m >= (1 << 24)) return k * m;
}

float column_label_scale(float col_w, float widest_body, float gap, float small) {
  if (widest_body <= 0) return 1.0f;
  return std::clamp((col_w - gap) / widest_body, small, 1.0f);
}

float fold_height(std::span<const float> breaks, float scroll, float avail) {
  if (breaks.empty() || *std::max_element(breaks.begin(), breaks.end()) - scroll <= avail) return avail;
  float best = 0;
  for (const float b : breaks)
    if (b - scroll <= avail) best = std::max(best, b - scroll);
  return best >= avail / 2 ? best : avail;
}

HeadGridFit fit_head_grid(int layers, int heads, float width, float height, float caption_h, float gap) {
  layers = std::max(layers, 1);
  heads = std::max(heads, 1);
  HeadGridFit best{1, 0};
  for (int m = 1; m <= layers; ++m) {
    const float across = static_cast<float>(m * heads), rows = static_cast<float>((layers + m - 1) / m);
    const float by_width = (width - gap * (across - 1)) / across;
    const float by_height = (height - rows * caption_h) / rows;
    const float cell = std::floor(std::clamp(std::min(by_width, by_height), kMinHeadCell, kMaxHeadCell));
    if (cell > best.cell) best = {m, cell};
  }
  return best;
}

}  // namespace attn::ui
