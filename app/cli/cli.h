#pragma once
// The command line as a function, so tests run it in-process with the exact arguments a user types.
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace attn::cli {

// args excludes the program name. Returns the exit code (0 ok, 2 bad input). --help prints `window_usage`
// first: the window's options, which the window's library defines (gui::kGuiHelp). `out` is flushed and checked
// before it returns: output that could not be written is exit 2 (finish_output).
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err,
            std::string_view window_usage = {});

// Flushes `out`; when any of it could not be written, says so on `err` (with the reason when `out` writes through
// an FdStreamBuf: "No space left on device", "Broken pipe") and turns exit 0 into exit 2.
int finish_output(std::ostream& out, std::ostream& err, int exit_code);

// Whether a first argument names a command run_cli takes (trace, decode, kv, help, --version); anything else
// opens the window.
bool is_cli_command(std::string_view first);

}  // namespace attn::cli
