#include "app/cli/checkpoint_input.h"

#include <malloc.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include <filesystem>

#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {

void reuse_freed_layers() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // GPT-2's largest converted matrix is 19 MiB, Qwen2.5-0.5B's 33 MiB
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

bool is_model_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

namespace {

// A system error as a message's tail: "Permission denied" as "permission denied".
std::string error_words(const std::error_code& ec) {
  std::string words = ec.message();
  if (!words.empty()) words[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(words[0])));
  return words;
}

}  // namespace

std::optional<std::string> model_folder_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return "no such folder (a Hugging Face model's folder)";
  if (ec) return error_words(ec);
  if (status.type() == fs::file_type::regular)
    return "is a file, not a model folder (a Hugging Face model's folder holds config.json and its weights)";
  if (status.type() != fs::file_type::directory) return "not a folder (a Hugging Face model's folder)";
  // A folder that cannot be listed or entered would otherwise look empty: "no config.json".
  if (access(path.c_str(), R_OK | X_OK) != 0)
    return "cannot be read: " + error_words(std::error_code(errno, std::generic_category()));
  return std::nullopt;
}

CheckpointText open_checkpoint_text(const std::string& folder, const std::string& text, std::int64_t budget) {
  check_text_size(text, "--text");
  CheckpointText c{CheckpointModel::open(folder, budget), {}};
  c.text = checkpoint_text(*c.model, text, "--text");
  return c;
}

Scenario checkpoint_layer_scenario(const CheckpointText& c, int layer, std::int64_t budget) {
  const CheckpointModel& m = *c.model;
  const int layers = static_cast<int>(m.model().layers.size());
  if (layer >= layers)
    throw InputError("--layer",
                     "the model has layers 0.." + std::to_string(layers - 1) + " but found " + std::to_string(layer));
  const auto n = static_cast<std::int64_t>(c.text.ids.size());
  reuse_freed_layers();
  check_memory_budget(checkpoint_run_bytes(m, n, false, layer + 1 == layers), budget,
                      "running " + m.name() + " on the text", "a shorter text");
  // The layers before it run with no heads kept; the scenario reads what layer L's attention read.
  const ModelTrace t = run_model(m.model(), c.text.pieces, c.text.ids, m,
                                 ModelRunOptions{.layers = layer + 1, .kept = std::vector<int>{}});
  return layer_scenario(m.model(), m.layer(layer), layer, c.text.pieces,
                        t.layers[static_cast<std::size_t>(layer)].attention.x);
}

}  // namespace attn::cli
