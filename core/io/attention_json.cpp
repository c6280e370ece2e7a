#include "core/io/attention_json.h"

#include "core/io/json_fields.h"

namespace attn {

using nlohmann::json;

std::string index_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::vector<std::string> read_tokens(const json& j, const std::string& path) {
  if (!j.is_array()) throw InputError(path, "expected an array of strings but found " + describe_found(j));
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) throw InputError(index_path(path, i), "expected a string but found " + describe_found(j[i]));
    tokens.push_back(j[i].get<std::string>());
  }
  return tokens;
}

// A 1-D array of numbers as one row: LayerNorm gains and biases, FFN biases. Problems name the flat index.
Matrix read_row(const json& j, const std::string& path) {
  if (!j.is_array()) throw InputError(path, "expected an array of numbers (one row) but found " + describe_found(j));
  if (!j.empty() && j[0].is_array())
    throw InputError(path, "expected a flat array of numbers (one row), not an array of rows");
  if (j.empty()) throw InputError(path, "expected at least one number but found none");
  Matrix row(1, static_cast<Eigen::Index>(j.size()));
  for (std::size_t c = 0; c < j.size(); ++c) {
    const std::string at = index_path(path, c);
    if (!j[c].is_number()) throw InputError(at, "expected a number but found " + describe_found(j[c]));
    row(0, static_cast<Eigen::Index>(c)) = j[c].get<double>();
    if (!std::isfinite(row(0, static_cast<Eigen::Index>(c))) ||
        std::abs(row(0, static_cast<Eigen::Index>(c))) > limits::kMaxAbsValue)
      throw InputError(at, "magnitude must be <= 1e12 (found " + j[c].dump() + ")");
  }
  return row;
}

Matrix read_weight(WeightId id, const json& j, const std::string& path) {
  return is_bias(id) ? read_row(j, path) : read_matrix(j, path);
}

Matrix read_matrix(const json& j, const std::string& path) {
  if (!j.is_array()) throw InputError(path, "expected an array of rows but found " + describe_found(j));
  if (j.empty()) throw InputError(path, "expected at least one row but found none");
  std::size_t cols = 0;
  for (std::size_t r = 0; r < j.size(); ++r) {
    const std::string row_path = index_path(path, r);
    if (!j[r].is_array()) throw InputError(row_path, "expected an array of numbers but found " + describe_found(j[r]));
    if (r == 0) {
      cols = j[r].size();
      if (cols == 0) throw InputError(row_path, "expected at least one number but found none");
    } else if (j[r].size() != cols) {
      throw InputError(row_path, "expected " + std::to_string(cols) + " numbers (as in row 0) but found " +
                                     std::to_string(j[r].size()));
    }
  }
  Matrix m(j.size(), cols);
  for (std::size_t r = 0; r < j.size(); ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const json& v = j[r][c];
      if (!v.is_number())
        throw InputError(index_path(index_path(path, r), c), "expected a number but found " + describe_found(v));
      m(r, c) = v.get<double>();
    }
  check_values(m, path);
  return m;
}

namespace {

// kv_heads, latent_dim and query_latent_dim belong to particular variants; elsewhere they are mistakes.
void read_variant_sizes(const JsonFields& r, AttentionConfig& a) {
  const std::string variant(to_string(a.variant));
  auto only_for = [&](const char* key, const char* owner) {
    r.only_for(key, std::string("variant ") + owner, variant);
  };
  switch (a.variant) {
    case Variant::Mha:
    case Variant::Mqa: {
      const int expected = a.variant == Variant::Mha ? a.heads : 1;
      a.kv_heads = r.integer("kv_heads", expected, 1, limits::kMaxHeads);
      if (a.kv_heads != expected)
        throw InputError(r.child("kv_heads"),
                         variant + " has " +
                             (a.variant == Variant::Mha ? "one KV head per query head, so " + std::to_string(expected)
                                                        : std::string("a single KV head, so 1")) +
                             ", but found " + std::to_string(a.kv_heads) + " (variant gqa shares KV heads in groups)");
      only_for("latent_dim", "mla");
      only_for("query_latent_dim", "mla");
      break;
    }
    case Variant::Gqa:
      r.require("kv_heads");
      a.kv_heads = r.integer("kv_heads", 1, 1, limits::kMaxHeads);
      only_for("latent_dim", "mla");
      only_for("query_latent_dim", "mla");
      break;
    case Variant::Mla:
      only_for("kv_heads", "mha, gqa and mqa");
      a.kv_heads = a.heads;
      r.require("latent_dim");
      a.latent_dim = r.integer("latent_dim", 0, 1, limits::kMaxProjectedDim);
      a.query_latent_dim = r.integer("query_latent_dim", 0, 0, limits::kMaxProjectedDim);
      break;
  }
}

// positions and what belongs to each kind: rope_base (sinusoidal, rope), max_positions (learned), rope_dim (mla with
// rope), position_offset (any). A field of another kind is a mistake worth naming. Without max_positions, learned
// positions have as many as W_P has rows (w_p_rows > 0), or the shift plus one per token of the longer side.
void read_positions(const JsonFields& r, AttentionConfig& a, int w_p_rows, int longer) {
  a.positions = r.choice("positions", Positions::None, parse_positions, positions_names());
  const std::string kind = "positions \"" + std::string(to_string(a.positions)) + "\"";
  if (a.positions == Positions::None || a.positions == Positions::Learned)
    r.only_for("rope_base", "positions \"sinusoidal\" and \"rope\"", kind);
  a.rope_base = r.number("rope_base", 10000.0);
  if (a.positions != Positions::Learned) r.only_for("max_positions", "positions \"learned\"", kind);
  if (a.positions == Positions::None) r.only_for("position_offset", "positions other than \"none\"", kind);
  a.position_offset = r.integer("position_offset", 0, 0, limits::kMaxPositionOffset);
  a.max_positions =
      r.integer("max_positions", w_p_rows > 0 ? w_p_rows : a.position_offset + longer, 1, limits::kMaxTokens);
  if (a.positions != Positions::Learned) a.max_positions = 0;
  if (!mla_with_rope(a))
    r.only_for("rope_dim", "variant mla with positions \"rope\" (the decoupled RoPE key)",
               "variant " + std::string(to_string(a.variant)) + " with " + kind);
  // Missing: mla turns the keys expanded from the latent (no decoupled key); odd: validate says why.
  a.rope_dim = r.integer("rope_dim", 0, 1, limits::kMaxHeadDim);
  if (a.positions != Positions::Rope) {
    r.only_for("rope_pairing", "positions \"rope\"", kind);
    r.only_for("rope_scaling", "positions \"rope\"", kind);
  }
  a.rope_pairing = r.choice("rope_pairing", RopePairing::Interleaved, parse_rope_pairing, rope_pairing_names());
  if (r.has("rope_scaling"))
    a.rope_scaling = read_rope_scaling(r.at("rope_scaling"), r.child("rope_scaling"), r.source());
}

}  // namespace

RopeScaling read_rope_scaling(const json& j, const std::string& path, const JsonSource* source) {
  const JsonFields r(j, path, {"type", "factor", "low_freq_factor", "high_freq_factor", "original_max_positions"},
                     "scenario", source);
  if (r.nonempty_string("type") != "llama3")
    throw InputError(r.child("type"),
                     "expected \"llama3\" (the one scaling the lab knows) but found " + r.found("type"));
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor", "original_max_positions"}) r.require(key);
  RopeScaling c;
  c.factor = r.number("factor", c.factor);
  c.low_freq_factor = r.number("low_freq_factor", c.low_freq_factor);
  c.high_freq_factor = r.number("high_freq_factor", c.high_freq_factor);
  c.original_max_positions = r.integer("original_max_positions", 1, 1, limits::kMaxPositionOffset);
  return c;  // ranges: validate's check_rope_scaling
}

namespace {

SparseConfig read_sparse(const json& j, const std::string& path, int head_dim, const JsonSource* source) {
  const JsonFields r(j, path, {"top_k", "indexer_heads", "indexer_dim"}, "scenario", source);
  r.require("top_k");
  SparseConfig c;
  c.top_k = r.integer("top_k", 1, 1, limits::kMaxTokens);
  c.indexer_heads = r.integer("indexer_heads", 1, 1, limits::kMaxHeads);
  c.indexer_dim = r.integer("indexer_dim", head_dim, 1, limits::kMaxHeadDim);
  return c;
}

}  // namespace

AttentionConfig read_attention(const json& j, const std::string& path, bool has_w_o, int w_p_rows, int longer,
                               const JsonSource* source) {
  const JsonFields r(j, path,
                     {"variant",      "heads",     "kv_heads",      "head_dim", "latent_dim",      "query_latent_dim",
                      "mask",         "window",    "custom_mask",   "scale",    "kernel",          "output_projection",
                      "positions",    "rope_base", "max_positions", "rope_dim", "position_offset", "rope_pairing",
                      "rope_scaling", "qkv_bias",  "output_bias",   "sparse"},
                     "scenario", source);
  AttentionConfig a;
  a.variant = r.choice("variant", Variant::Mha, parse_variant, variant_names());
  r.require("heads");
  a.heads = r.integer("heads", 1, 1, limits::kMaxHeads);
  r.require("head_dim");
  a.head_dim = r.integer("head_dim", 1, 1, limits::kMaxHeadDim);
  read_variant_sizes(r, a);
  a.mask = r.choice("mask", MaskKind::None, parse_mask, mask_names());
  if (a.mask == MaskKind::SlidingWindow) r.require("window");
  else if (r.has("window"))
    throw InputError(r.child("window"), "given, but " + r.child("mask") + " is not \"sliding_window\"");
  a.window = r.integer("window", 1, 1, limits::kMaxTokens);
  if (a.mask == MaskKind::Custom) a.custom_mask = read_matrix(r.require("custom_mask"), r.child("custom_mask"));
  else if (r.has("custom_mask"))
    throw InputError(r.child("custom_mask"), "given, but " + r.child("mask") + " is not \"custom\"");
  a.scale = r.boolean("scale", true);
  a.kernel = r.choice("kernel", Kernel::Softmax, parse_kernel, kernel_names());
  a.output_projection = r.boolean("output_projection", has_w_o);
  a.qkv_bias = r.boolean("qkv_bias", false);
  a.output_bias = r.boolean("output_bias", false);
  read_positions(r, a, w_p_rows, longer);
  if (r.has("sparse")) a.sparse = read_sparse(r.at("sparse"), r.child("sparse"), a.head_dim, source);
  return a;
}

}  // namespace attn
