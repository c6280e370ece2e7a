#include <malloc.h>

#include <iostream>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/cli.h"
#include "app/cli/commands.h"
#include "app/gui/gui.h"

int main(int argc, char** argv) {
  // Freed trace matrices (8 MiB each at 1024 tokens) stay in the heap for the next recompute instead of
  // going back to the kernel and faulting in fresh, zeroed pages every time (a quarter of the time).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && attn::cli::is_cli_command(args[0]))
    return attn::cli::run_cli(args, std::cout, std::cerr, attn::gui::kGuiHelp);
  // The window recomputes traces of one size over and over: a freed trace's large matrices (32 MiB each at 2,048
  // tokens) stay in the heap for the next one too, rather than being mapped afresh and faulted in page by page (a
  // third of a drag's recompute at 2,048 tokens). Larger ones than a thread's heap holds are still mapped.
  mallopt(M_MMAP_MAX, 0);
  try {
    return attn::gui::run_gui(attn::gui::parse_gui_args(args), std::cerr);
  } catch (const attn::cli::UsageError& e) {
    std::cerr << "attention-lab: " << e.what() << '\n';
    return attn::cli::kExitBadInput;
  }
}
