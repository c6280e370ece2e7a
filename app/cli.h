#pragma once
// The command line as a function, so tests run it in-process with the exact arguments a user types.
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace attn::cli {

// args excludes the program name. Returns the exit code (0 ok, 2 bad input).
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// Whether a first argument names a command run_cli takes (trace, decode, kv, help, --version); anything else
// opens the window.
bool is_cli_command(std::string_view first);

}  // namespace attn::cli
