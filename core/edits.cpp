#include "core/edits.h"

#include <algorithm>
#include <unordered_set>

#include "core/init.h"
#include "core/kv_conversion.h"

namespace attn {

void add_token(Scenario& s, const std::string& label) {
  const int n = s.n_q();
  s.input.tokens.push_back(label);
  s.input.embeddings.conservativeResize(n + 1, Eigen::NoChange);
  s.input.embeddings.row(n) = seeded_embedding_row(s.seed, SeedStream::Embeddings, n, s.d_model());
  fit_positions(s);
  Matrix& m = s.attention.custom_mask;
  if (m.size() == 0) return;
  const bool self = !s.context;
  m.conservativeResize(n + 1, self ? n + 1 : m.cols());
  m.row(n).setOnes();                       // the new (last) query sees every earlier key and itself
  if (self) m.block(0, n, n, 1).setZero();  // nobody earlier sees the future token
}

void remove_token(Scenario& s, int index) {
  const int n = s.n_q();
  if (n < 2 || index < 0 || index >= n) return;
  auto drop_row = [index](Matrix& m) {
    const Eigen::Index below = m.rows() - index - 1;
    m.middleRows(index, below) = m.bottomRows(below).eval();
    m.conservativeResize(m.rows() - 1, Eigen::NoChange);
  };
  s.input.tokens.erase(s.input.tokens.begin() + index);
  drop_row(s.input.embeddings);
  Matrix& m = s.attention.custom_mask;
  if (m.size() == 0) return;
  drop_row(m);
  if (!s.context) {
    const Eigen::Index right = m.cols() - index - 1;
    m.middleCols(index, right) = m.rightCols(right).eval();
    m.conservativeResize(Eigen::NoChange, m.cols() - 1);
  }
}

void add_context_token(Scenario& s, const std::string& label) {
  if (!s.context) return;
  TokenRows& c = *s.context;
  const int n = static_cast<int>(c.tokens.size());
  c.tokens.push_back(label);
  c.embeddings.conservativeResize(n + 1, Eigen::NoChange);
  c.embeddings.row(n) = seeded_embedding_row(s.seed, SeedStream::ContextEmbeddings, n, s.d_model());
  fit_positions(s);
  Matrix& m = s.attention.custom_mask;
  if (m.size() == 0) return;
  m.conservativeResize(Eigen::NoChange, n + 1);
  m.col(n).setOnes();
}

void remove_context_token(Scenario& s, int index) {
  if (!s.context) return;
  TokenRows& c = *s.context;
  const int n = static_cast<int>(c.tokens.size());
  if (n < 2 || index < 0 || index >= n) return;
  c.tokens.erase(c.tokens.begin() + index);
  const Eigen::Index below = n - index - 1;
  c.embeddings.middleRows(index, below) = c.embeddings.bottomRows(below).eval();
  c.embeddings.conservativeResize(n - 1, Eigen::NoChange);
  Matrix& m = s.attention.custom_mask;
  if (m.size() == 0) return;
  m.middleCols(index, below) = m.rightCols(below).eval();
  m.conservativeResize(Eigen::NoChange, n - 1);
}

std::string fresh_context_label(const Scenario& s) {
  const std::vector<std::string>& tokens = s.context ? s.context->tokens : s.input.tokens;
  for (std::size_t i = tokens.size() + 1;; ++i) {
    std::string label = "key " + std::to_string(i);
    if (std::find(tokens.begin(), tokens.end(), label) == tokens.end()) return label;
  }
}

void set_token_count(Scenario& s, int count) {
  const int n = s.n_q();
  if (count < 1 || count == n) return;
  const bool self = !s.context;
  Matrix& m = s.attention.custom_mask;
  if (count < n) {
    s.input.tokens.resize(static_cast<std::size_t>(count));
    s.input.embeddings.conservativeResize(count, Eigen::NoChange);
    if (m.size() > 0) m.conservativeResize(count, self ? count : m.cols());
    return;
  }
  std::unordered_set<std::string> used(s.input.tokens.begin(), s.input.tokens.end());
  int next_label = n;
  s.input.embeddings.conservativeResize(count, Eigen::NoChange);
  for (int i = n; i < count; ++i) {
    std::string label;
    do label = "t" + std::to_string(next_label++);
    while (used.contains(label));
    s.input.tokens.push_back(label);
    s.input.embeddings.row(i) = seeded_embedding_row(s.seed, SeedStream::Embeddings, i, s.d_model());
  }
  fit_positions(s);
  if (m.size() == 0) return;
  m.conservativeResize(count, self ? count : m.cols());
  if (!self) {
    m.bottomRows(count - n).setOnes();  // a new query sees every context token
    return;
  }
  m.topRightCorner(n, count - n).setZero();  // nobody earlier sees a future token
  for (int i = n; i < count; ++i) {          // a new token sees the past and itself
    m.row(i).head(i + 1).setOnes();
    m.row(i).tail(count - i - 1).setZero();
  }
}

std::string fresh_token_label(const Scenario& s) {
  for (int i = s.n_q() + 1;; ++i) {
    std::string label = "token " + std::to_string(i);
    if (std::find(s.input.tokens.begin(), s.input.tokens.end(), label) == s.input.tokens.end()) return label;
  }
}

std::vector<std::string> set_head_shape(Scenario& s, int heads, int head_dim) {
  AttentionConfig& a = s.attention;
  a.heads = heads;
  a.head_dim = head_dim;
  if (a.variant == Variant::Mha || a.variant == Variant::Mla) a.kv_heads = heads;
  if (a.variant == Variant::Gqa) {  // keep G if it still divides H, else the largest divisor below it
    const std::vector<int> d = divisors(heads);
    a.kv_heads = *std::prev(std::upper_bound(d.begin(), d.end(), std::min(a.kv_heads, heads)));
  }
  return drop_unfit_weights(s);
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

namespace {

// Keys and values as MHA would have them, one d-wide block per query head (d_model, H*d).
std::pair<Matrix, Matrix> per_head_kv(const AttentionConfig& a, const Weights& used) {
  if (a.variant == Variant::Mla) return {*used.W_DKV * *used.W_UK, *used.W_DKV * *used.W_UV};
  return {per_query_head(a, *used.W_K), per_query_head(a, *used.W_V)};
}

}  // namespace

std::string switch_variant(Scenario& s, const Weights& shown, Variant v, int kv_heads, int latent_dim,
                           int query_latent_dim) {
  // `shown` comes from the trace on screen, which belongs to an earlier revision while a big document is
  // recomputed: if it no longer fits the document, the document's own weights are drawn instead.
  const Weights used = weights_fit(shown, s) ? shown : resolve_weights(s);
  const AttentionConfig from = s.attention;
  const int d = from.head_dim, H = from.heads;
  const Matrix W_Q = used.W_Q ? *used.W_Q : Matrix(*used.W_DQ * *used.W_UQ);
  AttentionConfig& a = s.attention;
  a.variant = v;
  a.kv_heads = v == Variant::Gqa ? kv_heads : v == Variant::Mqa ? 1 : H;
  a.latent_dim = v == Variant::Mla ? latent_dim : 0;
  a.query_latent_dim = v == Variant::Mla ? query_latent_dim : 0;
  // With rope, mla starts with the decoupled key of DeepSeek-V2, a head wide (rounded up to even).
  a.rope_dim = mla_with_rope(a) ? std::max(2, d + d % 2) : 0;
  Weights w;
  w.W_O = s.weights.W_O;
  w.b_O = s.weights.b_O;
  if (v == Variant::Mla) {
    a.qkv_bias = false;  // mla starts from the latent alone: the new W_UK and W_UV have no biases to go with
    if (query_latent_dim == 0) w.W_Q = W_Q;
    s.weights = w;  // the latent weights come from the seed
    return "MLA: W_DKV, W_UK and W_UV" + std::string(query_latent_dim > 0 ? ", W_DQ and W_UQ" : "") +
           " drawn from seed " + std::to_string(s.seed) + "; W_Q and W_O kept where they still apply";
  }
  const auto [k_full, v_full] = per_head_kv(from, used);
  const int g_count = kv_head_count(a);
  Matrix k(k_full.rows(), g_count * d), vv(v_full.rows(), g_count * d);
  for (int g = 0; g < g_count; ++g) {  // the first query head of group g
    k.middleCols(g * d, d) = k_full.middleCols(g * (H / g_count) * d, d);
    vv.middleCols(g * d, d) = v_full.middleCols(g * (H / g_count) * d, d);
  }
  w.W_Q = W_Q;
  w.W_K = k;
  w.W_V = vv;
  // Each KV head's given biases are those of the KV head its group's first query head read; a bias not given stays
  // zeros, not given.
  const auto group_bias = [&](const SharedMatrix& b) -> SharedMatrix {
    if (!a.qkv_bias || !b) return {};
    Matrix out(1, g_count * d);
    for (int g = 0; g < g_count; ++g)
      out.middleCols(g * d, d) = b->middleCols(kv_head_for(from, g * (H / g_count)) * d, d);
    return out;
  };
  if (a.qkv_bias) w.b_Q = s.weights.b_Q;
  w.b_K = group_bias(s.weights.b_K);
  w.b_V = group_bias(s.weights.b_V);
  s.weights = w;
  const std::string name(to_string(v));
  std::string note = std::string(name == "mha"   ? "MHA"
                                 : name == "gqa" ? "GQA"
                                                 : "MQA") +
                     " with " + std::to_string(g_count) + (g_count == 1 ? " KV head" : " KV heads") + ": ";
  if (from.variant == Variant::Mla) note += "W_K = W_DKV\u00B7W_UK and W_V = W_DKV\u00B7W_UV, then ";
  note += g_count == H ? "every query head keeps its own keys and values"
                       : "each KV head takes W_K and W_V of the first query head of its group";
  return note;
}

void reseed_weights(Scenario& s) {
  s.seed += 1;
  s.weights = {};
}

namespace {

// What changing the configuration did to the weights: the ones left out or redrawn (drop_unfit_weights) and the
// ones newly used, drawn from the seed.
std::vector<std::string> weight_notes(const AttentionConfig& before, Scenario& s) {
  std::vector<std::string> notes = drop_unfit_weights(s);
  for (WeightId id : kAllWeights) {
    if (!weight_used(id, s.attention) || weight_used(id, before) || weight_slot(s.weights, id)) continue;
    const WeightShape shape = weight_shape(id, s.attention, s.d_model());
    notes.push_back(std::string(weight_name(id)) + " (" + std::to_string(shape.rows) + " x " +
                    std::to_string(shape.cols) + ") drawn from seed " + std::to_string(s.seed));
  }
  return notes;
}

}  // namespace

void fit_positions(Scenario& s) {
  AttentionConfig& a = s.attention;
  const int n = positions_needed(s);
  if (a.positions != Positions::Learned || a.max_positions >= n) return;
  if (s.weights.W_P) {
    Matrix p = *s.weights.W_P;
    const Eigen::Index given = p.rows();
    p.conservativeResize(n, Eigen::NoChange);
    for (Eigen::Index r = given; r < n; ++r)
      for (Eigen::Index c = 0; c < p.cols(); ++c)
        p(r, c) = seeded_value(s.seed, SeedStream::W_P, r, c) * s.weight_scale;
    s.weights.W_P = std::move(p);
  }
  a.max_positions = n;
}

std::vector<std::string> set_position_offset(Scenario& s, int offset) {
  const int rows = s.attention.max_positions;
  s.attention.position_offset = offset;
  fit_positions(s);
  if (s.attention.max_positions == rows) return {};
  return {"W_P grows from " + std::to_string(rows) + " to " + std::to_string(s.attention.max_positions) +
          " rows, the new ones drawn from seed " + std::to_string(s.seed)};
}

std::vector<std::string> set_positions(Scenario& s, Positions p, int rope_dim) {
  const AttentionConfig before = s.attention;
  AttentionConfig& a = s.attention;
  a.positions = p;
  if (p == Positions::None) a.position_offset = 0;  // as a saved file has it: no positions, nothing shifted
  if (p != Positions::Rope) {                       // the pairing and the scaling are rope's
    a.rope_pairing = RopePairing::Interleaved;
    a.rope_scaling.reset();
  }
  a.max_positions = p == Positions::Learned ? positions_needed(s) : 0;
  a.rope_dim = mla_with_rope(a) ? rope_dim : 0;
  return weight_notes(before, s);
}

std::vector<std::string> set_sparse(Scenario& s, const std::optional<SparseConfig>& c) {
  const AttentionConfig before = s.attention;
  s.attention.sparse = c;
  return weight_notes(before, s);
}

int max_token_count(const Scenario& s, int cap, const std::function<bool(std::int64_t, std::int64_t)>& fits) {
  const auto within = [&](std::int64_t n) {
    const std::int64_t keys = s.context ? s.n_kv() : n;
    return s.attention.heads * n * keys <= limits::kMaxAttentionCells && fits(n, keys);
  };
  int lo = 1, hi = std::max(1, cap);  // the answer lies in [lo, hi]
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (within(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace attn
