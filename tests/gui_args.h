#pragma once
// What the window's option parser says of a command line: its refusal's message, or "(no error)".
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "app/gui/gui_options.h"

namespace attn::test {

inline std::string gui_args_refusal(const std::vector<std::string>& args) {
  try {
    gui::parse_gui_args(args);
  } catch (const cli::UsageError& e) {
    return std::string(e.what());
  }
  return std::string("(no error)");
}

}  // namespace attn::test
