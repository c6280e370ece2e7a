#include "ui/logic/step_text.h"

#include <cmath>

#include "ui/logic/hover_text.h"
#include "ui/logic/step_text_parts.h"

#include "core/text_format.h"
#include "ui/logic/glyphs.h"

namespace attn::ui {
namespace {

using namespace glyph;
using namespace step_text;

std::string names(const std::vector<std::string>& tokens) {
  std::string s;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (k == 6) return s + ", " + kEllipsis;
    s += (k > 0 ? ", " : "") + tokens[k];
  }
  return s;
}

bool visible(const HeadTrace& h, Eigen::Index i, Eigen::Index j) { return (*h.mask)(i, j) != 0.0; }

// The visible key with the largest value in row i of m (-1 when none is visible).
int best_key(const HeadTrace& h, const Matrix& m, Eigen::Index i) {
  int best = -1;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    if (visible(h, i, j) && (best < 0 || m(i, j) > m(i, best))) best = static_cast<int>(j);
  return best;
}

}  // namespace

int example_row(const HeadTrace& h) {
  int fallback = -1;
  for (int i = 0; i < h.weights().rows(); ++i) {
    if (h.row_status[static_cast<std::size_t>(i)] != RowStatus::Ok) continue;
    if ((h.mask->row(i).array() != 0.0).count() >= 2) return i;
    if (fallback < 0) fallback = i;
  }
  return fallback < 0 ? 0 : fallback;
}

namespace {

int count_status(const HeadTrace& h, RowStatus s) {
  int n = 0;
  for (RowStatus r : h.row_status) n += r == s;
  return n;
}

// How head h's k and v are taken, for the formulas of the steps that use them.
std::string kv_source(const StepContext& v, char which) {
  const std::string big = which == 'k' ? "K" : "V";
  const std::string up = which == 'k' ? "W_UK" : "W_UV";
  if (v.variant() == Variant::Mla) return std::string(1, which) + " = latent " + up + "[:, head " + num(v.h.head) + "]";
  if (v.shares_kv()) return std::string(1, which) + " = " + big + "[:, KV head " + num(v.h.kv_head) + "]";
  return "";
}

std::string with_source(const std::string& formula, const std::string& source, const std::string& shapes) {
  return formula + (source.empty() ? "" : ",  " + source) + "   " + shapes;
}

// The KV cache per token and layer, the number every variant is designed around.
std::string cache_sentence(const StepContext& v) {
  const int full = 2 * v.H() * v.d();
  const std::string full_text = "2" + kDot + "H" + kDot + "d = " + num(full);
  switch (v.variant()) {
    case Variant::Mha:
      return "While generating text, the keys and values of every past token are kept (the KV cache): " + full_text +
             " numbers per token here.";
    case Variant::Gqa:
    case Variant::Mqa: {
      const int G = kv_head_count(v.t.attention);
      return "Sharing shrinks the KV cache (the keys and values kept for every past token while generating): 2" + kDot +
             "G" + kDot + "d = " + num(2 * G * v.d()) + " numbers per token instead of " + full_text + ".";
    }
    case Variant::Mla:
      return "Only the latent is cached while generating: " + plural(v.t.attention.latent_dim, "number") +
             " per token instead of " + full_text + " for full keys and values.";
  }
  return "";
}

StepText inputs(const StepContext& v) {
  const Trace& t = v.t;
  StepText s;
  if (t.cross_attention) s.formula = "X   " + dims(t.x) + " (queries),   X_kv   " + dims(t.x_kv) + " (keys and values)";
  else s.formula = "X   " + dims(t.x) + ": " + plural(t.n_q(), "token") + ", d_model = " + num(t.x.cols());
  s.what = (t.x.cols() == 1 ? "Each token is a single number, its embedding: "
                            : "Each token is one row of " + num(t.x.cols()) + " numbers, its embedding: ") +
           quoted(v.q(0)) + " is " + vec(t.x, 0) +
           ". These are the inputs: edit any number and every later step follows.";
  if (t.cross_attention) s.what += " The keys and values come from another sequence: " + names(t.context_tokens) + ".";
  s.why =
      "A model computes with numbers, not words, so each token becomes a vector. In a real model these rows come "
      "from a learned embedding table and from the layers below.";
  return s;
}

std::string projection_formula(const StepContext& v) {
  const Trace& t = v.t;
  const std::string X = "[" + num(t.x.rows()) + kTimes + num(t.x.cols()) + "]";
  const std::string Xkv = t.cross_attention ? "X_kv" : "X";
  std::string q;
  if (t.query_latent.size() > 0)
    q = "Q = (X W_DQ) W_UQ   " + dims(t.Q) + " = " + X + " " + kDot + " " + dims(*t.weights.W_DQ) + " " + kDot + " " +
        dims(*t.weights.W_UQ);
  else if (t.weights.b_Q)
    q = "Q = X W_Q + b_Q   " + dims(t.Q) + " = " + X + " " + kDot + " " + dims(*t.weights.W_Q) + " + " +
        dims(*t.weights.b_Q);
  else q = "Q = X W_Q   " + dims(t.Q) + " = " + X + " " + kDot + " " + dims(*t.weights.W_Q);
  if (v.variant() == Variant::Mla)
    return "latent = " + Xkv + " W_DKV   " + dims(t.latent) + " = " + dims(t.x_kv) + " " + kDot + " " +
           dims(*t.weights.W_DKV) + ";   K = latent W_UK, V = latent W_UV   " + dims(t.K) + " = " + dims(t.latent) +
           " " + kDot + " " + dims(*t.weights.W_UK) + ";   " + q;
  const std::string kv_bias = t.weights.b_K ? " + b_K" : "", v_bias = t.weights.b_V ? " + b_V" : "";
  std::string s = q + ";   K = " + Xkv + " W_K" + kv_bias + ", V = " + Xkv + " W_V" + v_bias + "   " + dims(t.K) +
                  " = " + dims(t.x_kv) + " " + kDot + " " + dims(*t.weights.W_K) +
                  (t.weights.b_K ? " + " + dims(*t.weights.b_K) : "");
  if (v.shares_kv())
    s += ";   head " + num(v.h.head) + " reads Q[:, head " + num(v.h.head) + "] and K, V[:, KV head " +
         num(v.h.kv_head) + "]";
  else if (v.H() > 1) s += ";   head " + num(v.h.head) + " reads Q, K, V[:, head " + num(v.h.head) + "]";
  return s;
}

StepText projections(const StepContext& v) {
  const HeadTrace& h = v.h;
  StepText s;
  s.formula = projection_formula(v);
  s.what = std::string(v.variant() == Variant::Mla
                           ? "Each row of X becomes a query, and a latent that keys and values are expanded from."
                           : "Each row of X is multiplied by three learned matrices.") +
           " Query of " + quoted(v.q(0)) + ": " + vec(h.q, 0) + " (what it looks for). Key and value of " +
           quoted(v.k(0)) + ": " + vec(h.k, 0) + " (what it offers) and " + vec(h.v, 0) + " (what it passes on).";
  const int G = kv_head_count(v.t.attention);
  if (v.variant() == Variant::Gqa)
    s.what += " The " + num(v.H()) + " query heads share " + plural(G, "key/value head") + ": query head " +
              num(h.head) + " reads KV head " + num(h.kv_head) + ".";
  else if (v.variant() == Variant::Mqa)
    s.what += " All " + num(v.H()) + " query heads read the same single key/value head.";
  else if (v.variant() == Variant::Mla)
    s.what += " The latent has " + plural(v.t.attention.latent_dim, "number") + " per token (" + quoted(v.k(0)) + ": " +
              vec(v.t.latent, 0) + ").";
  else if (v.H() > 1)
    s.what += " Each of the " + num(v.H()) + " heads takes its own " +
              (v.d() == 1 ? std::string("column") : num(v.d()) + " columns") + " of Q, K and V.";
  s.why = "Three separate roles let a token look for one thing, advertise another and hand over a third. " +
          cache_sentence(v);
  return s;
}

StepText scores(const StepContext& v) {
  const HeadTrace& h = v.h;
  StepText s;
  if (h.q_rope.size() > 0) {
    const bool mla = decoupled_rope(v.t.attention);
    s.formula = std::string("scores = ") + (mla ? "[q | q_r] [k | k_r]" : "RoPE(q) RoPE(k)") + kTransposed + "   " +
                dims(h.scores()) + " = " + dims(h.q_rope) + " " + kDot + " " + dims(h.k_rope) + kTransposed;
  } else {
    s.formula = with_source("scores = q k" + kTransposed, kv_source(v, 'k'),
                            dims(h.scores()) + " = " + dims(h.q) + " " + kDot + " " + dims(h.k) + kTransposed);
  }
  const int i = v.row;
  const int best = best_key(h, h.scores(), i);
  Eigen::Index top_i = 0, top_j = 0;
  h.scores().maxCoeff(&top_i, &top_j);
  s.what =
      "Each cell is the dot product of one query (row) with one key (column): the larger, the better they match. Row " +
      quoted(v.q(i)) + " reads " + list(h.scores(), i);
  if (best >= 0)
    s.what += ", so " + quoted(v.q(i)) + " matches " + quoted(v.k(best)) + " best" +
              ((h.mask->row(i).array() == 0.0).any() ? " of the keys the mask will leave it" : "");
  s.what += ".";
  s.what += " The largest score is " + cell(h.scores(), top_i, top_j) + ", for " +
            quoted(v.q(static_cast<int>(top_i))) + " " + kArrow + " " + quoted(v.k(static_cast<int>(top_j))) + ".";
  s.why =
      "A dot product is large when two vectors point the same way, so it measures relevance cheaply, and one "
      "matrix product scores " +
      (h.scores().size() == 1 ? std::string("every pair at once (here there is only one)")
                              : "all " + num(h.scores().size()) + " pairs at once") +
      ". That table of every query against every key is why attention's cost grows with the square of the "
      "length.";
  return s;
}

StepText scale(const StepContext& v) {
  const HeadTrace& h = v.h;
  const int width = score_dim(v.t.attention);  // d, or d + d_R with MLA's decoupled RoPE
  const std::string d = num(width);
  const std::string root = short_number(std::sqrt(static_cast<double>(width)));
  Eigen::Index ti = 0, tj = 0;
  h.scores().maxCoeff(&ti, &tj);
  StepText s;
  if (v.t.attention.scale) {
    s.formula = "scaled = scores / " + kRoot + d + "   " + dims(h.scaled());
    s.what = "Every score is divided by " + kRoot + d + " = " + root + ": the largest, " + cell(h.scores(), ti, tj) +
             ", becomes " + cell(h.scaled(), ti, tj) +
             ". The order inside each row stays the same; only the gaps shrink.";
  } else {
    s.formula = "scaled = scores   " + dims(h.scaled()) + "   (scale off)";
    s.what = "Scale is off: the scores go on unchanged, so the largest stays " + cell(h.scores(), ti, tj) +
             ". Their gaps are " + kRoot + d + " = " + root + " times wider than with scaling.";
  }
  s.why = (width == 1 ? std::string("If q and k, a single number each,") : "If the " + d + " numbers of q and of k") +
          " were random with variance 1, q " + kDot + " k would have variance " + d + ", a spread of " + kRoot + d +
          " = " + root + ". Dividing by " + kRoot + d +
          " brings the spread back to 1, so the softmax does not saturate (nearly all weight on one key, where "
          "learning stalls).";
  const int i = v.row;
  if (!v.softmax())
    s.why += " With the linear kernel it changes no weight: a row's scores and their sum Z are divided by the same " +
             kRoot + d + ".";
  else if (v.h.row_status[static_cast<std::size_t>(i)] == RowStatus::Ok)
    s.why += std::string(v.t.attention.scale ? " Row " : " Without it, row ") + quoted(v.q(i)) + " has an entropy of " +
             short_number(h.entropy(i)) + " nats" + (v.t.attention.scale ? "." : " (turn scale on to compare).");
  return s;
}

std::string mask_what(const StepContext& v, int hidden, const std::string& becomes) {
  const Trace& t = v.t;
  const std::string of = num(hidden) + " of the " + num(v.h.mask->size()) + " cells " +
                         (hidden == 1 ? "is hidden and becomes " : "are hidden and become ") + becomes + ".";
  switch (t.attention.mask) {
    case MaskKind::None:
      return "No mask: every query may see all " + plural(t.n_kv(), "key") + ", so masked equals scaled.";
    case MaskKind::Causal:
      return "Causal mask: each query sees itself and the tokens before it, so " + quoted(v.q(0)) + " sees only " +
             quoted(v.k(0)) + ". " + of;
    case MaskKind::SlidingWindow:
      return "Sliding window of " + num(t.attention.window) + ": each query sees itself and at most " +
             plural(t.attention.window - 1, "token") + " before it. " + of;
    case MaskKind::Custom: return "Custom mask: the cells you set to 0 are hidden. " + of;
  }
  return "";
}

StepText mask(const StepContext& v) {
  const HeadTrace& h = v.h;
  const std::string becomes = v.softmax() ? "-inf" : "0";
  StepText s;
  s.formula = v.softmax() ? "masked = scaled where mask = 1, -inf where mask = 0   " + dims(h.masked())
                          : "masked = scaled " + kDot + " mask, cell by cell (linear kernel)   " + dims(h.masked());
  const int hidden = static_cast<int>((h.mask->array() == 0.0).count());
  s.what = mask_what(v, hidden, becomes);
  const int blind = count_status(h, RowStatus::AllMasked);
  if (blind > 0)
    s.what += blind == 1
                  ? " 1 query has no visible key at all: its weights and output will be 0."
                  : " " + num(blind) + " queries have no visible key at all: their weights and output will be 0.";
  const std::string exact = v.softmax() ? " -inf turns into exactly 0 after e^x."
                                        : " Zeroing after the kernel gives the same exact 0 for kernels without -inf.";
  switch (v.t.attention.mask) {
    case MaskKind::None:
      s.why = v.t.cross_attention
                  ? "Cross-attention usually reads the whole source sentence, so nothing is hidden."
                  : "An encoder (like BERT) reads the whole sentence in both directions, so it hides nothing; "
                    "a text generator (like GPT) would use a causal mask.";
      break;
    case MaskKind::Causal:
      s.why =
          "A model that writes one token at a time must not peek at the next token while learning to predict it. "
          "The mask lists, for each query i, the set S_i of keys it may read." +
          exact;
      break;
    case MaskKind::SlidingWindow:
      s.why = "A window keeps each token's view local, so the KV cache only needs the last " +
              plural(v.t.attention.window, "token") +
              ". The mask lists, for each query i, the set S_i of keys it may read." + exact;
      break;
    case MaskKind::Custom:
      s.why =
          "Any rule for which keys a query may read (padding, separate documents, a pattern to test) is a set S_i per "
          "query, written as a 0/1 matrix." +
          exact;
      break;
  }
  return s;
}

std::string flagged_rows(const StepContext& v) {
  std::string s;
  for (int i = 0; i < v.h.weights().rows(); ++i) {
    switch (v.h.row_status[static_cast<std::size_t>(i)]) {
      case RowStatus::AllMasked: s += " \"" + v.q(i) + "\" sees no key: all its weights are 0."; break;
      case RowStatus::ZeroSum: s += " The scores of \"" + v.q(i) + "\" add up to 0: its row is zeroed."; break;
      case RowStatus::Signed: s += " \"" + v.q(i) + "\" gets negative weights: not a probability distribution."; break;
      case RowStatus::Ok: break;
    }
  }
  return s;
}

StepText softmax(const StepContext& v) {
  const HeadTrace& h = v.h;
  const int i = v.row;
  StepText s;
  s.formula = v.softmax() ? "weights = softmax(masked), row by row   " + dims(h.weights())
                          : "weights = masked / Z, Z = row sum of masked   " + dims(h.weights());
  s.what = v.softmax() ? "Each row turns into weights between 0 and 1 that add up to 1."
                       : "Each row is divided by its sum Z, so it adds up to 1.";
  const int best = best_key(h, h.weights(), i);
  if (best >= 0 && h.row_status[static_cast<std::size_t>(i)] != RowStatus::AllMasked)
    s.what += " " + quoted(v.q(i)) + " gives " + probability_text(h.weights(i, best)) + " of its attention to " +
              quoted(v.k(best)) + ", more than to any other key.";
  if ((h.mask->array() == 0.0).any()) s.what += " Hidden keys get exactly 0.";
  s.what += flagged_rows(v);
  if (v.softmax())
    s.why =
        "Positive weights that add up to 1 make each output an average of the values. e^x keeps every weight positive "
        "and lets a higher score win by a wide margin; subtracting the row's largest score first (" +
        format_fixed(h.row_max(i), matrix_decimals(h.masked(), &*h.mask)) + " for " + quoted(v.q(i)) +
        ") avoids overflow without changing the result.";
  else
    s.why =
        "The linear kernel uses the scores as they are, without e^x: cheaper, but a negative score gives a negative "
        "weight and a sum Z near 0 blows up, which is why such rows are flagged.";
  return s;
}

StepText weighted_sum(const StepContext& v) {
  const HeadTrace& h = v.h;
  const int i = v.row;
  StepText s;
  s.formula = with_source("output_" + num(h.head) + " = weights " + kDot + " v", kv_source(v, 'v'),
                          dims(h.output) + " = " + dims(h.weights()) + " " + kDot + " " + dims(h.v));
  s.what = "Each output row blends the value rows, using that query's weights.";
  const int best = best_key(h, h.weights(), i);
  if (best >= 0 && h.row_status[static_cast<std::size_t>(i)] == RowStatus::Ok)
    s.what += " " + quoted(v.q(i)) + " puts " + probability_text(h.weights(i, best)) + " on " + quoted(v.k(best)) +
              ", so its output " + vec(h.output, i) + " is pulled towards the value of " + quoted(v.k(best)) + ", " +
              vec(h.v, best) + ".";
  s.why =
      "Keys decide where to look; values decide what to take. The output row is the token's new representation, "
      "with the context it attended to mixed in (a pronoun can pull in the noun it refers to).";
  return s;
}

StepText head_outputs(const StepContext& v) {
  const Trace& t = v.t;
  const int i = v.row;
  StepText s;
  if (v.H() == 1) {
    s.formula = "output_0 = weights " + kDot + " v   " + dims(t.heads[0].output) + "   (1 head)";
    s.what = "There is one head, so its output " + dims(t.heads[0].output) + " is all that attention computed. Row " +
             quoted(v.q(i)) + ": " + vec(t.heads[0].output, i) + ".";
    s.why =
        "One head learns one notion of relevance. With more heads, each can follow a different relation between "
        "tokens (agreement, what a pronoun refers to) at about the same cost.";
    return s;
  }
  s.formula = "output_h = weights_h " + kDot + " v_h for h = 0 " + kEllipsis + " " + num(v.H() - 1) + "   " +
              num(v.H()) + " " + kTimes + " " + dims(v.h.output);
  s.what = "The " + num(v.H()) +
           " heads ran side by side, each with its own queries, keys and values, and each made a " + dims(v.h.output) +
           " output.";
  std::string looks;
  for (int g = 0; g < v.H() && g < 4; ++g) {
    const HeadTrace& h = t.heads[static_cast<std::size_t>(g)];
    const int best = best_key(h, h.weights(), i);
    if (best < 0 || h.row_status[static_cast<std::size_t>(i)] != RowStatus::Ok) continue;
    looks += (looks.empty() ? " head " + num(g) + " looks most at " : ", head " + num(g) + " at ") + quoted(v.k(best)) +
             " (" + probability_text(h.weights(i, best)) + ")";
  }
  if (!looks.empty()) s.what += " For " + quoted(v.q(i)) + ":" + looks + (v.H() > 4 ? ", " + kEllipsis + "." : ".");
  s.why =
      "Each head can specialise in a different relation between tokens (agreement, what a pronoun refers to). Each "
      "works in a space of only " +
      (v.d() == 1 ? std::string("one number (d = 1)") : "d = " + num(v.d()) + " numbers") + ", so " + num(v.H()) +
      " heads cost about as much as one wide head.";
  return s;
}

StepText concat(const StepContext& v) {
  const Trace& t = v.t;
  const int i = v.row;
  StepText s;
  if (t.has_output_projection()) {
    const bool biased = t.weights.b_O.has_value();
    s.formula = "output = concat " + kDot + " W_O" + (biased ? " + b_O   " : "   ") + dims(t.output) + " = " +
                dims(t.concat) + " " + kDot + " " + dims(t.W_O()) + (biased ? " + " + dims(*t.weights.b_O) : "");
    s.what = (v.H() == 1 ? std::string("With one head, concat is its output: concat of ")
                         : "The " + num(v.H()) + " head outputs are laid side by side: concat of ") +
             quoted(v.q(i)) + " is " + vec(t.concat, i) + ". W_O then " +
             (t.concat.cols() == 1 ? std::string("maps that single number to ")
                                   : "mixes all " + num(t.concat.cols()) + " numbers into ") +
             num(t.output.cols()) + ": output of " + quoted(v.q(i)) + " = " + vec(t.output, i) + ".";
    s.why =
        "Side by side, the heads do not talk to each other. W_O lets every output number draw on every head, and "
        "brings the width back to d_model = " +
        num(t.output.cols()) + " so the result can be added to the token's embedding.";
    return s;
  }
  std::string parts = "output_0";
  if (v.H() > 1) parts += (v.H() > 2 ? " " + kEllipsis + " " : " ") + "output_" + num(v.H() - 1);
  s.formula = "output = concat = [" + parts + "]   " + dims(t.output) + "   (no W_O)";
  s.what = v.H() == 1
               ? "With one head and no W_O, the concatenation is just the head's output: " + quoted(v.q(i)) + " = " +
                     vec(t.output, i) + "."
               : "The " + num(v.H()) + " head outputs are laid side by side into " + dims(t.output) +
                     "; with no W_O this is the final output: " + quoted(v.q(i)) + " = " + vec(t.output, i) + ".";
  s.why =
      "Without W_O the heads stay in separate columns and nothing mixes them; turn on the output projection to see "
      "the mixing.";
  return s;
}

StepText output(const StepContext& v) {
  const Trace& t = v.t;
  const int i = v.row;
  StepText s;
  if (t.has_output_projection()) {
    const Matrix& o = v.h.output;
    s.formula = "output = " + kSigma + "_h output_h " + kDot + " W_O^(h)" + (t.weights.b_O ? " + b_O   " : "   ") +
                dims(t.output) + " = " + plural(v.H(), "head") + " " + kTimes + " (" + dims(o) + " " + kDot + " " +
                dims(o.cols(), t.output.cols()) + ")" + (t.weights.b_O ? " + " + dims(*t.weights.b_O) : "");
    s.what = "Each token's output is one contribution per head, added up. For " + quoted(v.q(i)) + ":";
    for (int g = 0; g < v.H() && g < 4; ++g)
      s.what += std::string(g > 0 ? "," : "") + " head " + num(g) + " adds " +
                vec(t.heads[static_cast<std::size_t>(g)].contribution(), i);
    s.what += (v.H() > 4 ? ", " + kEllipsis : std::string()) +
              (t.weights.b_O ? ", and b_O adds " + vec(*t.weights.b_O, 0) : std::string()) + ", giving " +
              vec(t.output, i) + ".";
    s.why = "W_O^(h) is the block of " + plural(v.d(), "row") +
            " of W_O that meets head h's columns, so multi-head "
            "attention is a sum: each head writes its own part, and you can see which head contributed what.";
  } else {
    s.formula = "output = concat   " + dims(t.output) + "   (no W_O)";
    s.what = "This is what attention hands on: one new row per token. " + quoted(v.q(i)) + " went in as " +
             vec(t.x, i) + " and comes out as " + vec(t.output, i) + ".";
    s.why = t.output.cols() == t.x.cols()
                ? "The output row carries what each token read from the others. In a Transformer it is added back "
                  "to the input and passed on to the next layer."
                : "The output row carries what each token read from the others. In a Transformer W_O would take it "
                  "to the input's width, d_model = " +
                      num(t.x.cols()) + ", to be added back to it; without one it is " + num(t.output.cols()) +
                      " wide and could not be.";
  }
  if (v.variant() == Variant::Mla)
    s.why +=
        " Served, MLA never builds keys and values: W_UK is folded into the queries and W_UV into the output "
        "projection, and that absorbed form gives this same output.";
  return s;
}

}  // namespace

StepText explain_step(const Trace& t, Step step, int head) {
  StepText text;
  if (!t.heads.empty()) {
    const std::size_t hi =
        head >= 0 && static_cast<std::size_t>(head) < t.heads.size() ? static_cast<std::size_t>(head) : 0;
    const StepContext v{t, t.heads[hi], example_row(t.heads[hi])};
    switch (applying_step(step, t.attention)) {
      case Step::Inputs: text = inputs(v); break;
      case Step::Positions: text = positions_text(v); break;
      case Step::Rope: text = rope_text(v); break;
      case Step::Selection: text = selection_text(v); break;
      case Step::Projections: text = projections(v); break;
      case Step::Scores: text = scores(v); break;
      case Step::Scale: text = scale(v); break;
      case Step::Mask: text = mask(v); break;
      case Step::Softmax: text = softmax(v); break;
      case Step::WeightedSum: text = weighted_sum(v); break;
      case Step::HeadOutputs: text = head_outputs(v); break;
      case Step::Concat: text = concat(v); break;
      case Step::Output: text = output(v); break;
    }
  }
  text.title = std::string(step_info(applying_step(step, t.attention)).title);
  return text;
}

}  // namespace attn::ui
