#include "core/io/tokenizer_json.h"

#include <algorithm>
#include <sstream>

#include "core/io/json_fields.h"
#include "core/io/safetensors.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::json;

// Qwen2.5's tokenizer.json is 7 MB; Llama 3's 9 MB.
constexpr std::uintmax_t kMaxTokenizerBytes = 64u << 20;
constexpr std::int64_t kMaxTokenId = (std::int64_t{1} << 31) - 1;

std::string type_of(const ForeignFields& f) { return f.text("type", ""); }

[[noreturn]] void unknown_type(const ForeignFields& f, std::string_view what, std::string_view known) {
  throw InputError(f.field("type"), "\"" + escaped_text(type_of(f)) + "\" is not a " + std::string(what) +
                                        " the lab runs; it runs " + std::string(known));
}

// The items of a Sequence ("normalizers", "pretokenizers", "processors"), each read by `one`.
template <typename F>
void each_in_sequence(const ForeignFields& f, const char* key, F one) {
  const json* items = f.find(key);
  if (!items || !items->is_array())
    throw InputError(f.field(key), "expected an array but found " + (items ? describe_found(*items) : "none"));
  for (std::size_t i = 0; i < items->size(); ++i) {
    if (!(*items)[i].is_object())
      throw InputError(f.field(key) + "[" + std::to_string(i) + "]",
                       "expected an object but found " + describe_found((*items)[i]));
    one(ForeignFields{(*items)[i], f.field(key) + "[" + std::to_string(i) + "]."});
  }
}

void read_normalizer(const ForeignFields& f, Tokenizer& t) {
  const std::string type = type_of(f);
  using K = Normalizer::Kind;
  if (type == "Sequence")
    return each_in_sequence(f, "normalizers", [&](const ForeignFields& n) { read_normalizer(n, t); });
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD")
    return t.normalizers.push_back({type == "NFC"    ? K::Nfc
                                    : type == "NFD"  ? K::Nfd
                                    : type == "NFKC" ? K::Nfkc
                                                     : K::Nfkd});
  if (type == "Prepend") return t.normalizers.push_back({K::Prepend, f.text("prepend", ""), ""});
  if (type == "Replace") {
    const ForeignFields pattern = f.object("pattern");
    if (!pattern.find("String"))
      throw InputError(pattern.field("String"), "the lab replaces a string, not a pattern, in a normalizer");
    return t.normalizers.push_back({K::Replace, pattern.text("String", ""), f.text("content", "")});
  }
  unknown_type(f, "normalizer", "NFC, NFD, NFKC, NFKD, Prepend, Replace and Sequence");
}

SplitBehavior split_behavior(const ForeignFields& f) {
  const std::string b = f.text("behavior", "Isolated");
  if (b == "Isolated") return SplitBehavior::Isolated;
  if (b == "Removed") return SplitBehavior::Removed;
  if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (b == "Contiguous") return SplitBehavior::Contiguous;
  throw InputError(f.field("behavior"),
                   "expected Isolated, Removed, MergedWithPrevious, MergedWithNext or Contiguous but "
                   "found \"" +
                       escaped_text(b) + "\"");
}

std::shared_ptr<const Regex> compiled(std::string_view pattern, const std::string& field) {
  try {
    return std::make_shared<const Regex>(pattern);
  } catch (const InputError& e) {
    throw InputError(field, e.what());
  }
}

PreTokenizer split_step(const ForeignFields& f) {
  PreTokenizer p;
  p.kind = PreTokenizer::Kind::Split;
  const ForeignFields pattern = f.object("pattern");
  if (pattern.find("Regex")) p.pattern = compiled(pattern.text("Regex", ""), pattern.field("Regex"));
  else p.pattern = compiled(literal_pattern(pattern.text("String", "")), pattern.field("String"));
  p.behavior = split_behavior(f);
  p.invert = f.boolean("invert", false);
  return p;
}

PreTokenizer metaspace_step(const ForeignFields& f) {
  PreTokenizer p;
  p.kind = PreTokenizer::Kind::Metaspace;
  p.replacement = f.text("replacement", "\u2581");
  if (p.replacement.empty()) throw InputError(f.field("replacement"), "must not be empty");
  const std::string scheme = f.text("prepend_scheme", f.boolean("add_prefix_space", true) ? "always" : "never");
  if (scheme == "always") p.prepend = PreTokenizer::Prepend::Always;
  else if (scheme == "first") p.prepend = PreTokenizer::Prepend::First;
  else if (scheme == "never") p.prepend = PreTokenizer::Prepend::Never;
  else
    throw InputError(f.field("prepend_scheme"),
                     "expected always, first or never but found \"" + escaped_text(scheme) + "\"");
  if (f.boolean("split", true)) p.pattern = compiled(literal_pattern(p.replacement), f.field("replacement"));
  return p;
}

void read_pre_tokenizer(const ForeignFields& f, Tokenizer& t) {
  const std::string type = type_of(f);
  if (type == "Sequence")
    return each_in_sequence(f, "pretokenizers", [&](const ForeignFields& p) { read_pre_tokenizer(p, t); });
  if (type == "Split") return t.pre_tokenizers.push_back(split_step(f));
  if (type == "Metaspace") return t.pre_tokenizers.push_back(metaspace_step(f));
  if (type == "Digits")
    return t.pre_tokenizers.push_back(
        {.kind = PreTokenizer::Kind::Digits,
         .pattern =
             compiled(f.boolean("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", f.field("individual_digits"))});
  if (type == "ByteLevel") {
    t.byte_level = true;
    PreTokenizer p{.kind = PreTokenizer::Kind::ByteLevel, .add_prefix_space = f.boolean("add_prefix_space", true)};
    if (f.boolean("use_regex", true)) p.pattern = compiled(kGpt2Pattern, f.field("use_regex"));
    return t.pre_tokenizers.push_back(std::move(p));
  }
  unknown_type(f, "pre-tokenizer", "ByteLevel, Split, Digits, Metaspace and Sequence");
}

int token_id(const json& v, const std::string& field) {
  if (!v.is_number_integer()) throw InputError(field, "expected a token id but found " + describe_found(v));
  return static_cast<int>(integer_within(v, 0, kMaxTokenId, field));
}

// The ids the template's special token `name` stands for.
std::vector<int> special_ids(const ForeignFields& f, const std::string& name) {
  const ForeignFields specials = f.object("special_tokens");
  const json* s = specials.find(name);
  if (!s || !s->is_object() || !s->contains("ids") || !(*s)["ids"].is_array())
    throw InputError(specials.field(name), "expected {\"ids\": [...]} for the template's special token");
  std::vector<int> ids;
  for (std::size_t i = 0; i < (*s)["ids"].size(); ++i)
    ids.push_back(token_id((*s)["ids"][i], specials.field(name) + ".ids[" + std::to_string(i) + "]"));
  return ids;
}

// TemplateProcessing's template for one text: the special tokens before the text (the prefix) and after it.
void read_template(const ForeignFields& f, Tokenizer& t) {
  const json* single = f.find("single");
  if (!single || !single->is_array()) throw InputError(f.field("single"), "expected the template for one text");
  bool after = false;
  for (std::size_t i = 0; i < single->size(); ++i) {
    const json& item = (*single)[i];
    const std::string at = f.field("single") + "[" + std::to_string(i) + "]";
    if (item.contains("Sequence")) {
      after = true;
    } else if (item.contains("SpecialToken") && item["SpecialToken"].is_object()) {
      const std::string name = ForeignFields{item["SpecialToken"], at + ".SpecialToken."}.text("id", "");
      for (const int id : special_ids(f, name)) (after ? t.suffix : t.prefix).push_back(id);
    } else {
      throw InputError(at, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...} but found " + describe_found(item));
    }
  }
}

void read_post_processor(const ForeignFields& f, Tokenizer& t) {
  const std::string type = type_of(f);
  if (type == "Sequence")
    return each_in_sequence(f, "processors", [&](const ForeignFields& p) { read_post_processor(p, t); });
  if (type == "ByteLevel") return;  // offsets only
  if (type == "TemplateProcessing") return read_template(f, t);
  unknown_type(f, "post-processor", "TemplateProcessing, ByteLevel and Sequence");
}

// `ids`: how many the file's pieces and added tokens are. They number them from 0; an id past them would leave ids
// unused and, as the table of pieces is as long as the largest id, take memory no vocabulary needs (2,147,483,647
// asked for 64 GiB).
void place_piece(Tokenizer& t, int id, const std::string& piece, const std::string& field, std::size_t ids) {
  if (static_cast<std::size_t>(id) >= ids)
    throw InputError(field, "id " + thousands(static_cast<std::uint64_t>(id)) + " leaves ids unused: the file's " +
                                thousands(ids) + " pieces and added tokens number them from 0 to " +
                                thousands(ids - 1));
  if (static_cast<std::size_t>(id) >= t.pieces.size()) t.pieces.resize(static_cast<std::size_t>(id) + 1);
  std::string& at = t.pieces[static_cast<std::size_t>(id)];
  if (!at.empty() && at != piece)
    throw InputError(field, "id " + std::to_string(id) + " is \"" + escaped_text(at) + "\" already, not \"" +
                                escaped_text(piece) + "\"");
  at = piece;
}

void read_vocab(const json& vocab, const std::string& field, Tokenizer& t, std::size_t ids) {
  if (!vocab.is_object()) throw InputError(field, "expected an object {piece: id} but found " + describe_found(vocab));
  for (const auto& [piece, id] : vocab.items()) {
    const std::string at = (field.empty() ? "" : field + ".") + escaped_text(piece);  // vocab.json's field is its own
    const int i = token_id(id, at);
    place_piece(t, i, piece, at, ids);
    t.vocab.emplace(piece, i);
  }
}

// One merge, "a b" or ["a", "b"]: both pieces and what they make must be in the vocabulary.
void read_merge(const json& m, int rank, const std::string& field, Tokenizer& t) {
  std::string a, b;
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    const std::size_t space = s.find(' ');
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
      throw InputError(field, "expected two pieces with a space between but found \"" + escaped_text(s) + "\"");
    a = s.substr(0, space), b = s.substr(space + 1);
  } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    a = m[0].get<std::string>(), b = m[1].get<std::string>();
  } else {
    throw InputError(field, "expected \"a b\" or [\"a\", \"b\"] but found " + describe_found(m));
  }
  const auto id = [&](const std::string& piece) {
    const auto it = t.vocab.find(piece);
    if (it == t.vocab.end())
      throw InputError(field, "\"" + escaped_text(piece) + "\" is not in the vocabulary (merging \"" + escaped_text(a) +
                                  "\" and \"" + escaped_text(b) + "\")");
    return it->second;
  };
  const std::uint64_t key = static_cast<std::uint64_t>(id(a)) << 32 | static_cast<std::uint32_t>(id(b));
  t.merges.try_emplace(key, rank, id(a + b));  // a pair listed twice keeps its first rank
}

void read_bpe_model(const ForeignFields& f, Tokenizer& t, std::size_t ids) {
  if (const std::string type = f.text("type", "BPE"); type != "BPE")
    throw InputError(f.field("type"), "\"" + escaped_text(type) + "\" is not a model the lab runs; it runs BPE");
  if (!f.text("continuing_subword_prefix", "").empty() || !f.text("end_of_word_suffix", "").empty())
    throw InputError(f.field("continuing_subword_prefix"), "subword prefixes and suffixes are not read by the lab");
  if (const json* d = f.find("dropout"); d && !(d->is_number() && d->get<double>() == 0))
    throw InputError(f.field("dropout"), "must be null or 0: dropout makes tokenizing random");
  read_vocab(f.j.contains("vocab") ? f.j.at("vocab") : json(), f.field("vocab"), t, ids);
  const json* merges = f.find("merges");
  if (merges && !merges->is_array())
    throw InputError(f.field("merges"), "expected an array but found " + describe_found(*merges));
  for (std::size_t i = 0; merges && i < merges->size(); ++i)
    read_merge((*merges)[i], static_cast<int>(i), f.field("merges") + "[" + std::to_string(i) + "]", t);
  t.byte_fallback = f.boolean("byte_fallback", false);
  t.fuse_unk = f.boolean("fuse_unk", false);
  t.ignore_merges = f.boolean("ignore_merges", false);
  if (const std::string unk = f.text("unk_token", ""); !unk.empty()) {
    const auto it = t.vocab.find(unk);
    if (it == t.vocab.end())
      throw InputError(f.field("unk_token"), "\"" + escaped_text(unk) + "\" is not in the vocabulary");
    t.unk = it->second;
  }
}

void read_added_tokens(const json& added, Tokenizer& t, std::size_t ids) {
  if (!added.is_array()) throw InputError("added_tokens", "expected an array but found " + describe_found(added));
  for (std::size_t i = 0; i < added.size(); ++i) {
    const std::string at = "added_tokens[" + std::to_string(i) + "]";
    if (!added[i].is_object()) throw InputError(at, "expected an object but found " + describe_found(added[i]));
    const ForeignFields a{added[i], at + "."};
    AddedToken token{.id = token_id(a.find("id") ? *a.find("id") : json(), a.field("id")),
                     .content = a.text("content", ""),
                     .special = a.boolean("special", false),
                     .lstrip = a.boolean("lstrip", false),
                     .rstrip = a.boolean("rstrip", false)};
    if (token.content.empty()) throw InputError(a.field("content"), "an added token must have content");
    if (a.boolean("single_word", false))
      throw InputError(a.field("single_word"), "true is not read by the lab (a token matched only as a whole word)");
    place_piece(t, token.id, token.content, a.field("id"), ids);
    t.added.push_back(std::move(token));
  }
}

}  // namespace

Tokenizer parse_tokenizer_json(std::string_view text) {
  const json j = parse_json_document(text);
  if (!j.is_object()) throw InputError("", "expected a JSON object but found " + describe_found(j));
  const ForeignFields root{j, ""};
  Tokenizer t;
  const json* added = root.find("added_tokens");
  const ForeignFields model = root.object("model");
  const json* vocab = model.find("vocab");
  const std::size_t ids =
      (vocab && vocab->is_object() ? vocab->size() : 0) + (added && added->is_array() ? added->size() : 0);
  read_bpe_model(model, t, ids);
  if (added) read_added_tokens(*added, t, ids);
  if (root.find("normalizer")) read_normalizer(root.object("normalizer"), t);
  if (root.find("pre_tokenizer")) read_pre_tokenizer(root.object("pre_tokenizer"), t);
  if (root.find("post_processor")) read_post_processor(root.object("post_processor"), t);
  for (const std::vector<int>* ids : {&t.prefix, &t.suffix})
    for (const int id : *ids)
      if (id >= t.vocab_size())
        throw InputError("post_processor", "token id " + std::to_string(id) + " is past the vocabulary's " +
                                               thousands(static_cast<std::uint64_t>(t.vocab_size())) + " tokens");
  return t;
}

Tokenizer gpt2_tokenizer(std::string_view vocab_json, std::string_view merges_txt) {
  Tokenizer t;
  try {
    const json vocab = parse_json_document(vocab_json);
    read_vocab(vocab, "", t, vocab.is_object() ? vocab.size() : 0);
  } catch (const InputError& e) {
    throw in_file("vocab.json", e);
  }
  std::istringstream lines{std::string(merges_txt)};
  std::string line;
  for (int n = 1, rank = 0; std::getline(lines, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (n == 1 && line.starts_with("#version"))) continue;
    try {
      read_merge(json(line), rank++, "", t);
    } catch (const InputError& e) {
      throw InputError("merges.txt: line " + std::to_string(n), e.what());
    }
  }
  t.byte_level = true;
  t.pre_tokenizers.push_back(
      {.kind = PreTokenizer::Kind::ByteLevel, .pattern = std::make_shared<const Regex>(kGpt2Pattern)});
  if (const auto it = t.vocab.find("<|endoftext|>"); it != t.vocab.end())
    t.added.push_back({.id = it->second, .content = "<|endoftext|>", .special = true});
  return t;
}

Tokenizer read_tokenizer(const std::filesystem::path& folder, std::int64_t budget) {
  std::error_code ec;
  const auto read = [&](const char* name) {
    try {
      return read_document_file(folder / name, kMaxTokenizerBytes, "a tokenizer file", budget);
    } catch (const InputError& e) {
      throw in_file(name, e);
    }
  };
  if (std::filesystem::exists(folder / "tokenizer.json", ec)) {
    const std::string text = read("tokenizer.json");
    try {
      return parse_tokenizer_json(text);
    } catch (const InputError& e) {
      throw in_file("tokenizer.json", e);
    }
  }
  if (std::filesystem::exists(folder / "vocab.json", ec) && std::filesystem::exists(folder / "merges.txt", ec))
    return gpt2_tokenizer(read("vocab.json"), read("merges.txt"));
  throw InputError("",
                   "no tokenizer.json, nor vocab.json and merges.txt: the lab reads BPE tokenizers "
                   "(tokenizer.model alone is sentencepiece's protobuf, which it does not read)");
}

}  // namespace attn
