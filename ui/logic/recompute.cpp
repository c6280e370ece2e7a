#include "ui/logic/recompute.h"

#include <algorithm>
#include <chrono>

#include "core/edits.h"
#include "core/mask.h"
#include "core/validate.h"
#include "ui/logic/step_matrices.h"

namespace attn::ui {

Scenario causal_version(const Scenario& s) {
  Scenario c = s;
  c.attention.mask = MaskKind::Custom;
  c.attention.custom_mask = decode_mask(s.attention, s.n_q());
  return c;
}

Scenario dense_version(const Scenario& s) {
  Scenario d = s;
  set_sparse(d, std::nullopt);  // and the indexer's weights with it
  return d;
}

Scenario unshifted_version(const Scenario& s) {
  Scenario u = s;
  u.attention.position_offset = 0;
  return u;
}

namespace {

std::shared_ptr<const std::vector<Matrix>> unshifted_scores(const Scenario& s, const Weights& drawn) {
  if (first_position(s.attention) == 0 || std::max(s.n_q(), s.n_kv()) > kMaxDecodeTokens) return nullptr;
  const Trace u = compute_trace_with_weights(unshifted_version(s), drawn);
  std::vector<Matrix> scores;
  for (const HeadTrace& h : u.heads) scores.push_back(h.scores());
  return std::make_shared<const std::vector<Matrix>>(std::move(scores));
}

std::shared_ptr<const std::vector<NaiveRopeMla>> naive_rope(const Trace& t) {
  const AttentionConfig& a = t.attention;
  if (a.variant != Variant::Mla || a.head_dim % 2 != 0 || std::max(t.n_q(), t.n_kv()) > kMaxDecodeTokens)
    return nullptr;
  std::vector<NaiveRopeMla> heads;
  for (int h = 0; h < a.heads; ++h) heads.push_back(naive_rope_absorption(t, h));
  return std::make_shared<const std::vector<NaiveRopeMla>>(std::move(heads));
}

// What the views read of a trace in the frame that first shows it, made here (on the worker, for a big document)
// rather than in that frame: the followed head's scores, scaled and masked (the pipeline's steps; at T = 2,048 each
// is 32 MiB and tens of milliseconds), and the colour ranges of its step results.
std::shared_ptr<const KnownRanges> make_what_views_read(const Trace& t, int shown_head) {
  const int heads = static_cast<int>(t.heads.size());
  if (shown_head < 0 || shown_head >= heads) return nullptr;
  const HeadTrace& h = t.heads[static_cast<std::size_t>(shown_head)];
  h.scaled();
  h.masked();
  return std::make_shared<const KnownRanges>(step_ranges(t, shown_head));
}

}  // namespace

Computed compute_all(const Scenario& s, std::uint64_t ticket, const Weights* resolved, int shown_head,
                     const Trace* earlier) {
  const auto start = std::chrono::steady_clock::now();
  Computed c;
  c.ticket = ticket;
  // Every head's weights kept: the heads panel shows them all.
  const TraceOptions keep{.keep_weights = true, .earlier = earlier};
  c.trace =
      std::make_shared<const Trace>(resolved ? compute_trace_with_weights(s, *resolved, keep) : compute_trace(s, keep));
  c.causal_trace = c.trace;
  c.ranges = make_what_views_read(*c.trace, shown_head);
  if (s.attention.sparse)
    c.dense_output =
        std::make_shared<const Matrix>(compute_trace_with_weights(dense_version(s), c.trace->weights).output);
  c.unshifted_scores = unshifted_scores(s, c.trace->weights);
  c.naive_rope = naive_rope(*c.trace);
  // Past kMaxDecodeTokens the step-by-step view says so instead: it would cost more than the trace itself.
  if (s.n_q() > kMaxDecodeTokens) {
    c.decode_error = "the decode view steps through at most " + std::to_string(kMaxDecodeTokens) +
                     " tokens, and this document has " + std::to_string(s.n_q()) +
                     " (the tokens slider can bring it back)";
  } else {
    try {
      // With the weights the trace drew: decoding and the causal trace do not draw them again.
      const Weights& drawn = c.trace->weights;
      c.decoded = std::make_shared<const DecodeTrace>(decode_with_weights(s, drawn));
      // Cross-attention decodes to the trace itself; self-attention to the causal version of it.
      if (!s.context && decode_mask(s.attention, s.n_q()) != build_mask(s.attention, s.n_q(), s.n_kv()))
        c.causal_trace = std::make_shared<const Trace>(compute_trace_with_weights(causal_version(s), drawn));
    } catch (const InputError& e) {
      c.decoded.reset();
      c.decode_error = e.what();
    }
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

std::int64_t work_estimate(const Scenario& s) {
  const AttentionConfig& a = s.attention;
  const std::int64_t n_q = s.n_q(), n_kv = s.n_kv(), d_model = s.d_model();
  std::int64_t work = 2 * a.heads * n_q * n_kv * a.head_dim;  // scores and weighted sums
  for (WeightId id : kAllWeights) {
    if (!weight_used(id, a)) continue;
    const WeightShape shape = weight_shape(id, a, d_model);
    const std::int64_t size = std::int64_t{shape.rows} * shape.cols;
    work += (id == WeightId::W_Q || id == WeightId::W_DQ || id == WeightId::W_O ? n_q : n_kv) * size;
    if (!weight_slot(s.weights, id)) work += 4 * size;
  }
  return work;
}

bool compute_in_background(const Scenario& s) { return work_estimate(s) > kBackgroundWork; }

Computed failed_computation(const RecomputeRequest& request, const std::exception& e) {
  Computed c;  // without a trace: decode_error says why
  c.ticket = request.ticket;
  c.decode_error = e.what();
  return c;
}

}  // namespace attn::ui
