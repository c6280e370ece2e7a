#pragma once
// Edits the inputs panel makes to a scenario, as plain functions so they are tested without a window and
// every view sees the same document afterwards.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"

namespace attn {

// Appends a query token whose embedding row is drawn from the seed (so the same edit gives the same
// numbers); a custom mask grows by a row and a column in which the new token sees itself and the past.
void add_token(Scenario& s, const std::string& label);
// Removes query token `index` (and its custom-mask row; in self-attention its column too). Needs 2+ tokens.
void remove_token(Scenario& s, int index);
// Grows or shrinks the query side to `count` tokens in one edit (the scale slider): new tokens are
// labelled "t4", "t5", ... (skipping labels in use), their embedding rows drawn from the seed as add_token
// draws them, and a custom mask grows the same way; tokens past `count` are removed from the end.
void set_token_count(Scenario& s, int count);
// The most query tokens set_token_count may give `s`, at most `cap`: its heads x N_Q x N_KV within the cells a
// trace may hold and `fits(n_q, n_kv)` (what the caller holds at that size within its budget); at least 1. Both
// only ever stop fitting as the tokens grow.
int max_token_count(const Scenario& s, int cap, const std::function<bool(std::int64_t, std::int64_t)>& fits);
// A label no other token has: "token 4", "token 5", ...
std::string fresh_token_label(const Scenario& s);

// The same for the context (the key/value side of cross-attention): a new key every query may see;
// removing one drops its custom-mask column. Needs a context (and 2+ context tokens to remove).
void add_context_token(Scenario& s, const std::string& label);
void remove_context_token(Scenario& s, int index);
std::string fresh_context_label(const Scenario& s);

// Sets H and d; weights that no longer fit are redrawn from the seed. Returns one sentence per redrawn weight.
std::vector<std::string> set_head_shape(Scenario& s, int heads, int head_dim);

// A new seed (the next one) and every weight drawn from it; embeddings stay.
void reseed_weights(Scenario& s);

// Switches the attention variant, keeping tokens and embeddings, and derives the new weights from `used`
// (the weights the current trace used) where that is exact or natural:
//   to MHA, GQA or MQA: W_Q and W_O are kept; each KV head takes W_K and W_V of the first query head of its
//     group (from MLA, first W_K = W_DKV·W_UK and W_V = W_DKV·W_UV, the same attention without a latent);
//   to MLA: W_DKV, W_UK, W_UV (and W_DQ, W_UQ) are drawn from the seed.
// kv_heads must divide heads (gqa); latent_dim >= 1 (mla). Returns a sentence saying which was done.
std::string switch_variant(Scenario& s, const Weights& used, Variant v, int kv_heads, int latent_dim,
                           int query_latent_dim);

// Where positions enter (none, sinusoidal, learned, rope). Learned positions get one row per token of the longer
// side; MLA with rope a decoupled part of width rope_dim (even, >= 2). Weights no longer used are left out and
// newly used ones drawn from the seed: returns one sentence per weight it changed.
std::vector<std::string> set_positions(Scenario& s, Positions p, int rope_dim);
// Sparse attention on (with these sizes) or off; the indexer's weights as set_positions treats W_P.
std::vector<std::string> set_sparse(Scenario& s, const std::optional<SparseConfig>& c);
// With learned positions, one row of W_P per position used: grows max_positions to positions_needed(s), a given
// W_P by rows drawn from the seed (its own rows kept). Called by every edit that adds tokens or shifts positions.
void fit_positions(Scenario& s);
// Shifts every position by `offset` (>= 0; learned positions grow to cover it). Returns a sentence when learned
// positions needed new rows.
std::vector<std::string> set_position_offset(Scenario& s, int offset);

// The divisors of n, ascending: the KV head counts GQA can use with n query heads.
std::vector<int> divisors(int n);

}  // namespace attn
