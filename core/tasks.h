#pragma once
// The classroom tasks a model is trained on: each a seeded generator of batches, and a fixed evaluation
// batch drawn apart from training. The same (task, seed, batch number) always gives the same batch, on any machine.
//
// Vocabulary of the symbol tasks: "<s>" (every sequence starts with it), "|" (separates a question from its answer),
// then the symbols. The text task's vocabulary is its text's characters.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_gradient.h"

namespace attn {

enum class TaskKind {
  Induction,      // random symbols in which a segment is repeated; predict each next token of the repeat
  PreviousToken,  // predict the token before the current one
  Copy,           // <s> a b c | a b c: write the symbols again after the separator
  Reverse,        // <s> a b c | c b a
  Sort,           // <s> c a b | a b c, in the vocabulary's order (minGPT's sorting demo)
  Text,           // the next character of a text
};

std::optional<TaskKind> parse_task(std::string_view s);
std::string_view to_string(TaskKind k);
std::string_view task_names();  // "induction | previous_token | copy | reverse | sort | text"

inline constexpr int kMinTaskSeqLen = 12;  // room for a repeat at a distance training never used

struct Task {
  TaskKind kind = TaskKind::Induction;
  int vocab = 64;    // symbol tasks: the vocabulary's size, "<s>" and "|" included
  int seq_len = 32;  // every sequence's length
  std::string text;  // the text task's text (UTF-8)
};

// Throws InputError (fields "vocab", "seq_len", "text") when the task cannot be drawn.
void check_task(const Task& t);
// The vocabulary a model trained on the task has: its labels, a token's id its index.
std::vector<std::string> task_vocab(const Task& t);

// Training batch number `index` (from 0) of `size` sequences.
std::vector<Sequence> task_batch(const Task& t, int size, std::uint64_t seed, std::uint64_t index);
// The evaluation batch: fixed, drawn from a stream training never uses. For induction the repeats are farther apart
// than any in training (a head that learned a fixed offset fails it); for text, windows of the text's last tenth,
// which training never reads.
std::vector<Sequence> task_eval_batch(const Task& t, int size);

// Where a sequence repeats itself: tokens [first, first + length) again at [second, second + length).
struct Repeat {
  int first = 0, second = 0, length = 0;
};
// The distances between a segment and its repeat: training draws from [min_length, train_max], evaluation from
// (train_max, seq_len - 1 - min_length].
struct RepeatRange {
  int min_length, max_length, train_max_distance;
};
RepeatRange repeat_range(int seq_len);

// The sequences head scores are measured on: "<s>" (or the text's first character), then distinct symbols where the
// vocabulary allows, one segment of which repeats at a distance training never used.
struct ProbeBatch {
  std::vector<std::vector<int>> ids;
  std::vector<Repeat> repeats;  // one per sequence
};
ProbeBatch probe_batch(const Task& t, int size);

}  // namespace attn
