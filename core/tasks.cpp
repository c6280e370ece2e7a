#include "core/tasks.h"

#include <algorithm>
#include <numeric>

#include "core/name_table.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

constexpr NameTable<TaskKind, 6> kTaskNames{{
    {TaskKind::Induction, "induction"},
    {TaskKind::PreviousToken, "previous_token"},
    {TaskKind::Copy, "copy"},
    {TaskKind::Reverse, "reverse"},
    {TaskKind::Sort, "sort"},
    {TaskKind::Text, "text"},
}};

constexpr int kBos = 0, kSeparator = 1, kFirstSymbol = 2;  // the symbol tasks' vocabulary
constexpr int kMinSymbols = 2;
constexpr int kTextEvalShare = 10;                    // the text's last tenth is for evaluation
constexpr std::uint64_t kEvalSeed = 0x5eed0f5eedULL;  // the evaluation and probe batches' own seed
enum Stream : std::uint64_t { kTrainStream = 1, kEvalStream = 2, kProbeStream = 3 };

// splitmix64 (Steele, Lea and Flood): tiny, well mixed, and the same on every platform, unlike std's distributions.
__extension__ typedef unsigned __int128 Wide;  // GCC and Clang: the exact 128-bit product

class Draw {
 public:
  Draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
      : state_(seed ^ mix(stream * 0x9e3779b97f4a7c15ULL + mix(index))) {}
  std::uint64_t next() { return mix(state_ += 0x9e3779b97f4a7c15ULL); }
  // In [0, n): the high half of a 64 x 64 bit product (Lemire), a bias below n / 2^64.
  int below(int n) { return static_cast<int>((static_cast<Wide>(next()) * std::uint64_t(n)) >> 64); }
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

// The ids a task draws its symbols from, and the token every sequence starts with (none for text).
struct Symbols {
  int first, count, bos;
};
Symbols symbols_of(const Task& t) {
  if (t.kind == TaskKind::Text) return {0, static_cast<int>(task_vocab(t).size()), -1};
  return {kFirstSymbol, t.vocab - kFirstSymbol, kBos};
}

// `count` symbols, all different while the vocabulary has enough (a partial Fisher-Yates shuffle).
std::vector<int> distinct_symbols(Draw& d, int count, const Symbols& s) {
  std::vector<int> out;
  if (count > s.count) {
    for (int i = 0; i < count; ++i) out.push_back(s.first + d.below(s.count));
    return out;
  }
  std::vector<int> pool(static_cast<std::size_t>(s.count));
  std::iota(pool.begin(), pool.end(), s.first);
  for (int i = 0; i < count; ++i) {
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(i + d.below(s.count - i))]);
    out.push_back(pool[static_cast<std::size_t>(i)]);
  }
  return out;
}

// A sequence of seq_len tokens: the start token, then distinct symbols, one segment of which repeats. `held_out`
// draws the distance from beyond anything training draws.
std::vector<int> repeated_sequence(Draw& d, const Symbols& s, int seq_len, bool held_out, Repeat& r) {
  const RepeatRange range = repeat_range(seq_len);
  const int longest = held_out ? std::min(range.max_length, seq_len - 2 - range.train_max_distance) : range.max_length;
  r.length = d.between(range.min_length, longest);
  const int distance = held_out ? d.between(range.train_max_distance + 1, seq_len - 1 - r.length)
                                : d.between(r.length, range.train_max_distance);
  r.first = d.between(1, seq_len - r.length - distance);
  r.second = r.first + distance;
  const int start = s.bos >= 0 ? 1 : 0;
  const std::vector<int> fill = distinct_symbols(d, seq_len - start - r.length, s);
  std::vector<int> ids;
  if (s.bos >= 0) ids.push_back(s.bos);
  for (int p = start, next = 0; p < seq_len; ++p)
    ids.push_back(p >= r.second && p < r.second + r.length ? ids[static_cast<std::size_t>(p - r.second + r.first)]
                                                           : fill[static_cast<std::size_t>(next++)]);
  return ids;
}

Sequence induction_sequence(Draw& d, const Task& t, bool held_out) {
  Repeat r;
  Sequence q{repeated_sequence(d, symbols_of(t), t.seq_len, held_out, r), {}};
  q.targets.assign(q.ids.size(), kNoTarget);
  for (int p = r.second; p < r.second + r.length - 1; ++p)  // the repeat's first token cannot be foreseen
    q.targets[static_cast<std::size_t>(p)] = q.ids[static_cast<std::size_t>(p + 1)];
  return q;
}

Sequence previous_token_sequence(Draw& d, const Task& t) {
  Sequence q{{kBos}, {kNoTarget}};
  for (int p = 1; p < t.seq_len; ++p) {
    q.targets.push_back(q.ids.back());
    q.ids.push_back(kFirstSymbol + d.below(t.vocab - kFirstSymbol));
  }
  return q;
}

// <s> question | answer: the targets are the answer, each predicted from what comes before it.
Sequence answer_sequence(Draw& d, const Task& t) {
  const int m = (t.seq_len - 2) / 2;
  std::vector<int> question;
  for (int i = 0; i < m; ++i) question.push_back(kFirstSymbol + d.below(t.vocab - kFirstSymbol));
  std::vector<int> answer = question;
  if (t.kind == TaskKind::Reverse) std::reverse(answer.begin(), answer.end());
  if (t.kind == TaskKind::Sort) std::sort(answer.begin(), answer.end());
  Sequence q{{kBos}, {kNoTarget}};
  q.ids.insert(q.ids.end(), question.begin(), question.end());
  q.ids.push_back(kSeparator);
  q.ids.insert(q.ids.end(), answer.begin(), answer.end());
  q.targets.assign(q.ids.size(), kNoTarget);
  for (int k = 0; k < m; ++k) q.targets[static_cast<std::size_t>(m + 1 + k)] = answer[static_cast<std::size_t>(k)];
  return q;
}

// The text's characters (UTF-8 sequences), each a label a vocabulary can hold: space, newline and tab get
// visible stand-ins, other control characters are left out.
std::vector<std::string> text_characters(const std::string& text) {
  std::vector<std::string> chars;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xc0) == 0x80) ++n;
    const std::string c = text.substr(i, n);
    i += n;
    if (c == " " || c == "\t") chars.push_back("\u2423");  // ␣
    else if (c == "\n") chars.push_back("\u21b5");         // ↵
    else if (c.size() > 1 || (static_cast<unsigned char>(c[0]) >= 0x20 && c[0] != 0x7f)) chars.push_back(c);
  }
  return chars;
}

std::vector<int> text_ids(const Task& t) {
  const std::vector<std::string> vocab = task_vocab(t);
  std::vector<int> ids;
  for (const std::string& c : text_characters(t.text))
    ids.push_back(static_cast<int>(std::lower_bound(vocab.begin(), vocab.end(), c) - vocab.begin()));
  return ids;
}

// A window of the text: seq_len characters, each predicting the next. Training reads the first nine tenths,
// evaluation the last tenth.
Sequence text_sequence(Draw& d, const std::vector<int>& ids, int seq_len, bool eval) {
  const int n = static_cast<int>(ids.size()), split = n - n / kTextEvalShare;
  const int start = eval ? d.between(split, n - seq_len - 1) : d.below(split - seq_len);
  Sequence q;
  q.ids.assign(ids.begin() + start, ids.begin() + start + seq_len);
  q.targets.assign(ids.begin() + start + 1, ids.begin() + start + seq_len + 1);
  return q;
}

std::vector<Sequence> draw_batch(const Task& t, int size, Draw& d, bool eval) {
  check_task(t);
  check_range(size, 1, 1 << 16, "batch");
  const std::vector<int> text = t.kind == TaskKind::Text ? text_ids(t) : std::vector<int>{};
  std::vector<Sequence> batch;
  for (int b = 0; b < size; ++b) switch (t.kind) {
      case TaskKind::Induction: batch.push_back(induction_sequence(d, t, eval)); break;
      case TaskKind::PreviousToken: batch.push_back(previous_token_sequence(d, t)); break;
      case TaskKind::Copy:
      case TaskKind::Reverse:
      case TaskKind::Sort: batch.push_back(answer_sequence(d, t)); break;
      case TaskKind::Text: batch.push_back(text_sequence(d, text, t.seq_len, eval)); break;
    }
  return batch;
}

}  // namespace

std::optional<TaskKind> parse_task(std::string_view s) { return parse_name(kTaskNames, s); }
std::string_view to_string(TaskKind k) { return name_of(kTaskNames, k); }
std::string_view task_names() { return "induction | previous_token | copy | reverse | sort | text"; }

RepeatRange repeat_range(int seq_len) { return {3, std::max(3, seq_len / 4), seq_len / 2}; }

void check_task(const Task& t) {
  check_range(t.seq_len, kMinTaskSeqLen, limits::kMaxTokens, "seq_len");
  if (t.kind != TaskKind::Text) {
    check_range(t.vocab, kFirstSymbol + kMinSymbols, limits::kMaxVocab, "vocab");
    return;
  }
  // Its characters become a vocabulary, written into JSON and drawn by fonts: both need UTF-8.
  if (const std::size_t bad = invalid_utf8_at(t.text); bad != std::string::npos)
    throw InputError("", line_and_column(t.text, bad + 1) + ": not valid UTF-8 text");
  const std::int64_t chars = static_cast<std::int64_t>(text_characters(t.text).size());
  const std::int64_t needed = std::int64_t(kTextEvalShare) * (t.seq_len + 1);
  if (chars < needed)
    throw InputError("text", "has " + plural(chars, "character") + "; sequences of " + std::to_string(t.seq_len) +
                                 " need at least " + std::to_string(needed) +
                                 ", so that its last tenth holds a whole evaluation window");
}

std::vector<std::string> task_vocab(const Task& t) {
  if (t.kind == TaskKind::Text) {
    std::vector<std::string> chars = text_characters(t.text);
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
    return chars;
  }
  // Short labels that read at a glance on a heatmap's axis: letters, then digits, then numbered symbols.
  static constexpr std::string_view kGlyphs = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::vector<std::string> v{"<s>", "|"};
  for (int i = 0; i + kFirstSymbol < t.vocab; ++i)
    v.push_back(i < static_cast<int>(kGlyphs.size()) ? std::string(1, kGlyphs[static_cast<std::size_t>(i)])
                                                     : "s" + std::to_string(i));
  return v;
}

std::vector<Sequence> task_batch(const Task& t, int size, std::uint64_t seed, std::uint64_t index) {
  Draw d(seed, kTrainStream, index);
  return draw_batch(t, size, d, false);
}

std::vector<Sequence> task_eval_batch(const Task& t, int size) {
  Draw d(kEvalSeed, kEvalStream, 0);
  return draw_batch(t, size, d, true);
}

ProbeBatch probe_batch(const Task& t, int size) {
  check_task(t);
  Draw d(kEvalSeed, kProbeStream, 0);
  ProbeBatch p;
  for (int b = 0; b < size; ++b)
    p.ids.push_back(repeated_sequence(d, symbols_of(t), t.seq_len, true, p.repeats.emplace_back()));
  return p;
}

}  // namespace attn
