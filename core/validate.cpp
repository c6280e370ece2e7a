#include "core/validate.h"

#include "core/text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attn {
namespace {

void check_labels(const std::vector<std::string>& tokens, const std::string& field) {
  for (std::size_t i = 0; i < tokens.size(); ++i) check_label(tokens[i], field + "[" + std::to_string(i) + "]");
}

void check_tokens(const TokenRows& side, const std::string& prefix, int d_model) {
  const int n = static_cast<int>(side.tokens.size());
  if (n == 0) throw InputError(prefix + "tokens", "must list at least one token");
  check_range(n, 1, limits::kMaxTokens, prefix + "tokens");
  check_labels(side.tokens, prefix + "tokens");
  if (d_model < 0) {  // the query side defines d_model
    if (side.embeddings.rows() != n)
      throw InputError(prefix + "embeddings", "expected " + plural(n, "row") + " (one per token) but found " +
                                                  std::to_string(side.embeddings.rows()));
    check_range(static_cast<int>(side.embeddings.cols()), 1, limits::kMaxModelDim,
                prefix + "embeddings columns (d_model)");
  } else {
    check_shape(side.embeddings, prefix + "embeddings", n, "one per token", d_model, "d_model, as in embeddings");
  }
  check_values(side.embeddings, prefix + "embeddings");
}

}  // namespace

void check_rope_scaling(const RopeScaling& c, const std::string& at) {
  if (!(c.factor >= 1.0 && c.factor <= limits::kMaxAbsValue))
    throw InputError(at + "factor", "expected a number in [1, 1e12] but found " + general_number(c.factor));
  if (!(c.low_freq_factor > 0.0 && c.low_freq_factor <= limits::kMaxAbsValue))
    throw InputError(at + "low_freq_factor",
                     "expected a number in (0, 1e12] but found " + general_number(c.low_freq_factor));
  if (!(c.high_freq_factor > c.low_freq_factor && c.high_freq_factor <= limits::kMaxAbsValue))
    throw InputError(at + "high_freq_factor", "must be greater than low_freq_factor (" +
                                                  general_number(c.low_freq_factor) + ") but found " +
                                                  general_number(c.high_freq_factor));
  check_range(c.original_max_positions, 1, limits::kMaxPositionOffset, at + "original_max_positions");
}

namespace {

void check_positions(const AttentionConfig& a) {
  if (a.positions != Positions::Rope) {
    const std::string found = " (found positions \"" + std::string(to_string(a.positions)) + "\")";
    if (a.rope_pairing != RopePairing::Interleaved)
      throw InputError("attention.rope_pairing", "only with positions \"rope\"" + found);
    if (a.rope_scaling) throw InputError("attention.rope_scaling", "only with positions \"rope\"" + found);
  }
  if (a.positions == Positions::None) return;
  if (!(a.rope_base >= 1.0 && a.rope_base <= limits::kMaxAbsValue))  // also refuses NaN
    throw InputError("attention.rope_base",
                     "expected a number in [1, 1e12] but found " +
                         general_number_beside(a.rope_base, a.rope_base < 1.0 ? 1.0 : limits::kMaxAbsValue));
  check_range(a.position_offset, 0, limits::kMaxPositionOffset, "attention.position_offset");
  if (a.positions == Positions::Learned && a.position_offset >= limits::kMaxTokens)
    throw InputError("attention.position_offset", "must be <= " + std::to_string(limits::kMaxTokens - 1) +
                                                      " with learned positions (W_P has at most " +
                                                      std::to_string(limits::kMaxTokens) + " rows) but found " +
                                                      std::to_string(a.position_offset));
  if (a.positions == Positions::Learned) check_range(a.max_positions, 1, limits::kMaxTokens, "attention.max_positions");
  if (a.positions != Positions::Rope) return;
  if (a.rope_scaling) check_rope_scaling(*a.rope_scaling, "attention.rope_scaling.");
  if (!decoupled_rope(a)) {
    if (a.head_dim % 2 != 0)
      throw InputError("attention.head_dim", "rope turns pairs of dimensions, so it needs an even head_dim (found " +
                                                 std::to_string(a.head_dim) + ")");
    return;
  }
  // mla turns a separate decoupled part of each query and key; the latent is never turned.
  check_range(a.rope_dim, 2, limits::kMaxHeadDim, "attention.rope_dim");
  if (a.rope_dim % 2 != 0)
    throw InputError("attention.rope_dim",
                     "rope turns pairs of dimensions, so it must be even (found " + std::to_string(a.rope_dim) + ")");
  const int hr = a.heads * a.rope_dim;
  if (hr > limits::kMaxProjectedDim)
    throw InputError("attention", "heads x rope_dim must be <= " + std::to_string(limits::kMaxProjectedDim) +
                                      " (found " + std::to_string(a.heads) + " x " + std::to_string(a.rope_dim) +
                                      " = " + std::to_string(hr) + ")");
}

void check_sparse(const SparseConfig& c) {
  check_range(c.top_k, 1, limits::kMaxTokens, "attention.sparse.top_k");
  check_range(c.indexer_heads, 1, limits::kMaxHeads, "attention.sparse.indexer_heads");
  check_range(c.indexer_dim, 1, limits::kMaxHeadDim, "attention.sparse.indexer_dim");
  const int hd = c.indexer_heads * c.indexer_dim;
  if (hd > limits::kMaxProjectedDim)
    throw InputError("attention.sparse",
                     "indexer_heads x indexer_dim must be <= " + std::to_string(limits::kMaxProjectedDim) + " (found " +
                         std::to_string(c.indexer_heads) + " x " + std::to_string(c.indexer_dim) + " = " +
                         std::to_string(hd) + ")");
}

}  // namespace

void check_learned_shift(const Scenario& s, const std::string& field) {
  const AttentionConfig& a = s.attention;
  if (a.positions != Positions::Learned || a.max_positions <= limits::kMaxTokens || a.position_offset < 0 ||
      a.position_offset >= limits::kMaxTokens)
    return;
  const int longer = std::max(s.n_q(), s.n_kv());
  throw InputError(field,
                   "with learned positions, position_offset + tokens must be <= " + std::to_string(limits::kMaxTokens) +
                       " (W_P has at most " + std::to_string(limits::kMaxTokens) + " rows) but found " +
                       std::to_string(a.position_offset) + " + " + std::to_string(longer) + " = " +
                       std::to_string(std::int64_t(a.position_offset) + longer));
}

namespace {

void check_text_size(const std::string& text, std::size_t most, std::string_view what, const std::string& field) {
  if (text.size() > most)
    throw InputError(field, std::string(what) + " may have at most " + thousands(most) + " bytes but found " +
                                thousands(text.size()));
}

}  // namespace

void check_label(const std::string& label, const std::string& field) {
  if (label.empty()) throw InputError(field, "a token label must not be empty");
  check_text_size(label, limits::kMaxLabelBytes, "a token label", field);
  // Labels are written into JSON and drawn by the window's fonts: both need UTF-8.
  if (invalid_utf8_at(label) != std::string::npos) throw InputError(field, "not valid UTF-8 text");
  for (unsigned char c : label)
    if (c < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", c);
      throw InputError(field, std::string("a token label must not contain control characters (found ") + code + ")");
    }
}

namespace {

// The first control character of `text` that `allowed` does not list, as "U+001B"; "" when there is none.
std::string control_character_in(const std::string& text, std::string_view allowed) {
  for (unsigned char c : text)
    if ((c < 0x20 || c == 0x7f) && allowed.find(static_cast<char>(c)) == std::string_view::npos) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", c);
      return code;
    }
  return "";
}

}  // namespace

void check_name(const std::string& name, const std::string& field) {
  check_text_size(name, limits::kMaxNameBytes, "a name", field);
  if (invalid_utf8_at(name) != std::string::npos) throw InputError(field, "not valid UTF-8 text");
  if (const std::string c = control_character_in(name, ""); !c.empty())
    throw InputError(field, "a name must not contain control characters (found " + c + ")");
}

void check_description(const std::string& description, const std::string& field) {
  check_text_size(description, limits::kMaxDescriptionBytes, "a description", field);
  if (invalid_utf8_at(description) != std::string::npos) throw InputError(field, "not valid UTF-8 text");
  if (const std::string c = control_character_in(description, "\n\t"); !c.empty())
    throw InputError(field,
                     "a description may hold line breaks and tabs but no other control characters (found " + c + ")");
}

void check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& field) {
  if (value < lo)
    throw InputError(field, "must be >= " + std::to_string(lo) + " (found " + std::to_string(value) + ")");
  if (value > hi)
    throw InputError(field, "must be <= " + std::to_string(hi) + " (found " + std::to_string(value) + ")");
}

void check_shape(const Matrix& m, const std::string& field, int rows, const std::string& rows_meaning, int cols,
                 const std::string& cols_meaning) {
  if (m.rows() != rows)
    throw InputError(
        field, "expected " + plural(rows, "row") + " (" + rows_meaning + ") but found " + std::to_string(m.rows()));
  if (m.cols() != cols)
    throw InputError(
        field, "expected " + plural(cols, "column") + " (" + cols_meaning + ") but found " + std::to_string(m.cols()));
}

void check_values(const Matrix& m, const std::string& field) {
  // One pass the compiler vectorises (a NaN fails the comparison too): a drag at 2,048 tokens checks a million values a
  // frame.
  const double* x = m.data();
  std::int64_t bad = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i) bad += !(std::abs(x[i]) <= limits::kMaxAbsValue);
  if (bad == 0) return;
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const double x = m(r, c);
      if (std::isfinite(x) && std::abs(x) <= limits::kMaxAbsValue) continue;
      const std::string cell = field + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
      if (!std::isfinite(x)) throw InputError(cell, "not a finite number");
      throw InputError(cell, "magnitude must be <= 1e12 (found " +
                                 general_number_beside(x, std::copysign(limits::kMaxAbsValue, x)) + ")");
    }
}

InputError within(const std::string& prefix, const InputError& e) {
  const std::string what = e.what();
  const std::string problem = e.field().empty() ? what : what.substr(e.field().size() + 2);
  // A problem of the whole inner document ("scenario: heads x N_Q x N_KV ...") is one of the prefix itself.
  if (e.field().empty() || e.field() == "scenario") return InputError(prefix.substr(0, prefix.size() - 1), problem);
  return InputError(prefix + e.field(), problem);
}

void validate(const Scenario& s, const Scenario* checked, bool absorbed) {
  check_name(s.name, "name");
  check_description(s.description, "description");
  check_tokens(s.input, "", -1);
  const int d_model = s.d_model();
  if (s.context) check_tokens(*s.context, "context.", d_model);

  const AttentionConfig& a = s.attention;
  check_learned_shift(s, "attention.position_offset");
  check_config(a, absorbed);
  if (!(s.weight_scale > 0.0 && s.weight_scale <= limits::kMaxWeightScale))  // also refuses NaN
    throw InputError("weight_scale", "expected a number in (0, " + general_number(limits::kMaxWeightScale) +
                                         "] but found " +
                                         general_number_beside(s.weight_scale, limits::kMaxWeightScale));
  // Every head keeps several N_Q x N_KV matrices; bound their total so no file can exhaust memory.
  const std::int64_t cells = std::int64_t(a.heads) * s.n_q() * s.n_kv();
  if (cells > limits::kMaxAttentionCells)
    throw InputError("scenario", "heads x N_Q x N_KV = " + std::to_string(a.heads) + " x " + std::to_string(s.n_q()) +
                                     " x " + std::to_string(s.n_kv()) + " = " + thousands(std::uint64_t(cells)) +
                                     " attention cells, more than the " +
                                     thousands(std::uint64_t(limits::kMaxAttentionCells)) + " a trace may hold");
  // A weight drawn from the seed costs as much memory as a given one: a 100-byte file could otherwise ask for
  // four 4096 x 8192 matrices. MLA's absorbed form builds three more from the shapes alone.
  const auto check_elements = [](std::int64_t rows, std::int64_t cols, const std::string& what) {
    if (rows * cols > limits::kMaxMatrixElements)
      throw InputError("attention", what + " would be " + std::to_string(rows) + " x " + std::to_string(cols) + " = " +
                                        thousands(std::uint64_t(rows * cols)) + " numbers, more than the " +
                                        thousands(std::uint64_t(limits::kMaxMatrixElements)) + " a matrix may hold");
  };
  // Only what is drawn: a given weight is in memory already (a checkpoint's, whose size its file proves).
  for (WeightId id : kAllWeights)
    if (weight_used(id, a) && !weight_slot(s.weights, id)) {
      const WeightShape shape = weight_shape(id, a, d_model);
      check_elements(shape.rows, shape.cols,
                     std::string(weight_name(id)) + " (" + shape.rows_meaning + " by " + shape.cols_meaning + ")");
    }
  if (a.variant == Variant::Mla && absorbed) {
    const std::int64_t hc = std::int64_t(a.heads) * a.latent_dim, hd = std::int64_t(a.heads) * a.head_dim;
    const std::int64_t d_q = a.query_latent_dim > 0 ? a.query_latent_dim : d_model;
    check_elements(d_q, hc, "the absorbed W_UQK of all heads");
    check_elements(hc, hd, "blockdiag(W_UV) of the absorbed form");
    check_elements(hc, a.output_projection ? d_model : hd, "the absorbed W_LO");
  }
  if (a.positions == Positions::Learned && a.max_positions < positions_needed(s))
    throw InputError("attention.max_positions", "must be >= " + std::to_string(positions_needed(s)) +
                                                    " (one learned position per token of the " + "longer side" +
                                                    (a.position_offset > 0 ? ", after the shift position_offset" : "") +
                                                    ") but found " + std::to_string(a.max_positions));
  if (a.mask == MaskKind::Custom) {
    if (a.custom_mask.size() == 0)
      throw InputError("attention.custom_mask", "missing (required when the mask is \"custom\")");
    check_shape(a.custom_mask, "attention.custom_mask", s.n_q(), "N_Q, one per query token", s.n_kv(),
                "N_KV, one per key token");
    for (Eigen::Index r = 0; r < a.custom_mask.rows(); ++r)
      for (Eigen::Index c = 0; c < a.custom_mask.cols(); ++c) {
        const double x = a.custom_mask(r, c);
        if (x != 0.0 && x != 1.0)
          throw InputError("attention.custom_mask[" + std::to_string(r) + "][" + std::to_string(c) + "]",
                           "expected 0 or 1 but found " + general_number_beside(x, x < 0.5 ? 0.0 : 1.0));
      }
  }

  for (WeightId id : kAllWeights) {
    const SharedMatrix& m = weight_slot(s.weights, id);
    if (!m) continue;
    const std::string field = std::string("weights.") + weight_name(id);
    if (!weight_used(id, a)) {
      if (id == WeightId::W_O) throw InputError(field, "given, but attention.output_projection is false");
      if (id == WeightId::W_P) throw InputError(field, "given, but attention.positions is not \"learned\"");
      if (id == WeightId::W_QR || id == WeightId::W_KR)
        throw InputError(field, "given, but only mla with positions \"rope\" uses it (the decoupled RoPE)");
      if (id == WeightId::W_QI || id == WeightId::W_KI || id == WeightId::W_wI)
        throw InputError(field, "given, but attention.sparse is not set");
      if (id == WeightId::b_O) throw InputError(field, "given, but attention.output_bias is false");
      if (is_bias(id)) throw InputError(field, "given, but attention.qkv_bias is false");
      throw InputError(field,
                       "not used by variant " + std::string(to_string(a.variant)) +
                           (a.variant == Variant::Mla && a.query_latent_dim == 0 ? " without query_latent_dim" : "") +
                           " (it uses " + used_weight_names(a) + ")");
    }
    const WeightShape shape = weight_shape(id, a, d_model);
    check_shape(*m, field, shape.rows, shape.rows_meaning, shape.cols, shape.cols_meaning);
    if (!checked || !weight_slot(checked->weights, id).same_object(m)) check_values(*m, field);
  }
}

bool absorbed_form_fits(const AttentionConfig& a, int d_model) {
  if (a.variant != Variant::Mla) return true;
  const std::int64_t hc = std::int64_t(a.heads) * a.latent_dim, hd = std::int64_t(a.heads) * a.head_dim;
  const std::int64_t d_q = a.query_latent_dim > 0 ? a.query_latent_dim : d_model;
  const std::int64_t widest = std::max({d_q, hd, a.output_projection ? std::int64_t{d_model} : hd});
  return hc <= limits::kMaxProjectedDim && hc * widest <= limits::kMaxMatrixElements;
}

void check_config(const AttentionConfig& a, bool absorbed) {
  check_range(a.heads, 1, limits::kMaxHeads, "attention.heads");
  check_range(a.head_dim, 1, limits::kMaxHeadDim, "attention.head_dim");
  const int hd = a.heads * a.head_dim;
  if (hd > limits::kMaxProjectedDim)
    throw InputError("attention", "heads x head_dim must be <= " + std::to_string(limits::kMaxProjectedDim) +
                                      " (found " + std::to_string(a.heads) + " x " + std::to_string(a.head_dim) +
                                      " = " + std::to_string(hd) + ")");
  if (a.variant == Variant::Gqa) {
    check_range(a.kv_heads, 1, a.heads, "attention.kv_heads");
    if (a.heads % a.kv_heads != 0)
      throw InputError("attention.kv_heads",
                       "must divide heads (" + std::to_string(a.heads) + ") but found " + std::to_string(a.kv_heads));
  }
  if (a.variant == Variant::Mla) {
    check_range(a.latent_dim, 1, limits::kMaxProjectedDim, "attention.latent_dim");
    check_range(a.query_latent_dim, 0, limits::kMaxProjectedDim, "attention.query_latent_dim");
    // The absorbed form (and decoding) keeps a latent per head: latent outputs (N_Q, H*d_c) and
    // blockdiag(W_UV^(h)) of (H*d_c, H*d). Unbounded, 256 heads x latent_dim 8192 asked for 128 GiB.
    const std::int64_t hc = std::int64_t(a.heads) * a.latent_dim;
    if (absorbed && hc > limits::kMaxProjectedDim)
      throw InputError("attention", "heads x latent_dim must be <= " + std::to_string(limits::kMaxProjectedDim) +
                                        " (found " + std::to_string(a.heads) + " x " + std::to_string(a.latent_dim) +
                                        " = " + std::to_string(hc) + ")");
  }
  if (a.mask == MaskKind::SlidingWindow) check_range(a.window, 1, limits::kMaxTokens, "attention.window");
  if (a.output_bias && !a.output_projection)
    throw InputError("attention.output_bias", "needs output_projection (b_O is added after W_O)");
  check_positions(a);
  if (a.sparse) check_sparse(*a.sparse);
}

}  // namespace attn
