#pragma once
// A text as a model folder's forward pass reads it, for the command line and the window alike: tokenized with the
// model's own tokenizer and held to its positions and the engine's bounds, and what the forward pass will hold.
#include <cstdint>
#include <string>

#include "core/io/checkpoint_model.h"
#include "core/tokenizer.h"

namespace attn {

// The longest text a model folder reads (tokenize, run, trace, the window's text box): a page of text.
inline constexpr std::size_t kMaxTextBytes = 1u << 20;

// InputError naming `field` when the text is empty or longer than 1 MiB: checked before anything reads the folder.
void check_text_size(const std::string& text, const std::string& field);
// `text` tokenized by m's tokenizer. InputError naming `field` when the text is empty, longer than 1 MiB, or makes
// more tokens than the model has positions ("--text: 1,500 tokens, more than the model's 1,024 positions").
Encoding checkpoint_text(const CheckpointModel& m, const std::string& text, const std::string& field);

// A text a model is evaluated on, of any length up to 1 MiB: read in windows of checkpoint_window tokens. InputError
// naming `field` when the text is empty, longer than 1 MiB, or makes fewer than two tokens (nothing to predict).
Encoding checkpoint_long_text(const CheckpointModel& m, const std::string& text, const std::string& field);
// The tokens an evaluation reads at once: the model's positions, at most kMaxEvalWindow, and as many as keep every
// layer's heads x n x n within the engine's bound.
inline constexpr int kMaxEvalWindow = 1024;
int checkpoint_window(const CheckpointModel& m);
// The bytes an Encoding holds: each token's id, word and piece (core/text_quality.h's piece_bytes), and its vectors'
// room to grow.
std::int64_t encoding_bytes(const Encoding& e);

// What a forward pass over n tokens holds at its peak: one layer's weights in float64, the stream of every layer,
// the kept layers' attention traces (keep_heads: all of them) and, with logits, the logits and probabilities over the
// vocabulary.
std::int64_t checkpoint_run_bytes(const CheckpointModel& m, std::int64_t n, bool keep_heads, bool logits = true);
// What evaluating the model on windows of `window` tokens holds: the pass without logits and a block of rows of
// log-probabilities; `converted`: a converted model's pass beside it, and one converted layer's SVD.
std::int64_t checkpoint_eval_bytes(const CheckpointModel& m, int window, bool converted);
// The same on a whole text in windows of `window` tokens: the passes, the text's encoding and every window's final
// stream (text_quality.h's windowed_run_bytes).
std::int64_t text_eval_bytes(const CheckpointModel& m, const Encoding& text, int window, bool converted);

}  // namespace attn
