#include "ui/edits.h"

#include <algorithm>

#include "core/init.h"

namespace attn::ui {

void add_token(Scenario& s, const std::string& label) {
  const int n = s.n_q();
  s.input.tokens.push_back(label);
  s.input.embeddings.conservativeResize(n + 1, Eigen::NoChange);
  s.input.embeddings.row(n) = seeded_embedding_row(s.seed, SeedStream::Embeddings, n, s.d_model());
  Matrix& m = s.attention.custom_mask;
  if (m.size() == 0) return;
  const bool self = !s.context;
  m.conservativeResize(n + 1, self ? n + 1 : m.cols());
  m.row(n).setOnes();  // the new (last) query sees every earlier key and itself
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

std::string fresh_token_label(const Scenario& s) {
  for (int i = s.n_q() + 1;; ++i) {
    std::string label = "token " + std::to_string(i);
    if (std::find(s.input.tokens.begin(), s.input.tokens.end(), label) == s.input.tokens.end()) return label;
  }
}

std::vector<std::string> set_head_shape(Scenario& s, int heads, int head_dim) {
  s.attention.heads = heads;
  s.attention.head_dim = head_dim;
  if (s.attention.variant == Variant::Mha || s.attention.variant == Variant::Mla) s.attention.kv_heads = heads;
  return drop_unfit_weights(s);
}

void reseed_weights(Scenario& s) {
  s.seed += 1;
  s.weights = {};
}

}  // namespace attn::ui
