#pragma once
// A Hugging Face model folder as run and trace read it: the checkpoint opened, the text tokenized with its own
// tokenizer and held to its positions, and what a forward pass will hold checked against the memory budget.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/io/checkpoint_model.h"
#include "core/io/checkpoint_text.h"
#include "core/scenario.h"
#include "core/tokenizer.h"

namespace attn::cli {

// Whether a command's operand names a model folder rather than a file.
bool is_model_folder(const std::string& path);
// Why `path` cannot be read as a model folder, in words ("is a file, not a model folder", "too many levels of
// symbolic links", "cannot be read: permission denied"), or nothing when it is a folder the lab may read.
std::optional<std::string> model_folder_problem(const std::string& path);

struct CheckpointText {
  std::shared_ptr<const CheckpointModel> model;
  Encoding text;  // ids and the pieces that label them
};

// Opens the folder and tokenizes `text`. InputError when the text is empty, longer than 1 MiB, or makes more tokens
// than the model has positions ("--text: 1,500 tokens, more than the model's 1,024 positions").
CheckpointText open_checkpoint_text(const std::string& folder, const std::string& text, std::int64_t budget);

// From here on, a freed matrix's memory stays in the heap for the next one: a forward pass over a checkpoint frees
// each layer's float64 weights and makes the next layer's in the same shapes, and mapping them afresh (what the
// commands otherwise do past 1 MiB) faults in every page again, four fifths of GPT-2 small's time at 64 tokens.
// The peak is the same: one layer's weights are held at a time either way.
void reuse_freed_layers();

// Layer `layer`'s attention reading what it reads on the text, as a scenario with the layer's weights given.
Scenario checkpoint_layer_scenario(const CheckpointText& c, int layer, std::int64_t budget);

}  // namespace attn::cli
