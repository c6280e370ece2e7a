#include "core/io/text_writer.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/validate.h"

namespace attn {

using nlohmann::ordered_json;

std::string number_text(double x) {
  // The size first: converting a double beyond long long's range is undefined. (-0 is written as 0.)
  if (std::abs(x) < 1e15 && x == std::trunc(x)) return std::to_string(static_cast<long long>(x));
  return ordered_json(x).dump();
}

std::string matrix_text(const Matrix& m, const std::string& indent) {
  std::string out = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += (r ? ",\n" : "\n") + indent + "  [";
    for (Eigen::Index c = 0; c < m.cols(); ++c) out += (c ? ", " : "") + number_text(m(r, c));
    out += "]";
  }
  return out + "\n" + indent + "]";
}

std::string row_text(const Matrix& row) {
  std::string out = "[";
  for (Eigen::Index c = 0; c < row.cols(); ++c) out += (c ? ", " : "") + number_text(row(0, c));
  return out + "]";
}

std::string weight_text(WeightId id, const Matrix& m, const std::string& indent) {
  return is_bias(id) ? row_text(m) : matrix_text(m, indent);
}

std::string quoted(const std::string& s) { return ordered_json(s).dump(); }

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

void ObjectText::add(const std::string& key, const std::string& value) {
  out_ += (out_.empty() ? "" : ",\n") + indent_ + "  " + quoted(key) + ": " + value;
}

void add_rope_settings(ObjectText& o, RopePairing pairing, const std::optional<RopeScaling>& scaling) {
  if (pairing != RopePairing::Interleaved) o.add("rope_pairing", quoted(std::string(to_string(pairing))));
  if (!scaling) return;
  o.add("rope_scaling", "{\"type\": \"llama3\", \"factor\": " + number_text(scaling->factor) +
                            ", \"low_freq_factor\": " + number_text(scaling->low_freq_factor) +
                            ", \"high_freq_factor\": " + number_text(scaling->high_freq_factor) +
                            ", \"original_max_positions\": " + std::to_string(scaling->original_max_positions) + "}");
}

namespace {

// A model layer's positions are the model's: it writes only mla's rope_dim.
void add_positions(ObjectText& attention, const AttentionConfig& a, bool model_layer) {
  if (a.positions == Positions::None) return;
  if (!model_layer) {
    attention.add("positions", quoted(std::string(to_string(a.positions))));
    if (a.positions != Positions::Learned) attention.add("rope_base", number_text(a.rope_base));
    if (a.positions == Positions::Learned) attention.add("max_positions", std::to_string(a.max_positions));
  }
  if (decoupled_rope(a)) attention.add("rope_dim", std::to_string(a.rope_dim));
  if (!model_layer && a.positions == Positions::Rope) add_rope_settings(attention, a.rope_pairing, a.rope_scaling);
  if (!model_layer && a.position_offset != 0) attention.add("position_offset", std::to_string(a.position_offset));
}

}  // namespace

std::string attention_text(const AttentionConfig& a, const std::string& indent, bool model_layer) {
  ObjectText attention(indent);
  attention.add("variant", quoted(std::string(to_string(a.variant))));
  attention.add("heads", std::to_string(a.heads));
  if (a.variant == Variant::Gqa) attention.add("kv_heads", std::to_string(a.kv_heads));
  attention.add("head_dim", std::to_string(a.head_dim));
  if (a.variant == Variant::Mla) {
    attention.add("latent_dim", std::to_string(a.latent_dim));
    if (a.query_latent_dim > 0) attention.add("query_latent_dim", std::to_string(a.query_latent_dim));
  }
  attention.add("mask", quoted(std::string(to_string(a.mask))));
  if (a.mask == MaskKind::SlidingWindow) attention.add("window", std::to_string(a.window));
  if (a.mask == MaskKind::Custom) attention.add("custom_mask", matrix_text(a.custom_mask, indent + "  "));
  attention.add("scale", a.scale ? "true" : "false");
  attention.add("kernel", quoted(std::string(to_string(a.kernel))));
  if (!model_layer) attention.add("output_projection", a.output_projection ? "true" : "false");
  if (a.qkv_bias) attention.add("qkv_bias", "true");
  if (a.output_bias) attention.add("output_bias", "true");
  add_positions(attention, a, model_layer);
  if (a.sparse) {
    ObjectText sparse(indent + "  ");
    sparse.add("top_k", std::to_string(a.sparse->top_k));
    sparse.add("indexer_heads", std::to_string(a.sparse->indexer_heads));
    sparse.add("indexer_dim", std::to_string(a.sparse->indexer_dim));
    attention.add("sparse", sparse.str());
  }
  return attention.str();
}

}  // namespace attn
