#pragma once
// The options that name one conversion of a model's attention, as `convert` and the window (--model FOLDER) take them:
// --to gqa --kv-heads G | --to mla --latent-dim C, and --layers LIST.
#include <optional>
#include <string>
#include <vector>

#include "app/cli/args.h"
#include "core/kv_conversion.h"
#include "core/model.h"

namespace attn::cli {

struct ConversionOptions {
  std::optional<KvTarget> to;
  std::optional<int> kv_heads, latent_dim;
  std::optional<std::string> layers;
  bool any() const { return to || kv_heads || latent_dim || layers; }
};

// Takes `word` (and its value) when it is one of the four; false for any other word.
bool parse_conversion_option(const std::string& word, Args& args, ConversionOptions& o);
// The options naming one conversion, or none at all: UsageError ("convert: --to gqa needs --kv-heads G"; no prefix
// for an empty `command`).
void check_conversion_options(const ConversionOptions& o, const std::string& command);
// The layers --layers names of `m` (every layer when absent): InputError naming --layers.
std::vector<int> conversion_layers(const ConversionOptions& o, const Model& m);
// The conversion of `m` they name: its layers as conversion_layers gives them, checked against the model (InputError
// naming the option).
KvConversion conversion_of(const ConversionOptions& o, const Model& m);

}  // namespace attn::cli
