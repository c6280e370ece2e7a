#pragma once
// A model folder's tokenizer: tokenizer.json (Hugging Face tokenizers: a BPE model with its vocab and merges, the
// normalizer, the pre-tokenizer, the added tokens and the post-processor), or GPT-2's vocab.json and merges.txt.
// What the lab does not run (another model type, a normalizer or pre-tokenizer it does not know) is refused by name.
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "core/tokenizer.h"

namespace attn {

// tokenizer.json's contents; InputError names the field ("model.merges[12]", "pre_tokenizer.type").
Tokenizer parse_tokenizer_json(std::string_view text);
// GPT-2's own files: vocab.json ({piece: id}) and merges.txt ("#version" line, then "a b" a line), with GPT-2's
// byte-level pre-tokenizer and <|endoftext|> (when the vocabulary has it) as a special token.
Tokenizer gpt2_tokenizer(std::string_view vocab_json, std::string_view merges_txt);
// The folder's tokenizer.json, else its vocab.json and merges.txt; messages start with the file's name.
Tokenizer read_tokenizer(const std::filesystem::path& folder, std::int64_t budget);

}  // namespace attn
