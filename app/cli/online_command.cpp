#include <optional>

#include "app/cli/commands.h"
#include "app/cli/matrix_text.h"
#include "app/cli/scenario_input.h"
#include "app/cli/text_table.h"
#include "core/io/online_json.h"
#include "core/memory_budget.h"
#include "core/online_softmax.h"
#include "core/trace_bytes.h"

namespace attn::cli {

const char* const kOnlineHelp =
    "attention-lab online SCENARIO --head H --row I --block B [options]\n"
    "  Row I of head H (both from 0) computed as a GPU kernel does, over blocks of B keys, never holding\n"
    "  the whole row (Milakov and Gimelshein 2018, Algorithm 3; FlashAttention, Algorithm 1): per block its\n"
    "  largest score, the running maximum m, the factor e^(m_old - m_new) that rescales what came before,\n"
    "  the running normaliser l and the running output; then the dense row's output and the difference.\n"
    "  Softmax kernel only.\n"
    "  --json            {\"head\", \"row\", \"block\", \"blocks\": [{\"start\", \"end\", \"block_max\", \"m\",\n"
    "                    \"rescale\", \"l\", \"output\"}...], \"output\", \"dense_output\", \"max_difference\"};\n"
    "                    -inf is null\n"
    "  --precision P     digits after the decimal point in the text form (0-17, default 4)\n"
    "  --memory-budget SIZE  what the trace may hold, as for trace\n"
    "  and every option of trace that overrides the file (--mask, --top-k, --positions, ...)\n";

namespace {

struct Request {
  std::optional<int> head, row, block;
};

void print_online(std::ostream& out, const OnlineSoftmax& o, const Trace& t, int precision) {
  out << "Online softmax of \"" << t.name << "\", head " << o.head << ", row " << o.row << " ('"
      << shorten_label(t.tokens[static_cast<std::size_t>(o.row)]) << "'), over blocks of " << o.block << " keys\n";
  const HeadTrace& h = t.heads[static_cast<std::size_t>(o.head)];
  out << "masked scores of the row: " << row_text(h.masked_row(o.row), precision) << "\n\n";
  std::vector<std::vector<std::string>> rows{{"keys", "block max", "m", "e^(m_old - m)", "l", "output (acc / l)"}};
  for (const OnlineBlock& b : o.blocks)
    rows.push_back({std::to_string(b.start) + ".." + std::to_string(b.end - 1), format_number(b.block_max, precision),
                    format_number(b.m, precision), format_number(b.rescale, precision), format_number(b.l, precision),
                    row_text(b.output, precision)});
  print_table(out, rows, {1, 2, 3, 4});
  out << "\nonline output:  " << row_text(o.output, precision)
      << "\ndense output:   " << row_text(o.dense_output, precision) << "\nmax |online - dense| = " << o.max_difference
      << '\n';
}

}  // namespace

int online_command(std::span<const std::string> words, std::ostream& out, std::ostream& err, std::int64_t budget) {
  Request r;
  const ScenarioCommandOptions o = parse_scenario_command("online", words, [&](const std::string& word, Args& args) {
    if (word == "--head") r.head = static_cast<int>(args.integer(word, 0, limits::kMaxHeads));
    else if (word == "--row") r.row = static_cast<int>(args.integer(word, 0, limits::kMaxTokens));
    else if (word == "--block") r.block = static_cast<int>(args.integer(word, 1, limits::kMaxTokens));
    else return false;
    return true;
  });
  if (o.help) {
    out << "Usage:\n" << kOnlineHelp << "\n  Options that override the scenario file:\n" << kOverridesHelp;
    return kExitOk;
  }
  for (const auto& [value, name] : {std::pair{r.head, "--head H"}, {r.row, "--row I"}, {r.block, "--block B"}})
    if (!value) throw UsageError(std::string("online: missing ") + name);
  std::optional<Trace> trace;
  const auto run = [&](const Scenario& s) {
    check_trace_budget(s, budget, predicted_print_bytes(s));
    trace = compute_trace(s);
    return online_softmax(*trace, *r.head, *r.row, *r.block);
  };
  const std::optional<OnlineSoftmax> online = compute_from_file(o, budget, err, run);
  if (!online) return kExitBadInput;
  if (o.json) {
    write_online_json(out, *online);
    out << '\n';
  } else print_online(out, *online, *trace, o.precision);
  return kExitOk;
}

}  // namespace attn::cli
