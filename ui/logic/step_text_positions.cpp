// The texts of the steps that positions and sparse attention add: X + P, RoPE's turn of q and k, and the
// indexer's top-k selection.
#include <cmath>

#include "core/positions.h"
#include "ui/logic/step_text_parts.h"

namespace attn::ui::step_text {

using namespace glyph;

StepText positions_text(const StepContext& v) {
  const Trace& t = v.t;
  const bool learned = t.attention.positions == Positions::Learned;
  const int c = first_position(t.attention);
  StepText s;
  s.formula = "X + P   " + dims(t.input()) + " = " + dims(t.x) + " + " + dims(t.n_q(), t.x.cols()) +
              (learned ? (c == 0 ? "   (P = the first rows of W_P)" : "   (P = rows " + num(c) + "... of W_P)")
                       : "   (P[p, 2i] = sin(p / " + short_number(t.attention.rope_base) +
                             "^(2i/d_model)), "
                             "P[p, 2i+1] = cos)");
  const int last = t.n_q() - 1;
  s.what = c == 0 ? "Row p of P is added to token p's embedding: "
                  : "Every position is shifted by " + num(c) + ": token p gets row " + num(c) + " + p of P. ";
  s.what += quoted(v.q(last)) + " at position " + num(c + last) + " gets " + vec(t.positions, last) + " and becomes " +
            vec(t.input(), last) + ".";
  if (t.cross_attention) s.what += " The context adds its own rows " + num(c) + " to " + num(c + t.n_kv() - 1) + ".";
  s.what += " Everything after reads these sums.";
  s.why = std::string(
              "Without positions attention knows no order: permute the tokens and every row permutes with "
              "them. ") +
          (learned ? "Learned positions are a weight like any other, one row per position, so a model can use no "
                     "position it has not seen in training."
                   : "Sinusoidal rows turn at a different frequency per pair of columns, so every position gets its "
                     "own pattern and nearby positions similar ones.");
  return s;
}

StepText rope_text(const StepContext& v) {
  const Trace& t = v.t;
  const HeadTrace& h = v.h;
  StepText s;
  const int i = t.n_q() - 1;
  if (decoupled_rope(t.attention)) {
    const int r = t.attention.rope_dim;
    s.formula = "[q | q_r]   " + dims(h.q_rope) + " = " + dims(h.q) + " beside " + dims(h.q_r) + ",   [k | k_r]   " +
                dims(h.k_rope) + "   (q_r, k_r turned by RoPE)";
    s.what = "MLA turns only a separate part of width d_R = " + num(r) +
             ": q_r of each head and one k_r per token, "
             "shared by every head and cached beside the latent. " +
             "The q_r of " + quoted(v.q(i)) + " is " + vec(h.q_r, i) + " after its turn.";
    s.why =
        "RoPE's turn sits between the query and the key, so W_UK could no longer be folded into the queries: "
        "the absorbed form would need a different matrix for every distance. Keeping the latent unturned and "
        "adding a small turned part keeps absorption exact (DeepSeek-V2, decoupled RoPE).";
    return s;
  }
  const int d = t.attention.head_dim;
  const bool half = t.attention.rope_pairing == RopePairing::RotateHalf;
  s.formula = "RoPE(q)   " + dims(h.q_rope) + ": dims " + (half ? "(i, i+d/2)" : "(2i, 2i+1)") +
              " of a row at position p turned by p" + kDot + "base^(-2i/d)" +
              (t.attention.rope_scaling ? " (llama3-scaled)" : "") + ", base " + short_number(t.attention.rope_base) +
              ", d = " + num(d);
  s.what =
      "Each pair of numbers of q and k is a point turned by an angle that grows with its position: " + quoted(v.q(i)) +
      " at position " + num(first_position(t.attention) + i) + " turns its first pair by " +
      short_number(rope_angle(rope_spec(t.attention), first_position(t.attention) + i, 0)) + " rad, from " +
      vec(h.q, i) + " to " + vec(h.q_rope, i) + ". Lengths do not change.";
  s.why = "Turning a query at position m by m" + kDot + "f and a key at position n by n" + kDot +
          "f leaves their dot product depending on m - n only: shift every position by the same amount and the "
          "scores stay the same. So the scores know how far apart two tokens are, not where they sit.";
  if (half)
    s.why +=
        " Pairing dim i with i + d/2 (as Llama, Qwen2 and Mistral do) is the same rotation on q and k with their "
        "columns permuted alike: the scores are those of pairs (2i, 2i+1) on W_Q and W_K permuted that way.";
  return s;
}

StepText selection_text(const StepContext& v) {
  const Trace& t = v.t;
  const IndexerTrace& x = *t.indexer;
  const SparseConfig& c = *t.attention.sparse;
  StepText s;
  s.formula = "I[i, j] = " + std::string("\u03A3") + "_h w[i, h]" + kDot + "ReLU(q^I[i, h]" + kDot + "k^I[j])   " +
              dims(x.scores) + ";  keep the top " + num(c.top_k) + " per row";
  const int i = t.n_q() - 1;
  int kept = 0, visible = 0;
  for (Eigen::Index j = 0; j < x.scores.cols(); ++j) {
    visible += std::isfinite(x.scores(i, j)) ? 1 : 0;
    kept += x.selected(i, j) != 0.0 ? 1 : 0;
  }
  s.what = "An indexer of " + plural(c.indexer_heads, "head") + " of width " + num(c.indexer_dim) +
           " scores every key a query may see; " + quoted(v.q(i)) + " sees " + plural(visible, "key") + " and keeps " +
           num(kept) + ". Every head attends only to the kept keys: the others are hidden like masked ones.";
  if ((x.w.row(i).array() < 0.0).any())
    s.what += " Its w has a negative entry, so on that indexer head a better match lowers the score.";
  s.why =
      "Scoring with a few small heads is cheap, so the full attention that follows reads only k keys per query "
      "instead of all of them: its cost grows with N" +
      kDot +
      "k rather than N\u00B2 (DeepSeek Sparse "
      "Attention).";
  return s;
}

}  // namespace attn::ui::step_text

namespace attn::ui {

// The shift experiment is the RoPE step's claim put to the test.
ShiftFinding explain_shift(const AttentionConfig& a, double largest_change) {
  const std::string c = std::to_string(first_position(a));
  if (a.positions == Positions::Rope) {
    const Agreement r = agreement(largest_change, "Shifted by " + c + ", the scores stay the same",
                                  ": each score turns q by i and k by j, so only i - j enters it");
    return {r.text, r.ok};
  }
  const std::string kind = a.positions == Positions::Learned ? "learned" : "sinusoidal";
  return {"Shifted by " + c + ", the scores change (largest change " + short_number(largest_change) + "): " + kind +
              " positions add another row of P to each embedding, so q and k themselves change with where the "
              "tokens sit.",
          largest_change <= kAgreementTolerance};
}

}  // namespace attn::ui
