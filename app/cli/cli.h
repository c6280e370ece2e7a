#pragma once
// The command line as a function, so tests run it in-process with the exact arguments a user types.
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace attn::cli {

// args excludes the program name. Returns the exit code (0 ok, 2 bad input). --help prints `window_usage`
// first: the window's options, which the window's library defines (gui::kGuiHelp).
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
            std::string_view window_usage = {});

// Whether a first argument names a command run_cli takes (trace, decode, kv, help, --version); anything else
// opens the window.
bool is_cli_command(std::string_view first);

}  // namespace attn::cli
