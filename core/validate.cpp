#include "core/validate.h"

#include <cmath>
#include <sstream>

namespace attn {
namespace {

std::string number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

void check_tokens(const TokenRows& side, const std::string& prefix, int d_model) {
  const int n = static_cast<int>(side.tokens.size());
  if (n == 0) throw ScenarioError(prefix + "tokens", "must list at least one token");
  check_range(n, 1, limits::kMaxTokens, prefix + "tokens");
  if (d_model < 0) {  // the query side defines d_model
    if (side.embeddings.rows() != n)
      throw ScenarioError(prefix + "embeddings", "expected " + plural(n, "row") + " (one per token) but found " +
                                                     std::to_string(side.embeddings.rows()));
    check_range(static_cast<int>(side.embeddings.cols()), 1, limits::kMaxModelDim, prefix + "embeddings columns (d_model)");
  } else {
    check_shape(side.embeddings, prefix + "embeddings", n, "one per token", d_model, "d_model, as in embeddings");
  }
  check_values(side.embeddings, prefix + "embeddings");
}

}  // namespace

void check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& field) {
  if (value < lo) throw ScenarioError(field, "must be >= " + std::to_string(lo) + " (found " + std::to_string(value) + ")");
  if (value > hi) throw ScenarioError(field, "must be <= " + std::to_string(hi) + " (found " + std::to_string(value) + ")");
}

void check_shape(const Matrix& m, const std::string& field, int rows, const std::string& rows_meaning, int cols,
                 const std::string& cols_meaning) {
  if (m.rows() != rows)
    throw ScenarioError(field, "expected " + plural(rows, "row") + " (" + rows_meaning + ") but found " +
                                   std::to_string(m.rows()));
  if (m.cols() != cols)
    throw ScenarioError(field, "expected " + plural(cols, "column") + " (" + cols_meaning + ") but found " +
                                   std::to_string(m.cols()));
}

void check_values(const Matrix& m, const std::string& field) {
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const double x = m(r, c);
      const std::string cell = field + "[" + std::to_string(r) + "][" + std::to_string(c) + "]";
      if (!std::isfinite(x)) throw ScenarioError(cell, "not a finite number");
      if (std::abs(x) > limits::kMaxAbsValue) throw ScenarioError(cell, "magnitude must be <= 1e12 (found " + number(x) + ")");
    }
}

void validate(const Scenario& s) {
  check_tokens(s.input, "", -1);
  const int d_model = s.d_model();
  if (s.context) check_tokens(*s.context, "context.", d_model);

  const AttentionConfig& a = s.attention;
  check_range(a.heads, 1, limits::kMaxHeads, "attention.heads");
  check_range(a.head_dim, 1, limits::kMaxHeadDim, "attention.head_dim");
  const int hd = a.heads * a.head_dim;
  if (hd > limits::kMaxProjectedDim)
    throw ScenarioError("attention", "heads x head_dim must be <= " + std::to_string(limits::kMaxProjectedDim) +
                                         " (found " + std::to_string(a.heads) + " x " + std::to_string(a.head_dim) +
                                         " = " + std::to_string(hd) + ")");
  if (a.mask == MaskKind::SlidingWindow) check_range(a.window, 1, limits::kMaxTokens, "attention.window");
  if (a.mask == MaskKind::Custom) {
    check_shape(a.custom_mask, "attention.custom_mask", s.n_q(), "N_Q, one per query token", s.n_kv(),
                "N_KV, one per key token");
    for (Eigen::Index r = 0; r < a.custom_mask.rows(); ++r)
      for (Eigen::Index c = 0; c < a.custom_mask.cols(); ++c) {
        const double x = a.custom_mask(r, c);
        if (x != 0.0 && x != 1.0)
          throw ScenarioError("attention.custom_mask[" + std::to_string(r) + "][" + std::to_string(c) + "]",
                              "expected 0 or 1 but found " + number(x));
      }
  }

  const std::string hd_meaning =
      "heads x head_dim = " + std::to_string(a.heads) + " x " + std::to_string(a.head_dim);
  const struct {
    const std::optional<Matrix>& m;
    const char* name;
  } projections[] = {{s.weights.W_Q, "weights.W_Q"}, {s.weights.W_K, "weights.W_K"}, {s.weights.W_V, "weights.W_V"}};
  for (const auto& [m, name] : projections) {
    if (!m) continue;
    check_shape(*m, name, d_model, "d_model", hd, hd_meaning);
    check_values(*m, name);
  }
  if (s.weights.W_O) {
    if (!a.output_projection) throw ScenarioError("weights.W_O", "given, but attention.output_projection is false");
    check_shape(*s.weights.W_O, "weights.W_O", hd, hd_meaning, d_model, "d_model");
    check_values(*s.weights.W_O, "weights.W_O");
  }
}

}  // namespace attn
