#include "app/cli/cli.h"

#include <cstring>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/cli/memory_option.h"
#include "app/cli/overrides.h"
#include "core/io/atomic_file.h"

namespace attn::cli {
namespace {

void print_help(std::ostream& out, std::string_view window_usage) {
  out << "Attention Lab " ATTN_VERSION
         " - every intermediate of Transformer attention, exact.\n\n"
         "Usage:\n"
      << window_usage << "\n"
      << kTraceHelp << "\n  Options that override the scenario file for quick experiments:\n"
      << kOverridesHelp << "\n"
      << kDecodeHelp << "\n"
      << kOnlineHelp << "\n"
      << kRunHelp << "\n"
      << kTrainHelp << "\n"
      << kTokenizeHelp << "\n"
      << kEvalHelp << "\n"
      << kConvertHelp << "\n"
      << kModelsHelp << "\n"
      << kKvHelp << "\nEvery command, and the window, takes:\n"
      << kMemoryBudgetHelp
      << "\nattention-lab --help       this text\n"
         "attention-lab --version    the version\n\n"
         "Exit codes: 0 done, 2 bad input (the message on stderr names the file, the field, what was\n"
         "expected and what was found), 1 an internal error.\n";
}

}  // namespace

bool is_cli_command(std::string_view first) {
  for (const std::string_view command : {"trace", "decode", "online", "kv", "run", "train", "tokenize", "eval",
                                         "convert", "models", "help", "--help", "-h", "--version"})
    if (first == command) return true;
  return false;
}

namespace {

int dispatch(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::string_view window_usage) {
  try {
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      print_help(out, window_usage);
      return kExitOk;
    }
    if (args[0] == "--version" && args.size() == 1) {
      out << "attention-lab " ATTN_VERSION "\n";
      return kExitOk;
    }
    std::vector<std::string> words(args.begin() + 1, args.end());
    const std::int64_t budget = take_memory_budget(words).value_or(machine_memory_budget());
    if (args[0] == "trace") return trace_command(words, out, err, budget);
    if (args[0] == "decode") return decode_command(words, out, err, budget);
    if (args[0] == "online") return online_command(words, out, err, budget);
    if (args[0] == "kv") return kv_command(words, out, err);
    if (args[0] == "run") return run_command(words, out, err, budget);
    if (args[0] == "train") return train_command(words, out, err, budget);
    if (args[0] == "tokenize") return tokenize_command(words, out, err, budget);
    if (args[0] == "eval") return eval_command(words, out, err, budget);
    if (args[0] == "convert") return convert_command(words, out, err, budget);
    if (args[0] == "models") return models_command(words, out, err, budget);
    throw UsageError("unknown command '" + args[0] + "' (see attention-lab --help)");
  } catch (const UsageError& e) {
    err << "attention-lab: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "attention-lab: internal error: " << e.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace

int finish_output(std::ostream& out, std::ostream& err, int exit_code) {
  out.flush();
  if (out) return exit_code;
  const auto* fd = dynamic_cast<const FdStreamBuf*>(out.rdbuf());
  err << "attention-lab: cannot write the output";
  if (fd && fd->error()) err << ": " << std::strerror(fd->error());
  err << '\n';
  return exit_code == kExitOk ? kExitBadInput : exit_code;
}

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err, std::string_view window_usage) {
  return finish_output(out, err, dispatch(args, out, err, window_usage));
}

}  // namespace attn::cli
