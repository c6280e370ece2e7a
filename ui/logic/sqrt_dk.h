#pragma once
// The numbers behind the "why divide by sqrt(d_k)?" experiment: dot products of random vectors whose
// components are independent standard normals, their spread with and without the scaling, and what
// softmax does to a row of such scores. Pure and deterministic: the same seed gives the same numbers on
// every machine, because the normals come from our own generator (std::normal_distribution differs
// between standard libraries).
#include <cstdint>
#include <span>
#include <vector>

namespace attn::ui {

// What the experiment starts with. The lesson pages quote numbers drawn with these (assets/lessons/
// 2_sqrt_dk.json), and tests pin them, so change them together.
inline constexpr int kSqrtDkPairs = 20000;  // dot products in each histogram
inline constexpr int kSqrtDkKeys = 8;       // keys in the softmax row
inline constexpr std::uint64_t kSqrtDkSeed = 1;
inline constexpr int kSqrtDkDefault = 64;                           // the d_k shown first
inline constexpr int kSqrtDkChoices[] = {1, 4, 16, 64, 256, 1024};  // the d_k values to offer

// Standard normal numbers from a seed: Box-Muller over a SplitMix64 stream. Each pair of uniforms gives
// two normals, cos first, then sin.
class NormalStream {
 public:
  explicit NormalStream(std::uint64_t seed) : state_(seed) {}
  double next();

 private:
  double uniform();  // in (0, 1]: never 0, so log is finite
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

struct DotProductSample {
  std::vector<double> raw;     // q . k
  std::vector<double> scaled;  // q . k / sqrt(d_k)
};

// `count` pairs (q, k), each of d_k i.i.d. standard normal components, drawn q then k from one stream.
// Throws std::invalid_argument for d_k < 1 or count < 0.
DotProductSample sample_dot_products(int d_k, int count, std::uint64_t seed);

struct Histogram {
  double lo = 0.0, hi = 0.0;
  std::vector<int> counts;
};
// `bins` equal bins over [lo, hi]. A value below lo counts in the first bin and one at or above hi in
// the last, so the counts always add up to the number of values (NaN is the only value not counted): a
// chart with fixed axes then still shows how much fell outside. Throws std::invalid_argument for
// bins < 1 or hi <= lo.
Histogram histogram(std::span<const double> values, double lo, double hi, int bins);

// The unbiased sample variance (divides by n - 1); 0 for fewer than two values.
double sample_variance(std::span<const double> values);

// The share of the values strictly between -bound and +bound (two standard deviations hold about 95% of a
// normal sample); 0 for no values.
double fraction_within(std::span<const double> values, double bound);

// One query against n_keys keys, all with d_k i.i.d. standard normal components (query first, then the
// keys, from one stream), and the softmax of its scores. The same seed gives the same vectors whether
// scaled or not, so the two rows differ only by the division by sqrt(d_k).
struct SoftmaxRow {
  std::vector<double> weights;  // sums to 1
  double entropy = 0.0;         // -sum w ln w, in nats: ln(n_keys) when uniform, 0 when one key takes all
  double max_weight = 0.0;
};
// Throws std::invalid_argument for d_k < 1 or n_keys < 1.
SoftmaxRow softmax_of_sample_row(int d_k, int n_keys, bool scaled, std::uint64_t seed);

}  // namespace attn::ui
