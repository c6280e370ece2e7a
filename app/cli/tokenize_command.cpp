#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/checkpoint_input.h"
#include "app/cli/commands.h"
#include "app/cli/text_table.h"
#include "core/io/tokenizer_json.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kTokenizeHelp =
    "attention-lab tokenize FOLDER --text TEXT [--json]\n"
    "  The tokens a Hugging Face model's own tokenizer makes of TEXT, as tokenizer(text) gives them (the template's\n"
    "  BOS included): FOLDER holds tokenizer.json, or GPT-2's vocab.json and merges.txt. One line a token: its id\n"
    "  and its piece (a space shows as \u2423, a newline as \\n, bytes that are not a whole character as <0xE7>).\n"
    "  --json            {\"ids\": [...], \"tokens\": [...]}\n";

namespace {

struct TokenizeRequest {
  std::optional<std::string> folder, text;
  bool json = false, help = false;
};

TokenizeRequest parse_tokenize_request(std::span<const std::string> words) {
  TokenizeRequest r;
  Args args(words);
  while (!args.done()) {
    const std::string& w = args.next();
    if (w == "--text") r.text = args.value(w);
    else if (w == "--json") r.json = true;
    else if (w == "--help" || w == "-h") r.help = true;
    else if (w.starts_with("-")) throw UsageError("tokenize: unknown option '" + escaped_text(w) + "'");
    else if (r.folder) throw UsageError("tokenize: one FOLDER, but found a second: '" + escaped_text(w) + "'");
    else r.folder = w;
  }
  if (r.help) return r;
  if (!r.folder) throw UsageError("tokenize: missing FOLDER (a Hugging Face model's folder)");
  if (!r.text) throw UsageError("tokenize: missing --text TEXT");
  if (r.text->size() > kMaxTextBytes)
    throw UsageError("--text: at most " + thousands(kMaxTextBytes) + " bytes (found " + thousands(r.text->size()) +
                     ")");
  return r;
}

void print_tokens(std::ostream& out, const Encoding& e) {
  out << plural(static_cast<std::int64_t>(e.ids.size()), "token") << '\n';
  std::vector<std::vector<std::string>> rows{{"id", "piece"}};
  for (std::size_t i = 0; i < e.ids.size(); ++i) rows.push_back({std::to_string(e.ids[i]), e.pieces[i]});
  print_table(out, rows, {0});
}

void write_tokens_json(std::ostream& out, const Encoding& e) {
  nlohmann::ordered_json j{{"ids", e.ids}, {"tokens", e.pieces}};
  out << j.dump() << '\n';
}

}  // namespace

int tokenize_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  const TokenizeRequest r = parse_tokenize_request(words);
  if (r.help) {
    out << "Usage:\n" << kTokenizeHelp;
    return kExitOk;
  }
  std::optional<Tokenizer> t;
  try {
    t = read_tokenizer(*r.folder, budget);
  } catch (const InputError& e) {
    err << "attention-lab: " << shown_path(*r.folder) << ": " << e.what() << '\n';
    return kExitBadInput;
  }
  try {
    const Encoding e = encode(*t, *r.text);
    if (r.json) write_tokens_json(out, e);
    else print_tokens(out, e);
  } catch (const InputError& e) {
    err << "attention-lab: --" << e.what() << '\n';
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
