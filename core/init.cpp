#include "core/init.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace attn {
namespace {

// SplitMix64 finaliser: a well-mixed 64-bit hash, identical on every platform.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

SeedStream seed_stream(WeightId id) {
  switch (id) {
    case WeightId::W_Q: return SeedStream::W_Q;
    case WeightId::W_K: return SeedStream::W_K;
    case WeightId::W_V: return SeedStream::W_V;
    case WeightId::W_O: return SeedStream::W_O;
    case WeightId::W_DKV: return SeedStream::W_DKV;
    case WeightId::W_UK: return SeedStream::W_UK;
    case WeightId::W_UV: return SeedStream::W_UV;
    case WeightId::W_DQ: return SeedStream::W_DQ;
    case WeightId::W_UQ: return SeedStream::W_UQ;
    case WeightId::W_P: return SeedStream::W_P;
    case WeightId::W_QR: return SeedStream::W_QR;
    case WeightId::W_KR: return SeedStream::W_KR;
    case WeightId::W_QI: return SeedStream::W_QI;
    case WeightId::W_KI: return SeedStream::W_KI;
    case WeightId::W_wI: return SeedStream::W_wI;
    case WeightId::b_Q: return SeedStream::b_Q;
    case WeightId::b_K: return SeedStream::b_K;
    case WeightId::b_V: return SeedStream::b_V;
    case WeightId::b_O: return SeedStream::b_O;
  }
  return SeedStream::W_Q;
}

double seeded_value(std::uint64_t seed, SeedStream stream, std::int64_t row, std::int64_t col) {
  std::uint64_t h = mix(seed);
  h = mix(h ^ static_cast<std::uint64_t>(stream));
  h = mix(h ^ static_cast<std::uint64_t>(row));
  h = mix(h ^ static_cast<std::uint64_t>(col));
  return static_cast<double>(static_cast<int>(h % 21) - 10) / 10.0;
}

Matrix seeded_matrix(std::uint64_t seed, SeedStream stream, int rows, int cols, double scale) {
  return Matrix::NullaryExpr(
      rows, cols, [&](Eigen::Index r, Eigen::Index c) { return seeded_value(seed, stream, r, c) * scale; });
}

Matrix seeded_embedding_row(std::uint64_t seed, SeedStream stream, int index, int d_model) {
  return Matrix::NullaryExpr(1, d_model,
                             [&](Eigen::Index, Eigen::Index c) { return seeded_value(seed, stream, index, c); });
}

Weights resolve_weights(const Scenario& s) {
  Weights w;
  for (WeightId id : kAllWeights) {
    if (!weight_used(id, s.attention)) continue;
    const SharedMatrix& given = weight_slot(s.weights, id);
    const WeightShape shape = weight_shape(id, s.attention, s.d_model());
    // A given weight is shared, not copied (4 MiB a trace for the 512-wide layer): it is immutable.
    if (given) weight_slot(w, id) = given;
    else if (is_bias(id)) weight_slot(w, id) = Matrix::Zero(shape.rows, shape.cols);
    else weight_slot(w, id) = seeded_matrix(s.seed, seed_stream(id), shape.rows, shape.cols, s.weight_scale);
  }
  return w;
}

namespace {

// The first weight the scenario uses that `w` lacks or holds in another shape.
std::optional<WeightId> first_unfit(const Weights& w, const Scenario& s) {
  for (WeightId id : kAllWeights) {
    if (!weight_used(id, s.attention)) continue;
    const SharedMatrix& m = weight_slot(w, id);
    const WeightShape shape = weight_shape(id, s.attention, s.d_model());
    if (!m || m->rows() != shape.rows || m->cols() != shape.cols) return id;
  }
  return std::nullopt;
}

}  // namespace

bool weights_fit(const Weights& w, const Scenario& s) { return !first_unfit(w, s); }

Weights resolve_weights(const Scenario& s, const Weights& resolved) {
  if (const std::optional<WeightId> id = first_unfit(resolved, s))
    throw std::invalid_argument(std::string("the resolved weights lack ") + weight_name(*id) +
                                " as the scenario needs it");
  Weights w;
  for (WeightId id : kAllWeights)
    if (weight_used(id, s.attention)) weight_slot(w, id) = weight_slot(resolved, id);
  return w;
}

bool same_resolved_weights(const Scenario& a, const Scenario& b) {
  const AttentionConfig &x = a.attention, &y = b.attention;
  // Seeded entries depend only on (seed, matrix, row, column): the same used weights in the same shapes are the same.
  if (a.seed != b.seed || a.weight_scale != b.weight_scale || a.d_model() != b.d_model() || x.variant != y.variant ||
      x.heads != y.heads || x.head_dim != y.head_dim)
    return false;
  for (WeightId id : kAllWeights) {
    if (weight_used(id, x) != weight_used(id, y)) return false;
    if (!weight_used(id, x)) continue;
    const WeightShape p = weight_shape(id, x, a.d_model()), q = weight_shape(id, y, b.d_model());
    if (p.rows != q.rows || p.cols != q.cols) return false;
  }
  for (WeightId id : kAllWeights) {
    const SharedMatrix &p = weight_slot(a.weights, id), &q = weight_slot(b.weights, id);
    if (p.has_value() != q.has_value()) return false;
    if (p && (p->rows() != q->rows() || p->cols() != q->cols() || *p != *q)) return false;
  }
  return true;
}

namespace {

// Why a configuration does not use a weight: "by variant mla", "without learned positions", ...
std::string unused_reason(WeightId id, const AttentionConfig& a) {
  switch (id) {
    case WeightId::W_O: return "without output_projection";
    case WeightId::W_P: return "without learned positions";
    case WeightId::W_QR:
    case WeightId::W_KR: return "without mla's decoupled rope";
    case WeightId::W_QI:
    case WeightId::W_KI:
    case WeightId::W_wI: return "without sparse attention";
    case WeightId::b_Q:
    case WeightId::b_K:
    case WeightId::b_V: return "without qkv_bias";
    case WeightId::b_O: return a.output_projection ? "without output_bias" : "without output_projection";
    default: return "by variant " + std::string(to_string(a.variant));
  }
}

}  // namespace

std::vector<std::string> drop_unfit_weights(Scenario& s) {
  std::vector<std::string> notes;
  for (WeightId id : kAllWeights) {
    SharedMatrix& m = weight_slot(s.weights, id);
    if (!m) continue;
    const std::string name = std::string("weights.") + weight_name(id);
    if (!weight_used(id, s.attention)) {
      notes.push_back(name + " is not used " + unused_reason(id, s.attention) + "; left out");
    } else {
      const WeightShape shape = weight_shape(id, s.attention, s.d_model());
      if (m->rows() == shape.rows && m->cols() == shape.cols) continue;
      notes.push_back(name + " is " + std::to_string(m->rows()) + " x " + std::to_string(m->cols()) +
                      " but now needs " + std::to_string(shape.rows) + " x " + std::to_string(shape.cols) + " (" +
                      shape.rows_meaning + " by " + shape.cols_meaning + "); " +
                      (is_bias(id) ? std::string("zeros") : "drawn from seed " + std::to_string(s.seed)) + " instead");
    }
    m.reset();
  }
  return notes;
}

}  // namespace attn
