#include "ui/logic/sqrt_dk.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>

namespace attn::ui {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

std::vector<double> normal_vector(NormalStream& normals, int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = normals.next();
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

}  // namespace

double NormalStream::uniform() {
  // SplitMix64 (Steele, Lea and Flood): one 64-bit output per step, well mixed even for seeds 0, 1, 2.
  state_ += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  // The top 53 bits as a double in [0, 1), flipped to (0, 1].
  return 1.0 - static_cast<double>(z >> 11) * 0x1.0p-53;
}

double NormalStream::next() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double radius = std::sqrt(-2.0 * std::log(uniform()));
  const double angle = 2.0 * std::numbers::pi * uniform();
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

DotProductSample sample_dot_products(int d_k, int count, std::uint64_t seed) {
  require(d_k >= 1, "sample_dot_products: d_k must be >= 1");
  require(count >= 0, "sample_dot_products: count must be >= 0");
  NormalStream normals(seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_k));
  DotProductSample out;
  out.raw.reserve(static_cast<std::size_t>(count));
  out.scaled.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const std::vector<double> q = normal_vector(normals, d_k);
    const std::vector<double> k = normal_vector(normals, d_k);
    out.raw.push_back(dot(q, k));
    out.scaled.push_back(out.raw.back() * scale);
  }
  return out;
}

Histogram histogram(std::span<const double> values, double lo, double hi, int bins) {
  require(bins >= 1, "histogram: bins must be >= 1");
  require(hi > lo, "histogram: hi must be greater than lo");
  Histogram h{lo, hi, std::vector<int>(static_cast<std::size_t>(bins), 0)};
  const double width = (hi - lo) / bins;
  for (double v : values) {
    if (std::isnan(v)) continue;
    // Comparisons first, so an infinite value never reaches the conversion to an index.
    int bin = 0;
    if (v >= hi) bin = bins - 1;
    else if (v > lo) bin = std::min(bins - 1, static_cast<int>((v - lo) / width));
    ++h.counts[static_cast<std::size_t>(bin)];
  }
  return h;
}

double sample_variance(std::span<const double> values) {
  if (values.size() < 2) return 0.0;
  // Two passes: summing squares of deviations from the mean does not cancel the way E[x^2] - E[x]^2 does.
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return squares / (n - 1.0);
}

double fraction_within(std::span<const double> values, double bound) {
  if (values.empty()) return 0.0;
  const auto inside = std::count_if(values.begin(), values.end(), [&](double v) { return std::abs(v) < bound; });
  return static_cast<double>(inside) / static_cast<double>(values.size());
}

SoftmaxRow softmax_of_sample_row(int d_k, int n_keys, bool scaled, std::uint64_t seed) {
  require(d_k >= 1, "softmax_of_sample_row: d_k must be >= 1");
  require(n_keys >= 1, "softmax_of_sample_row: n_keys must be >= 1");
  NormalStream normals(seed);
  const std::vector<double> q = normal_vector(normals, d_k);
  const double scale = scaled ? 1.0 / std::sqrt(static_cast<double>(d_k)) : 1.0;
  std::vector<double> scores;
  for (int j = 0; j < n_keys; ++j) scores.push_back(dot(q, normal_vector(normals, d_k)) * scale);

  // Shifted by the row maximum, as the engine does, so large unscaled scores cannot overflow exp.
  const double max_score = *std::max_element(scores.begin(), scores.end());
  SoftmaxRow row;
  for (double s : scores) row.weights.push_back(std::exp(s - max_score));
  const double sum = std::accumulate(row.weights.begin(), row.weights.end(), 0.0);
  for (double& w : row.weights) {
    w /= sum;
    if (w > 0.0) row.entropy -= w * std::log(w);  // 0 ln 0 = 0: a weight that underflowed adds nothing
    row.max_weight = std::max(row.max_weight, w);
  }
  return row;
}

}  // namespace attn::ui
