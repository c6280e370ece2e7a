#pragma once
// Edits the inputs panel makes to a scenario, as plain functions so they are tested without a window and
// every view sees the same document afterwards.
#include <string>
#include <vector>

#include "core/scenario.h"

namespace attn::ui {

// Appends a query token whose embedding row is drawn from the seed (so the same edit gives the same
// numbers); a custom mask grows by a row and a column in which the new token sees itself and the past.
void add_token(Scenario& s, const std::string& label);
// Removes query token `index` (and its custom-mask row; in self-attention its column too). Needs 2+ tokens.
void remove_token(Scenario& s, int index);
// A label no other token has: "token 4", "token 5", ...
std::string fresh_token_label(const Scenario& s);

// Sets H and d; weights that no longer fit are redrawn from the seed. Returns one sentence per redrawn weight.
std::vector<std::string> set_head_shape(Scenario& s, int heads, int head_dim);

// A new seed (the next one) and every weight drawn from it; embeddings stay.
void reseed_weights(Scenario& s);

}  // namespace attn::ui
