#pragma once
// A BPE tokenizer as Hugging Face's tokenizers library runs one (tokenizer.json): added tokens split out first, then
// each piece of text between them normalised, pre-tokenized, and merged pair by pair in the order of the merges; the
// post-processor's template adds BOS or EOS. GPT-2, SmolLM2, Qwen2 and Llama 3 are byte-level (every byte a symbol,
// written as a visible character); Llama 2 and TinyLlama are sentencepiece-style (characters as symbols, a space as
// "▁", a character outside the vocabulary as its bytes <0xXX>). The patterns a file gives run as written
// (core/unicode_text.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/unicode_text.h"

namespace attn {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct Normalizer {
  enum class Kind { Nfc, Nfd, Nfkc, Nfkd, Prepend, Replace };
  Kind kind = Kind::Nfc;
  std::string text{}, replacement{};  // Prepend: `text` before the piece; Replace: every `text` by `replacement`
};

struct PreTokenizer {
  enum class Kind { Split, ByteLevel, Digits, Metaspace };
  Kind kind = Kind::Split;
  // Compiled once, when the tokenizer is read. Split: the file's; ByteLevel: GPT-2's (use_regex), or none; Digits:
  // \p{N} (individual_digits) or \p{N}+; Metaspace: the replacement, where pieces start (split), or none.
  std::shared_ptr<const Regex> pattern{};
  SplitBehavior behavior = SplitBehavior::Isolated;  // Split's
  bool invert = false;                               // Split: the text between matches is what the behaviour places
  bool add_prefix_space = false;                     // ByteLevel: a space before a piece that does not start with one
  std::string replacement = "\u2581";                // Metaspace: what a space becomes
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;  // Metaspace: a replacement before the text
};

struct AddedToken {
  int id = 0;
  std::string content{};
  bool special = false, lstrip = false, rstrip = false;
};

struct Tokenizer {
  std::vector<std::string> pieces;             // id -> piece, as the vocabulary writes it
  std::unordered_map<std::string, int> vocab;  // piece -> id
  // (left id << 32 | right id) -> {rank, merged id}: the merges, lower ranks first.
  std::unordered_map<std::uint64_t, std::pair<int, int>> merges;
  bool byte_level = false;  // symbols are bytes written as GPT-2's visible characters
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
  std::optional<int> unk;
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> pre_tokenizers;
  std::vector<AddedToken> added;    // longest first when two start at one place
  std::vector<int> prefix, suffix;  // the post-processor's template around a single text: BOS, EOS
  int vocab_size() const { return static_cast<int>(pieces.size()); }
};

struct Encoding {
  std::vector<int> ids;
  std::vector<std::string> pieces;  // each id's piece as shown_piece writes it
  // Each id's word, numbered from 0: the pre-tokenizer's piece its merges started from, so the pieces of one word
  // share a number (a special or template token is a word of its own).
  std::vector<int> words;
};

// The ids Hugging Face's tokenizer(text) gives (the template's special tokens included). `text` must be UTF-8:
// InputError (field "text", the byte's offset) otherwise.
Encoding encode(const Tokenizer& t, std::string_view text);

// An upper bound on the symbols BPE starts from in `text`, and so on its tokens, the template's included: the
// stretches between added tokens normalized and counted in characters (in bytes for a byte-level tokenizer or one
// with byte fallback), doubled when a pre-tokenizer prefixes every piece, and one per added token. It normalizes the
// text (a few copies of it at most) but makes no token: what tokenizing will hold is known before it starts.
// InputError as encode's for a text that is not UTF-8.
std::int64_t symbol_bound(const Tokenizer& t, std::string_view text);
// What encode holds at its peak per symbol of symbol_bound, its Encoding included: a word's symbols (40 bytes each)
// and their merged copies (40), the links between them (16) and the queue of pairs (32), the normalized text and
// its pieces, and the encoding's id, word and piece (40 and the piece's characters), with room for the vectors'
// growth. Measured: 147 at most (peak resident memory less the program's), on 1 MiB of one character repeated,
// of newlines, of emoji and of one-letter words.
inline constexpr std::int64_t kEncodeBytesPerSymbol = 224;
// kEncodeBytesPerSymbol x symbol_bound: checked against the memory budget before encode runs.
std::int64_t encode_bytes(const Tokenizer& t, std::string_view text);

// A piece as people read it: a byte-level piece's bytes as text, a space as "␣" (the ▁ of sentencepiece too), a
// newline as "\n"; bytes that are not whole UTF-8 characters as <0xE7>.
std::string shown_piece(const Tokenizer& t, int id);

// GPT-2's pre-tokenizer pattern, which ByteLevel with use_regex applies.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// GPT-2's map of bytes to visible characters: bytes 33-126, 161-172 and 174-255 stand for themselves, the other 68
// (space, controls, 127-160, 173) for U+0100 onwards in order (space is "Ġ", U+0120).
std::string byte_level_char(unsigned char byte);
// The bytes a byte-level piece stands for; nullopt when a character is not one of the 256.
std::optional<std::string> byte_level_bytes(std::string_view piece);

}  // namespace attn
