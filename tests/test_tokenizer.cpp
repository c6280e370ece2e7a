// Tokenizers built here from tokenizer.json texts small enough to work out by hand: GPT-2's byte map, BPE's merge
// order, each pre-tokenizer and normalizer, added tokens, byte fallback and the template; and every refusal.
// tests/crosscheck/tokenizer_crosscheck.py checks real vocabularies against Hugging Face's own tokenizer.
#include <doctest/doctest.h>

#include <fstream>

#include "core/io/tokenizer_json.h"
#include "core/tokenizer.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using attn::test::run;

namespace {

// A tokenizer.json of `vocab` and `merges` (JSON texts) and the other parts (JSON texts, "null" for none).
std::string tokenizer_json(const std::string& vocab, const std::string& merges, const std::string& pre = "null",
                           const std::string& normalizer = "null", const std::string& added = "[]",
                           const std::string& post = "null", const std::string& model_extra = "") {
  return R"({"version":"1.0","added_tokens":)" + added + R"(,"normalizer":)" + normalizer + R"(,"pre_tokenizer":)" +
         pre + R"(,"post_processor":)" + post + R"(,"decoder":null,"model":{"type":"BPE","vocab":)" + vocab +
         R"(,"merges":)" + merges + model_extra + "}}";
}

std::vector<int> ids(const Tokenizer& t, const std::string& text) { return encode(t, text).ids; }

std::string parse_error(const std::string& json) {
  try {
    parse_tokenizer_json(json);
  } catch (const InputError& e) {
    return e.what();
  }
  return "parsed";
}

// a=0 b=1 c=2 ab=3 abc=4 bc=5 " "=6
const std::string kAbc = R"({"a":0,"b":1,"c":2,"ab":3,"abc":4,"bc":5," ":6})";

}  // namespace

TEST_CASE("GPT-2's byte map: 188 bytes stand for themselves, the other 68 for U+0100 on") {
  CHECK(byte_level_char(' ') == "\u0120");   // Ġ
  CHECK(byte_level_char('\n') == "\u010A");  // Ċ
  CHECK(byte_level_char(0xAD) == "\u0143");  // Ń, the last of the 68
  CHECK(byte_level_char(0) == "\u0100");
  CHECK(byte_level_char('!') == "!");
  CHECK(byte_level_char(0xE7) == "\u00E7");  // ç
  for (int b = 0; b < 256; ++b)
    CHECK(byte_level_bytes(byte_level_char(static_cast<unsigned char>(b))) == std::string(1, static_cast<char>(b)));
  CHECK(!byte_level_bytes("\u0144"));  // past the 68
}

TEST_CASE("BPE merges the lowest-ranked pair first, wherever it is") {
  // Ranks: b c (0) before a b (1): "abc" -> a [bc] -> no "a bc" merge -> [a, bc].
  const Tokenizer t = parse_tokenizer_json(tokenizer_json(kAbc, R"(["b c","a b"])"));
  CHECK(ids(t, "abc") == std::vector<int>{0, 5});
  // Ranks: a b (0), ab c (1): [ab] c -> [abc].
  const Tokenizer u = parse_tokenizer_json(tokenizer_json(kAbc, R"([["a","b"],["ab","c"]])"));
  CHECK(ids(u, "abc") == std::vector<int>{4});
  CHECK(ids(u, "ababc") == std::vector<int>{3, 4});
  CHECK(ids(u, "") == std::vector<int>{});
}

TEST_CASE("Split behaviours decide which pieces a merge may cross") {
  const auto with_split = [](const std::string& behavior, bool invert = false) {
    return parse_tokenizer_json(tokenizer_json(kAbc, R"(["a b","b c"])",
                                               R"({"type":"Split","pattern":{"String":"b"},"behavior":")" + behavior +
                                                   R"(","invert":)" + (invert ? "true" : "false") + "}"));
  };
  CHECK(ids(with_split("Isolated"), "abc") == std::vector<int>{0, 1, 2});
  CHECK(ids(with_split("Removed"), "abc") == std::vector<int>{0, 2});
  CHECK(ids(with_split("MergedWithPrevious"), "abc") == std::vector<int>{3, 2});
  CHECK(ids(with_split("MergedWithNext"), "abc") == std::vector<int>{0, 5});
  CHECK(ids(with_split("Contiguous"), "abbc") == std::vector<int>{0, 1, 1, 2});  // "bb" one piece, no merge in it
  CHECK(ids(with_split("Removed", true), "abc") == std::vector<int>{1});         // invert: the b is what stays
}

TEST_CASE("MergedWithNext joins a match only to a following piece that is not a match") {
  // Metaspace's split: "▁▁a" -> ["▁", "▁a"], as tokenizers does it.
  const std::string vocab = R"({"\u2581":0,"a":1,"\u2581a":2,"\u2581\u2581":3})";
  const Tokenizer t = parse_tokenizer_json(
      tokenizer_json(vocab, R"(["\u2581 a","\u2581 \u2581"])",
                     R"({"type":"Metaspace","replacement":"\u2581","prepend_scheme":"never","split":true})"));
  CHECK(ids(t, "  a") == std::vector<int>{0, 2});
}

TEST_CASE("byte-level pre-tokenizing: GPT-2's pattern, then each byte as its character") {
  // Vocabulary: the byte characters of "a", " ", "b", and "Ġb".
  const Tokenizer t = parse_tokenizer_json(
      tokenizer_json(R"({"a":0,"\u0120":1,"b":2,"\u0120b":3,"!":4})", R"(["\u0120 b"])",
                     R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})"));
  CHECK(t.byte_level);
  const Encoding e = encode(t, "a b!");
  CHECK(e.ids == std::vector<int>{0, 3, 4});
  CHECK(e.pieces == std::vector<std::string>{"a", "\u2423b", "!"});
  CHECK(e.words == std::vector<int>{0, 1, 2});  // GPT-2's pattern: "a", " b", "!"
  const Tokenizer prefixed =
      parse_tokenizer_json(tokenizer_json(R"({"a":0,"\u0120":1,"\u0120a":2})", R"(["\u0120 a"])",
                                          R"({"type":"ByteLevel","add_prefix_space":true,"use_regex":true})"));
  CHECK(ids(prefixed, "a") == std::vector<int>{2});
}

TEST_CASE("Digits, one at a time or in runs") {
  const std::string vocab = R"({"1":0,"2":1,"12":2,"x":3})";
  const auto digits = [&](bool individual) {
    return parse_tokenizer_json(
        tokenizer_json(vocab, R"(["1 2"])",
                       std::string(R"({"type":"Digits","individual_digits":)") + (individual ? "true}" : "false}")));
  };
  CHECK(ids(digits(true), "x12") == std::vector<int>{3, 0, 1});
  CHECK(ids(digits(false), "x12") == std::vector<int>{3, 2});
}

TEST_CASE("normalizers: NFC composes, Prepend and Replace write sentencepiece's spaces") {
  const Tokenizer nfc =
      parse_tokenizer_json(tokenizer_json(R"({"\u00e9":0,"e":1,"\u0301":2})", "[]", "null", R"({"type":"NFC"})"));
  CHECK(ids(nfc, "e\u0301") == std::vector<int>{0});
  const Tokenizer sp =
      parse_tokenizer_json(tokenizer_json(R"({"\u2581":0,"a":1,"\u2581a":2})", R"(["\u2581 a"])", "null",
                                          R"({"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"\u2581"},)"
                                          R"({"type":"Replace","pattern":{"String":" "},"content":"\u2581"}]})"));
  CHECK(ids(sp, "a a") == std::vector<int>{2, 2});
  CHECK(encode(sp, "a").pieces == std::vector<std::string>{"\u2423a"});
}

TEST_CASE("a character outside the vocabulary: its bytes with byte_fallback, else the unknown token, fused") {
  const std::string vocab = R"({"<unk>":0,"<0xE7>":1,"<0x8C>":2,"<0xAB>":3,"a":4})";
  const Tokenizer fallback = parse_tokenizer_json(
      tokenizer_json(vocab, "[]", "null", "null", "[]", "null", R"(,"byte_fallback":true,"unk_token":"<unk>")"));
  const Encoding e = encode(fallback, "a\u732B");  // 猫 = E7 8C AB
  CHECK(e.ids == std::vector<int>{4, 1, 2, 3});
  CHECK(e.pieces == std::vector<std::string>{"a", "<0xE7>", "<0x8C>", "<0xAB>"});
  CHECK(e.words == std::vector<int>{0, 0, 0, 0});  // no pre-tokenizer: the text is one word, its bytes pieces of it
  const Tokenizer fused = parse_tokenizer_json(
      tokenizer_json(vocab, "[]", "null", "null", "[]", "null", R"(,"unk_token":"<unk>","fuse_unk":true)"));
  CHECK(ids(fused, "\u732B\u732Ba\u732B") == std::vector<int>{0, 4, 0});
  const Tokenizer unfused =
      parse_tokenizer_json(tokenizer_json(vocab, "[]", "null", "null", "[]", "null", R"(,"unk_token":"<unk>")"));
  CHECK(ids(unfused, "\u732B\u732B") == std::vector<int>{0, 0});
  const Tokenizer none = parse_tokenizer_json(tokenizer_json(vocab, "[]"));
  CHECK_THROWS_WITH_AS(encode(none, "b"), "text: \"b\" is not in the vocabulary, which has no unknown token",
                       InputError);
}

TEST_CASE("added tokens are split out first, whole, with lstrip and rstrip taking the spaces beside them") {
  const std::string added =
      R"([{"id":7,"content":"<|x|>","special":true,"lstrip":false,"rstrip":false,"normalized":false,"single_word":false},)"
      R"({"id":8,"content":"<|y|>","special":true,"lstrip":true,"rstrip":true,"normalized":false}])";
  const Tokenizer t = parse_tokenizer_json(tokenizer_json(kAbc, R"(["a b"])", "null", "null", added));
  CHECK(ids(t, "ab<|x|>ab") == std::vector<int>{3, 7, 3});
  CHECK(ids(t, "a <|y|> b") == std::vector<int>{0, 8, 1});
  CHECK(ids(t, "a <|x|> b") == std::vector<int>{0, 6, 7, 6, 1});
  CHECK(encode(t, "<|x|>").pieces == std::vector<std::string>{"<|x|>"});
  CHECK(encode(t, "ab<|x|>ab").words == std::vector<int>{0, 1, 2});
}

TEST_CASE("the template adds BOS and EOS around the text, as tokenizer(text) does") {
  const std::string post =
      R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},)"
      R"({"SpecialToken":{"id":"</s>","type_id":0}}],"pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[7],"tokens":["<s>"]},)"
      R"("</s>":{"id":"</s>","ids":[8],"tokens":["</s>"]}}})";
  const std::string added = R"([{"id":7,"content":"<s>","special":true},{"id":8,"content":"</s>","special":true}])";
  const Tokenizer t = parse_tokenizer_json(tokenizer_json(kAbc, "[]", "null", "null", added, post));
  CHECK(ids(t, "a") == std::vector<int>{7, 0, 8});
  CHECK(encode(t, "ab").words == std::vector<int>{0, 1, 1, 2});  // <s>, the word "ab" as a and b, </s>
  CHECK(ids(t, "") == std::vector<int>{7, 8});
  const Tokenizer seq = parse_tokenizer_json(
      tokenizer_json(kAbc, "[]", "null", "null", added,
                     R"({"type":"Sequence","processors":[{"type":"ByteLevel","trim_offsets":false},)" + post + "]}"));
  CHECK(ids(seq, "b") == std::vector<int>{7, 1, 8});
}

TEST_CASE("text that is not UTF-8 is refused with its byte") {
  const Tokenizer t = parse_tokenizer_json(tokenizer_json(kAbc, "[]"));
  CHECK_THROWS_WITH_AS(encode(t, "ab\xff"), "text: byte 3 is not UTF-8 (\\xff)", InputError);
}

TEST_CASE("tokenizer.json refusals name the field") {
  CHECK(parse_error(R"({"model":{"type":"WordPiece","vocab":{}}})") ==
        "model.type: \"WordPiece\" is not a model the lab runs; it runs BPE");
  CHECK(parse_error(tokenizer_json(kAbc, R"(["a d"])")) ==
        "model.merges[0]: \"d\" is not in the vocabulary (merging \"a\" and \"d\")");
  CHECK(parse_error(tokenizer_json(kAbc, R"(["a c"])")) ==
        "model.merges[0]: \"ac\" is not in the vocabulary (merging \"a\" and \"c\")");
  CHECK(parse_error(tokenizer_json(kAbc, R"(["abc"])")) ==
        "model.merges[0]: expected two pieces with a space between but found \"abc\"");
  CHECK(parse_error(tokenizer_json(kAbc, R"([["a"]])")) ==
        "model.merges[0]: expected \"a b\" or [\"a\", \"b\"] but found array");
  CHECK(parse_error(tokenizer_json(R"({"a":0,"b":0})", "[]")) == "model.vocab.b: id 0 is \"a\" already, not \"b\"");
  CHECK(parse_error(tokenizer_json(R"({"a":-1})", "[]")) == "model.vocab.a: must be >= 0 (found -1)");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", R"({"type":"Whitespace"})")) ==
        "pre_tokenizer.type: \"Whitespace\" is not a pre-tokenizer the lab runs; it runs ByteLevel, Split, Digits, "
        "Metaspace and Sequence");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", R"({"type":"Lowercase"})")) ==
        "normalizer.type: \"Lowercase\" is not a normalizer the lab runs; it runs NFC, NFD, NFKC, NFKD, Prepend, "
        "Replace and Sequence");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", R"({"type":"Split","pattern":{"Regex":"(a"},"behavior":"Isolated"})"))
            .starts_with("pre_tokenizer.pattern.Regex: the pattern does not compile at character 2: "));
  CHECK(parse_error(tokenizer_json(kAbc, "[]", R"({"type":"Split","pattern":{"Regex":"a"},"behavior":"Apart"})")) ==
        "pre_tokenizer.behavior: expected Isolated, Removed, MergedWithPrevious, MergedWithNext or Contiguous but "
        "found \"Apart\"");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", R"([{"id":9,"content":"<w>","single_word":true}])")) ==
        "added_tokens[0].single_word: true is not read by the lab (a token matched only as a whole word)");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", "[]", R"({"type":"RobertaProcessing"})")) ==
        "post_processor.type: \"RobertaProcessing\" is not a post-processor the lab runs; it runs TemplateProcessing, "
        "ByteLevel and Sequence");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", "[]",
                                   R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>"}}],)"
                                   R"("special_tokens":{}})")) ==
        "post_processor.special_tokens.<s>: expected {\"ids\": [...]} for the template's special token");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", "[]", "null", R"(,"dropout":0.1)")) ==
        "model.dropout: must be null or 0: dropout makes tokenizing random");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", "[]", "null", R"(,"unk_token":"<unk>")")) ==
        "model.unk_token: \"<unk>\" is not in the vocabulary");
}

TEST_CASE("tokenize: a folder's tokenizer on the command line, as text and as JSON") {
  const std::filesystem::path folder = attn::test::fresh_dir("tokenize");
  std::ofstream(folder / "tokenizer.json")
      << tokenizer_json(R"({"a":0,"\u0120":1,"b":2,"\u0120b":3})", R"(["\u0120 b"])",
                        R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":true})");
  const auto json = run({"tokenize", folder.string(), "--text", "a b", "--json"});
  CHECK(json.code == 0);
  CHECK(json.out == "{\"ids\":[0,3],\"tokens\":[\"a\",\"\u2423b\"]}\n");
  const auto text = run({"tokenize", folder.string(), "--text", "a b"});
  CHECK(text.out == "2 tokens\nid  piece\n 0  a\n 3  \u2423b\n");
  const auto bad = run({"tokenize", folder.string(), "--text", "ab c"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "attention-lab: --text: \"c\" is not in the vocabulary, which has no unknown token\n");
  const auto missing = run({"tokenize", (folder / "none").string(), "--text", "a"});
  CHECK(missing.code == 2);
  CHECK(missing.err == "attention-lab: " + (folder / "none").string() +
                           ": no tokenizer.json, nor vocab.json and merges.txt: the lab reads BPE tokenizers "
                           "(tokenizer.model alone is sentencepiece's protobuf, which it does not read)\n");
  CHECK(run({"tokenize", "--text", "a"}).err ==
        "attention-lab: tokenize: missing FOLDER (a Hugging Face model's folder)\n");
  CHECK(run({"tokenize", folder.string()}).err == "attention-lab: tokenize: missing --text TEXT\n");
  std::ofstream(folder / "tokenizer.json") << R"({"model":{"type":"Unigram"}})";
  CHECK(run({"tokenize", folder.string(), "--text", "a"}).err ==
        "attention-lab: " + folder.string() +
            ": tokenizer.json: model.type: \"Unigram\" is not a model the lab runs; it runs BPE\n");
}

TEST_CASE("an id past the file's pieces and added tokens is refused before the table of pieces grows to it") {
  // 7 pieces and 1 added token number ids 0-7: 2,147,483,647 asked for 64 GiB of empty pieces.
  CHECK(parse_error(tokenizer_json(R"({"a":0,"b":1,"c":2,"ab":3,"abc":4,"bc":5,"z":2147483647})", "[]", "null", "null",
                                   R"([{"id":6,"content":"<s>","special":true}])")) ==
        "model.vocab.z: id 2,147,483,647 leaves ids unused: the file's 8 pieces and added tokens number them from 0 "
        "to 7");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", R"([{"id":8,"content":"<s>","special":true}])")) ==
        "added_tokens[0].id: id 8 leaves ids unused: the file's 8 pieces and added tokens number them from 0 to 7");
  CHECK(parse_error(tokenizer_json(kAbc, "[]", "null", "null", R"([{"id":7,"content":"<s>","special":true}])")) ==
        "parsed");
  CHECK_THROWS_WITH(gpt2_tokenizer(R"({"a":0,"b":100000000})", ""),
                    "vocab.json: b: id 100,000,000 leaves ids unused: the file's 2 pieces and added tokens number them "
                    "from 0 to 1");
}

TEST_CASE("a normalizer that grows the text past 4 MiB is refused before the text is built") {
  const std::string thousand(1000, 'a');
  const Tokenizer grow = parse_tokenizer_json(tokenizer_json(
      R"({"a":0,"b":1})", "[]", "null", R"({"type":"Replace","pattern":{"String":"b"},"content":")" + thousand + "\"}"));
  CHECK(ids(grow, "ab") == std::vector<int>(1001, 0));
  // 4,195 b's make 4,195,000 bytes, past 4,194,304.
  CHECK_THROWS_WITH(encode(grow, std::string(4195, 'b')),
                    "text: the tokenizer's normalizer makes it 4,195,000 bytes, more than the 4,194,304 the lab "
                    "tokenizes");
}
