#include <malloc.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "app/cli/error_stream.h"
#include "app/gui/gui.h"
#include "core/io/atomic_file.h"

namespace {

// The command line's standard output through a buffer that keeps the first write's error: a full disk or a closed
// pipe is reported with its reason (run_cli flushes and checks it before exit 0).
int run_command_line(const std::vector<std::string>& args) {
  attn::FdStreamBuf stdout_buffer(STDOUT_FILENO);
  std::ostream out(&stdout_buffer);
  return attn::cli::run_cli(args, out, std::cerr, attn::gui::kGuiHelp);
}

int run_window(const std::vector<std::string>& args) {
  try {
    const int exit_code = attn::gui::run_gui(attn::gui::parse_gui_args(args), std::cerr);
    return attn::cli::finish_output(std::cout, std::cerr, exit_code);  // the drivers' reports
  } catch (const attn::cli::UsageError& e) {
    std::cerr << "attention-lab: " << e.what() << '\n';
    return attn::cli::kExitBadInput;
  }
}

int run(const std::vector<std::string>& args) {
  if (!args.empty() && attn::cli::is_cli_command(args[0])) {
    // A command is held to the memory budget its shapes predict: every matrix of 1 MiB or more is mapped and given
    // back when freed, so the heap never keeps freed matrices beside new ones (with them kept, train's measured
    // peak reached 1.8 times its prediction).
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    return run_command_line(args);
  }
  // The window recomputes traces of one size over and over: a freed trace's large matrices (32 MiB each at 2,048
  // tokens) stay in the heap for the next one, rather than being mapped afresh and faulted in page by page (a
  // third of a drag's recompute at 2,048 tokens).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_MAX, 0);
  // One arena for every thread: a worker's own arena gives its 64 MiB heaps back once they are free, whatever the
  // trim threshold, and a model folder's next forward pass then faults them in again (a second per ablation toggled
  // on GPT-2 small, bench/real_model_bench.cpp).
  mallopt(M_ARENA_MAX, 1);
  return run_window(args);
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that closes the pipe early makes the next write fail with EPIPE, reported like a full disk, rather
  // than killing the process without a word.
  std::signal(SIGPIPE, SIG_IGN);
  // Messages quote files and options: their control characters reach the terminal escaped.
  attn::cli::EscapingStreamBuf error_buffer(std::cerr.rdbuf());
  std::streambuf* const terminal = std::cerr.rdbuf(&error_buffer);
  const int exit_code = run(std::vector<std::string>(argv + 1, argv + argc));
  std::cerr.flush();
  std::cerr.rdbuf(terminal);
  return exit_code;
}
