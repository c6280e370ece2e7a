#pragma once
// The files a command writes (trace --scenario, train --save, the window's --screenshot and --dump-state), checked
// before any work: a run is never lost to a name that cannot be written, and never writes over its own input.
#include <string>
#include <utility>
#include <vector>

namespace attn::cli {

// One input of the command: the option that names it ("SCENARIO", "--model"), or what it is when the command reads
// it without being told ("text", "scenario": a file of the assets folder), and its path ("" when not given).
using NamedInput = std::pair<std::string, std::string>;

// Throws UsageError ("train: --save: ...") when `path` is empty, cannot be written (check_output_path: a folder, a
// folder that does not exist, no permission), is the same file as one of `inputs` or lies in one of `folders` (what
// the command reads from a whole folder: the window's settings) or in the assets folder, whose examples every command
// may read. `command` is "" for the window.
void check_output_option(const std::string& command, const std::string& option, const std::string& path,
                         const std::vector<NamedInput>& inputs, const std::vector<NamedInput>& folders = {});

// What a model folder adds to those: its files as inputs, wherever they lead (a hub snapshot's links point into its
// blobs/), and the folder itself, nothing to be written in it. Nothing when `path` is not a model folder.
struct ModelFolderInputs {
  std::vector<NamedInput> files, folders;
};
ModelFolderInputs model_folder_inputs(const std::string& path);

}  // namespace attn::cli
