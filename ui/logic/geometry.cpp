#include "ui/logic/geometry.h"

#include <algorithm>
#include <cmath>

#include "core/positions.h"
#include "ui/logic/cell_format.h"
#include "ui/logic/glyphs.h"
#include "ui/logic/hover_text.h"

namespace attn::ui {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string pair_label(const char* prefix, int a, int b) {
  return std::string(prefix) + "dims " + std::to_string(a) + ", " + std::to_string(b);
}

// (0, 1), (2, 3), ... over `width` columns from `first`; an odd width ends on its last two. Turned with the
// rotate_half pairing: the pairs RoPE turns, (0, w/2), (1, w/2 + 1), ...
void add_pairs(std::vector<PlanePair>& out, int first, int width, bool turned, RopePairing pairing,
               const char* prefix) {
  if (turned && pairing == RopePairing::RotateHalf) {
    for (int i = 0; i < width / 2; ++i)
      out.push_back({first + i, first + i + width / 2, i, pair_label(prefix, i, i + width / 2)});
    return;
  }
  for (int a = 0; a + 1 < width; a += 2)
    out.push_back({first + a, first + a + 1, turned ? a / 2 : -1, pair_label(prefix, a, a + 1)});
  if (width % 2 == 1 && width > 1)
    out.push_back({first + width - 2, first + width - 1, -1, pair_label(prefix, width - 2, width - 1)});
}

// Row r of the vectors the scores read, on the pair; before the turn, RoPE's turn undone.
PlaneVector on_pair(const Matrix& used, const Matrix& plain, int r, const PlanePair& p, double turn) {
  PlaneVector v{used(r, p.a), used(r, p.b), used(r, p.a), used(r, p.b), turn};
  if (p.rope_pair < 0) return v;
  if (p.b < plain.cols()) {  // the whole head turned: the unturned vectors are the projections themselves
    v.x_before = plain(r, p.a);
    v.y_before = plain(r, p.b);
  } else {  // MLA's decoupled part is kept turned only: turn it back
    const double c = std::cos(turn), s = std::sin(turn);
    v.x_before = v.x * c + v.y * s;
    v.y_before = -v.x * s + v.y * c;
  }
  return v;
}

double turn_at(const Trace& t, const PlanePair& p, int row) {
  if (p.rope_pair < 0) return 0.0;
  return rope_angle(rope_spec(t.attention), first_position(t.attention) + row, p.rope_pair);
}

}  // namespace

std::vector<PlanePair> plane_pairs(const Trace& t) {
  std::vector<PlanePair> out;
  const AttentionConfig& a = t.attention;
  const bool rope = a.positions == Positions::Rope;
  if (decoupled_rope(a)) {
    add_pairs(out, 0, a.head_dim, false, a.rope_pairing, "");
    add_pairs(out, a.head_dim, a.rope_dim, true, a.rope_pairing, "q_r ");
  } else {
    add_pairs(out, 0, a.head_dim, rope, a.rope_pairing, "");
  }
  return out;
}

PlaneGeometry plane_geometry(const Trace& t, int head, int pair, int row, int col) {
  PlaneGeometry g;
  const std::vector<PlanePair> pairs = plane_pairs(t);
  if (pairs.empty() || t.heads.empty()) return g;
  const HeadTrace& h =
      t.heads[static_cast<std::size_t>(std::clamp<int>(head, 0, static_cast<int>(t.heads.size()) - 1))];
  g.pair = pairs[static_cast<std::size_t>(std::clamp<int>(pair, 0, static_cast<int>(pairs.size()) - 1))];
  const bool rope = t.attention.positions == Positions::Rope;
  const Matrix& q = rope ? h.q_rope : h.q;  // (N_Q, d_s)
  const Matrix& k = rope ? h.k_rope : h.k;  // (N_KV, d_s)
  for (int i = 0; i < q.rows(); ++i) g.queries.push_back(on_pair(q, h.q, i, g.pair, turn_at(t, g.pair, i)));
  for (int j = 0; j < k.rows(); ++j) g.keys.push_back(on_pair(k, h.k, j, g.pair, turn_at(t, g.pair, j)));
  g.row = std::clamp<int>(row, 0, static_cast<int>(q.rows()) - 1);
  g.col = std::clamp<int>(col, 0, static_cast<int>(k.rows()) - 1);
  const PlaneVector& qv = g.queries[static_cast<std::size_t>(g.row)];
  const PlaneVector& kv = g.keys[static_cast<std::size_t>(g.col)];
  g.q_length = std::hypot(qv.x, qv.y);
  g.k_length = std::hypot(kv.x, kv.y);
  g.pair_score = qv.x * kv.x + qv.y * kv.y;
  if (g.q_length > 0 && g.k_length > 0)
    g.angle = std::acos(std::clamp(g.pair_score / (g.q_length * g.k_length), -1.0, 1.0));
  g.score = h.scores(g.row, g.col);
  return g;
}

std::vector<std::string> distinct_names(const std::vector<std::string>& names) {
  std::vector<std::string> out = names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::count(names.begin(), names.end(), names[i]) > 1) out[i] += " " + std::to_string(i);
  return out;
}

std::string angle_degrees(double radians) { return format_fixed(radians * 180.0 / kPi, 1) + "\u00B0"; }

std::string explain_geometry(const Trace& t, const PlaneGeometry& g) {
  if (g.queries.empty()) return "";
  using glyph::kDot;
  const std::string q = "q_" + distinct_names(t.tokens)[static_cast<std::size_t>(g.row)];
  const std::string k = "k_" + distinct_names(t.context_tokens)[static_cast<std::size_t>(g.col)];
  std::string s = q + " " + kDot + " " + k + " on " + g.pair.label + " = |q| |k| cos " +
                  "\u03C6 = " + short_number(g.q_length) + " \u00D7 " + short_number(g.k_length) + " \u00D7 cos " +
                  angle_degrees(g.angle) + " = " + short_number(g.pair_score) + ".";
  const double rest = g.score - g.pair_score;
  if (score_dim(t.attention) == 2)
    s += " These are all of the head's dimensions: the score is " + short_number(g.score) + ".";
  else s += " The other dimensions add " + short_number(rest) + ", so the score is " + short_number(g.score) + ".";
  if (g.pair.rope_pair < 0) return s;
  const int c = first_position(t.attention), i = c + g.row, j = c + g.col;
  const double theta = rope_frequency(rope_spec(t.attention), g.pair.rope_pair);
  const PlaneVector& qv = g.queries[static_cast<std::size_t>(g.row)];
  const PlaneVector& kv = g.keys[static_cast<std::size_t>(g.col)];
  s += " RoPE turned " + q + " by " + short_number(qv.turn) + " rad (position " + std::to_string(i) + ") and " + k +
       " by " + short_number(kv.turn) + " rad (position " + std::to_string(j) + "): between them a turn of (" +
       std::to_string(i) + " \u2212 " + std::to_string(j) + ")" + kDot + short_number(theta) + " = " +
       short_number((i - j) * theta) +
       " rad. Shift both positions by the same amount and both turn further alike: \u03C6 and the score stay.";
  return s;
}

}  // namespace attn::ui
