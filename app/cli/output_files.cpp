#include "app/cli/output_files.h"

#include <filesystem>

#include "app/cli/args.h"
#include "app/cli/assets.h"
#include "app/cli/checkpoint_input.h"
#include "core/io/atomic_file.h"
#include "core/validate.h"

namespace attn::cli {

void check_output_option(const std::string& command, const std::string& option, const std::string& path,
                         const std::vector<NamedInput>& inputs, const std::vector<NamedInput>& folders) {
  const std::string prefix = (command.empty() ? "" : command + ": ") + option + ": ";
  for (const auto& [input, input_path] : inputs)
    if (!path.empty() && !input_path.empty() && same_file(path, input_path))
      throw UsageError(prefix + shown_path(path) + " is also the " + input +
                       " this command reads: write to another file (nothing was written)");
  // The assets folder holds the lab's examples, which every command may read: nothing is written there.
  std::vector<NamedInput> lab_folders = {{"assets folder", assets_dir().string()}};
  lab_folders.insert(lab_folders.end(), folders.begin(), folders.end());
  for (const auto& [what, folder] : lab_folders)
    if (!path.empty() && inside_folder(path, folder))
      throw UsageError(prefix + shown_path(path) + " is in the " + what + " (" + shown_path(folder) +
                       ") the lab reads: write to another file (nothing was written)");
  try {
    check_output_path(path);
  } catch (const InputError& e) {
    throw UsageError(prefix + e.what());
  }
}

ModelFolderInputs model_folder_inputs(const std::string& path) {
  ModelFolderInputs m;
  if (!is_model_folder(path)) return m;
  m.folders.push_back({"model folder", path});
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec))
    m.files.push_back({"model file " + entry.path().filename().string(), entry.path().string()});
  return m;
}

}  // namespace attn::cli
