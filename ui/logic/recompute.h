#pragma once
// What the views read, computed from one state of the document, and the worker thread (latest_worker.h) that
// computes it away from the frame when the document is big.
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/decode.h"
#include "core/rope_absorption.h"
#include "core/scenario.h"
#include "ui/logic/colour_map.h"
#include "ui/logic/latest_worker.h"

namespace attn::ui {

struct Computed {
  std::shared_ptr<const Trace> trace;
  std::shared_ptr<const DecodeTrace> decoded;  // nullptr when the document cannot be decoded
  std::shared_ptr<const Trace> causal_trace;   // what decoding must reproduce row by row (the trace itself when causal)
  std::string decode_error;                    // why it cannot be decoded
  std::shared_ptr<const Matrix> dense_output;  // sparse only: the output without the selection (what sparsity lost)
  // Shifted positions only (position_offset > 0, up to kMaxDecodeTokens): each head's scores with the positions
  // from 0, what the shift experiment compares with.
  std::shared_ptr<const std::vector<Matrix>> unshifted_scores;
  // MLA with an even head_dim only (up to kMaxDecodeTokens): each head's scores with the expanded keys turned beside
  // what the absorbed form computes, what the "turn the expanded keys instead" mode shows.
  std::shared_ptr<const std::vector<NaiveRopeMla>> naive_rope;
  // The colour ranges of the followed head's step results (step_ranges), made here rather than in the frame.
  std::shared_ptr<const KnownRanges> ranges;
  std::uint64_t ticket = 0;  // which request it answers: Computation counts every change of the document
  double seconds = 0.0;      // how long computing it took
};

// The document as decoding sees it: nothing after the current token, so "none" becomes causal and a custom
// mask loses its future cells.
Scenario causal_version(const Scenario& s);

// The document without its sparse selection (and the indexer's weights): what the selection step compares with.
Scenario dense_version(const Scenario& s);

// The document with its positions from 0 again: what the shift experiment compares with.
Scenario unshifted_version(const Scenario& s);

// Decoding step by step (and the shift experiment) is computed up to this many tokens; a longer document's
// decode view says why not.
inline constexpr int kMaxDecodeTokens = 256;

// Validates (throws InputError) and computes the trace, the decoding and the causal trace. `resolved`, if
// given, is resolve_weights(s), kept from before: they are not drawn again.
// `shown_head`: the head the pipeline follows, whose matrices are made here rather than in the frame showing them.
// `earlier`: the trace of the document before the edit, whose unchanged tiles and row blocks the trace takes
// (TraceOptions::earlier).
Computed compute_all(const Scenario& s, std::uint64_t ticket, const Weights* resolved = nullptr, int shown_head = 0,
                     const Trace* earlier = nullptr);

// How much arithmetic computing a document takes, in multiply-adds: the projections, the scores and the
// weighted sums, and every weight drawn from the seed (counted as 4: drawing one is a hash).
std::int64_t work_estimate(const Scenario& s);
// Above this much work (about a millisecond) an edit is computed on the worker, so a frame never waits:
// 8 heads of 8 at 64 tokens, or the 512-wide scale scenario at any length (its weights alone are 1M draws).
inline constexpr std::int64_t kBackgroundWork = std::int64_t(1) << 21;
bool compute_in_background(const Scenario& s);

// A state of the document for the worker, with its weights if known (null: drawn from its seed).
struct RecomputeRequest {
  std::shared_ptr<const Scenario> scenario;
  std::uint64_t ticket;
  std::shared_ptr<const Weights> resolved;
  int shown_head = 0;  // the head the pipeline follows
  // The trace shown when the request was made, for the worker to take unchanged tiles from when it has computed none
  // since (the first edit after a document was computed in the frame). Weak: a request never keeps a trace alive.
  std::weak_ptr<const Trace> shown;
};
// A request the worker could not compute: a result without a trace, decode_error saying why.
Computed failed_computation(const RecomputeRequest& request, const std::exception& e);
using RecomputeWorker = LatestWorker<RecomputeRequest, Computed>;

}  // namespace attn::ui
