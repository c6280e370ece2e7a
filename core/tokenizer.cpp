#include "core/tokenizer.h"

#include <algorithm>
#include <array>
#include <functional>
#include <queue>

#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

// GPT-2's bytes_to_unicode: the code point each byte is written as.
constexpr std::array<char32_t, 256> kByteChars = [] {
  std::array<char32_t, 256> chars{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool itself = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    chars[static_cast<std::size_t>(b)] = itself ? static_cast<char32_t>(b) : next++;
  }
  return chars;
}();

// A byte as sentencepiece's byte-fallback piece writes it, and as a piece that is not a whole character shows:
// "<0xE7>".
std::string byte_piece(unsigned char byte) { return "<0x" + upper(hex_text(byte, 2)) + ">"; }

// The UTF-8 characters of s.
std::vector<std::string_view> characters(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::max<std::size_t>(1, utf8_length_at(s, i));
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

// The pieces of `text` a split with `matches` and `behavior` leaves (empty pieces dropped).
std::vector<std::string> split_pieces(std::string_view text, const Spans& matches, SplitBehavior behavior) {
  std::vector<std::pair<std::string_view, bool>> parts;  // in order; true for a match
  std::size_t at = 0;
  for (const auto& [b, e] : matches) {
    if (b > at) parts.emplace_back(text.substr(at, b - at), false);
    parts.emplace_back(text.substr(b, e - b), true);
    at = e;
  }
  if (at < text.size()) parts.emplace_back(text.substr(at), false);
  // A match joins its neighbour (the one before, or with MergedWithNext the one after) when that one is not a match
  // itself; Contiguous joins runs of matches. Walking backwards makes "the one after" the one before.
  const bool backwards = behavior == SplitBehavior::MergedWithNext;
  if (backwards) std::reverse(parts.begin(), parts.end());
  std::vector<std::string> out;
  bool last_was_match = false;
  for (const auto& [part, match] : parts) {
    if (match && behavior == SplitBehavior::Removed) continue;
    const bool joins_neighbour = match && !out.empty() &&
                                 (((behavior == SplitBehavior::MergedWithPrevious || backwards) && !last_was_match) ||
                                  (behavior == SplitBehavior::Contiguous && last_was_match));
    if (!joins_neighbour) out.emplace_back(part);
    else if (backwards) out.back().insert(0, part);
    else out.back() += part;
    last_was_match = match;
  }
  if (backwards) std::reverse(out.begin(), out.end());
  return out;
}

Spans inverted(const Spans& matches, std::size_t size) {
  Spans gaps;
  std::size_t at = 0;
  for (const auto& [b, e] : matches) {
    if (b > at) gaps.emplace_back(at, b);
    at = e;
  }
  if (at < size) gaps.emplace_back(at, size);
  return gaps;
}

// What the normalizers may make of a text: four times the longest text the lab reads (1 MiB). A Replace of "a" by a
// hundred thousand of them made ten million bytes of a hundred, and the tokenizing after them gigabytes.
constexpr std::size_t kMaxNormalizedBytes = std::size_t(1) << 22;

void check_normalized_size(std::size_t bytes) {
  if (bytes > kMaxNormalizedBytes)
    throw InputError("text", "the tokenizer's normalizer makes it " + thousands(bytes) + " bytes, more than the " +
                                 thousands(kMaxNormalizedBytes) + " the lab tokenizes");
}

// s with every `from` replaced by `to`, left to right, sized before it is built.
std::string replaced(const std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  std::size_t count = 0;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + from.size())) ++count;
  const std::size_t size = s.size() - count * from.size() + count * to.size();
  check_normalized_size(size);
  std::string out;
  out.reserve(size);
  std::size_t done = 0;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, done)) {
    out.append(s, done, at - done).append(to);
    done = at + from.size();
  }
  return out.append(s, done, std::string::npos);
}

std::string normalize(const Tokenizer& t, std::string s) {
  for (const Normalizer& n : t.normalizers) switch (n.kind) {
      case Normalizer::Kind::Nfc: s = normalized(s, NormalForm::Nfc); break;
      case Normalizer::Kind::Nfd: s = normalized(s, NormalForm::Nfd); break;
      case Normalizer::Kind::Nfkc: s = normalized(s, NormalForm::Nfkc); break;
      case Normalizer::Kind::Nfkd: s = normalized(s, NormalForm::Nfkd); break;
      case Normalizer::Kind::Prepend:
        if (!s.empty()) s = n.text + s;
        break;
      case Normalizer::Kind::Replace: s = replaced(s, n.text, n.replacement); break;
    }
  check_normalized_size(s.size());  // the Unicode forms and Prepend grow a text by a bounded factor
  return s;
}

std::vector<std::string> split_by(const std::vector<std::string>& pieces, const Regex& r, SplitBehavior b,
                                  bool invert = false) {
  std::vector<std::string> out;
  for (const std::string& p : pieces) {
    const Spans m = r.matches(p);
    for (std::string& q : split_pieces(p, invert ? inverted(m, p.size()) : m, b)) out.push_back(std::move(q));
  }
  return out;
}

std::string byte_level_text(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) out += byte_level_char(static_cast<unsigned char>(c));
  return out;
}

// One pre-tokenizer over the pieces so far; `at_start`: the first piece begins the whole text.
std::vector<std::string> pre_tokenize(const PreTokenizer& p, std::vector<std::string> pieces, bool at_start) {
  switch (p.kind) {
    case PreTokenizer::Kind::Split: return split_by(pieces, *p.pattern, p.behavior, p.invert);
    case PreTokenizer::Kind::Digits: return split_by(pieces, *p.pattern, SplitBehavior::Isolated);
    case PreTokenizer::Kind::ByteLevel:
      for (std::string& q : pieces)
        if (p.add_prefix_space && !q.starts_with(' ')) q.insert(0, " ");
      if (p.pattern) pieces = split_by(pieces, *p.pattern, SplitBehavior::Isolated);
      for (std::string& q : pieces) q = byte_level_text(q);
      return pieces;
    case PreTokenizer::Kind::Metaspace:
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        std::string& q = pieces[i];
        q = replaced(std::move(q), " ", p.replacement);
        const bool prepend = p.prepend == PreTokenizer::Prepend::Always ||
                             (p.prepend == PreTokenizer::Prepend::First && at_start && i == 0);
        if (prepend && !q.starts_with(p.replacement)) q.insert(0, p.replacement);
      }
      return p.pattern ? split_by(pieces, *p.pattern, SplitBehavior::MergedWithNext) : pieces;
  }
  return pieces;
}

struct Symbol {
  int id;  // -1: not in the vocabulary
  std::string text;
};

// A pair of neighbours that a merge joins: its rank, where its left symbol is, and the two ids it was found with
// (a symbol merged since no longer has them).
struct Candidate {
  int rank;
  std::size_t left;
  int left_id, right_id, merged;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

// The merges, lowest rank first and the leftmost of equal ranks, one pair at a time, as tokenizers' BPE does; a
// queue of candidates keeps a long word at n log n.
void merge_symbols(const Tokenizer& t, std::vector<Symbol>& s) {
  const std::size_t n = s.size();
  std::vector<std::size_t> next(n), prev(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = i + 1, prev[i] = i - 1;  // prev[0] wraps: no symbol there
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto consider = [&](std::size_t l) {
    if (l >= n || next[l] >= n || s[l].id < 0 || s[next[l]].id < 0) return;
    const auto key = static_cast<std::uint64_t>(s[l].id) << 32 | static_cast<std::uint32_t>(s[next[l]].id);
    if (const auto it = t.merges.find(key); it != t.merges.end())
      queue.push({it->second.first, l, s[l].id, s[next[l]].id, it->second.second});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) consider(i);
  std::vector<bool> gone(n, false);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    const std::size_t r = next[c.left];
    if (gone[c.left] || r >= n || s[c.left].id != c.left_id || s[r].id != c.right_id) continue;  // stale
    s[c.left] = {c.merged, s[c.left].text + s[r].text};
    gone[r] = true;
    next[c.left] = next[r];
    if (next[r] < n) prev[next[r]] = c.left;
    if (c.left > 0) consider(prev[c.left]);
    consider(c.left);
  }
  std::vector<Symbol> kept;
  for (std::size_t i = 0; i < n; ++i)
    if (!gone[i]) kept.push_back(std::move(s[i]));
  s = std::move(kept);
}

// A symbol outside the vocabulary: its bytes as <0xXX> pieces (byte_fallback), else the unknown token.
// fuse_unk joins unknown tokens in a row within one word (from `word_start` in ids).
void unknown_symbol(const Tokenizer& t, const Symbol& s, std::vector<int>& ids, std::size_t word_start) {
  if (t.byte_fallback) {
    std::vector<int> bytes;
    for (const char c : s.text) {
      const auto it = t.vocab.find(byte_piece(static_cast<unsigned char>(c)));
      if (it == t.vocab.end()) break;
      bytes.push_back(it->second);
    }
    if (bytes.size() == s.text.size()) {
      ids.insert(ids.end(), bytes.begin(), bytes.end());
      return;
    }
  }
  if (!t.unk)
    throw InputError("text", "\"" + escaped_text(s.text) + "\" is not in the vocabulary, which has no unknown token");
  const bool fused = t.fuse_unk && ids.size() > word_start && ids.back() == *t.unk;
  if (!fused) ids.push_back(*t.unk);
}

void bpe(const Tokenizer& t, const std::string& word, std::vector<int>& ids) {
  if (word.empty()) return;
  if (t.ignore_merges)
    if (const auto it = t.vocab.find(word); it != t.vocab.end()) return ids.push_back(it->second);
  std::vector<Symbol> symbols;
  for (const std::string_view c : characters(word)) {
    const auto it = t.vocab.find(std::string(c));
    symbols.push_back({it == t.vocab.end() ? -1 : it->second, std::string(c)});
  }
  merge_symbols(t, symbols);
  const std::size_t word_start = ids.size();
  for (const Symbol& s : symbols)
    if (s.id >= 0) ids.push_back(s.id);
    else unknown_symbol(t, s, ids, word_start);
}

// One stretch of text between added tokens: normalised, pre-tokenized, each piece merged.
void encode_segment(const Tokenizer& t, std::string_view segment, bool at_start, Encoding& e) {
  if (segment.empty()) return;  // nothing between two added tokens: no piece, not even a prepended "▁"
  std::vector<std::string> pieces{normalize(t, std::string(segment))};
  for (const PreTokenizer& p : t.pre_tokenizers) pieces = pre_tokenize(p, std::move(pieces), at_start);
  for (const std::string& w : pieces) {
    const int word = e.words.empty() ? 0 : e.words.back() + 1;
    bpe(t, w, e.ids);
    e.words.resize(e.ids.size(), word);
  }
}

// `id` as a word of its own (a special or template token).
void add_word(Encoding& e, int id) {
  e.words.push_back(e.words.empty() ? 0 : e.words.back() + 1);
  e.ids.push_back(id);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The added token that starts at text[i], the longest when several do.
const AddedToken* added_at(const Tokenizer& t, std::string_view text, std::size_t i) {
  const AddedToken* found = nullptr;
  for (const AddedToken& a : t.added)
    if (!a.content.empty() && text.substr(i).starts_with(a.content) &&
        (!found || a.content.size() > found->content.size()))
      found = &a;
  return found;
}

}  // namespace

std::string byte_level_char(unsigned char byte) {
  std::string s;
  append_utf8(s, kByteChars[byte]);
  return s;
}

std::optional<std::string> byte_level_bytes(std::string_view piece) {
  std::string bytes;
  for (std::size_t i = 0; i < piece.size();) {
    const auto at = std::find(kByteChars.begin(), kByteChars.end(), next_code_point(piece, i));
    if (at == kByteChars.end()) return std::nullopt;  // U+FFFD, for bytes that are no character, is not one either
    bytes += static_cast<char>(at - kByteChars.begin());
  }
  return bytes;
}

namespace {

void check_utf8(std::string_view text) {
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
    throw InputError("text",
                     "byte " + thousands(bad + 1) + " is not UTF-8 (" + escaped_text(text.substr(bad, 1)) + ")");
}

// The text as encode reads it, in order: each stretch between added tokens (`segment(stretch, at_start)`) and each
// added token (`added(id)`), the template's tokens not included.
template <class Segment, class Added>
void walk_text(const Tokenizer& t, std::string_view text, Segment&& segment, Added&& added) {
  std::size_t start = 0;  // where the text not yet walked begins
  for (std::size_t i = 0; i < text.size();) {
    const AddedToken* a = added_at(t, text, i);
    if (!a) {
      ++i;
      continue;
    }
    std::size_t before = i, after = i + a->content.size();
    if (a->lstrip)
      while (before > start && is_space(text[before - 1])) --before;
    if (a->rstrip)
      while (after < text.size() && is_space(text[after])) ++after;
    segment(text.substr(start, before - start), start == 0);
    added(a->id);
    i = start = after;
  }
  segment(text.substr(start), start == 0);
}

// How many symbols a pre-tokenized text may have per symbol of its normalized one: a pre-tokenizer that puts a
// space or "▁" before every piece (there are at most as many pieces as symbols) doubles them, one that puts it
// before the first adds one (counted by the caller's slack).
std::int64_t prefixing_factor(const Tokenizer& t) {
  for (const PreTokenizer& p : t.pre_tokenizers)
    if ((p.kind == PreTokenizer::Kind::ByteLevel && p.add_prefix_space) ||
        (p.kind == PreTokenizer::Kind::Metaspace && p.prepend == PreTokenizer::Prepend::Always))
      return 2;
  return 1;
}

// The symbols BPE starts from in a normalized text, or the tokens they may become: its bytes (byte-level, or byte
// fallback, which makes a character outside the vocabulary a token per byte), else its characters.
std::int64_t symbols_in(const Tokenizer& t, std::string_view normalized) {
  if (t.byte_level || t.byte_fallback) return static_cast<std::int64_t>(normalized.size());
  return std::count_if(normalized.begin(), normalized.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

}  // namespace

std::int64_t symbol_bound(const Tokenizer& t, std::string_view text) {
  check_utf8(text);
  const std::int64_t factor = prefixing_factor(t);
  auto symbols = static_cast<std::int64_t>(t.prefix.size() + t.suffix.size());
  walk_text(
      t, text,
      [&](std::string_view segment, bool) {
        if (!segment.empty()) symbols += factor * symbols_in(t, normalize(t, std::string(segment))) + 1;
      },
      [&](int) { ++symbols; });
  return symbols;
}

std::int64_t encode_bytes(const Tokenizer& t, std::string_view text) {
  return kEncodeBytesPerSymbol * symbol_bound(t, text);
}

Encoding encode(const Tokenizer& t, std::string_view text) {
  check_utf8(text);
  Encoding e;
  for (const int id : t.prefix) add_word(e, id);
  walk_text(
      t, text, [&](std::string_view segment, bool at_start) { encode_segment(t, segment, at_start, e); },
      [&](int id) { add_word(e, id); });
  for (const int id : t.suffix) add_word(e, id);
  for (const int id : e.ids) e.pieces.push_back(shown_piece(t, id));
  return e;
}

std::string shown_piece(const Tokenizer& t, int id) {
  if (id < 0 || id >= t.vocab_size()) return "";
  const std::string& piece = t.pieces[static_cast<std::size_t>(id)];
  for (const AddedToken& a : t.added)
    if (a.id == id) return piece;
  std::string bytes = piece;
  if (t.byte_level) {
    if (const std::optional<std::string> b = byte_level_bytes(piece)) bytes = *b;
  } else if (piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>') {
    return piece;
  } else {
    bytes = replaced(piece, "\u2581", " ");
  }
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8_length_at(bytes, i);
    const char c = bytes[i];
    if (n == 0) out += byte_piece(static_cast<unsigned char>(c));
    else if (c == ' ') out += "\u2423";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (n == 1 && (static_cast<unsigned char>(c) < 0x20 || c == 0x7F))
      out += byte_piece(static_cast<unsigned char>(c));
    else out.append(bytes, i, n);
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace attn
