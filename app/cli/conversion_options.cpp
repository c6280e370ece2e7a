#include "app/cli/conversion_options.h"

#include "core/text_format.h"

namespace attn::cli {

bool parse_conversion_option(const std::string& word, Args& args, ConversionOptions& o) {
  if (word == "--to") {
    const std::string to = args.value(word);
    if (to == "gqa") o.to = KvTarget::Gqa;
    else if (to == "mla") o.to = KvTarget::Mla;
    else throw UsageError("--to: must be gqa | mla (found \"" + escaped_text(to) + "\")");
  } else if (word == "--kv-heads") o.kv_heads = static_cast<int>(args.integer(word, 1, limits::kMaxHeads));
  else if (word == "--latent-dim") o.latent_dim = static_cast<int>(args.integer(word, 1, limits::kMaxProjectedDim));
  else if (word == "--layers") o.layers = args.value(word);
  else return false;
  return true;
}

void check_conversion_options(const ConversionOptions& o, const std::string& command) {
  const auto refuse = [&](const std::string& what) {
    throw UsageError(command.empty() ? what : command + ": " + what);
  };
  if (!o.any()) return;
  if (!o.to) refuse("missing --to gqa | mla");
  if (*o.to == KvTarget::Gqa && o.latent_dim) refuse("--latent-dim is for --to mla");
  if (*o.to == KvTarget::Mla && o.kv_heads) refuse("--kv-heads is for --to gqa");
  if (*o.to == KvTarget::Gqa && !o.kv_heads) refuse("--to gqa needs --kv-heads G");
  if (*o.to == KvTarget::Mla && !o.latent_dim) refuse("--to mla needs --latent-dim C");
}

std::vector<int> conversion_layers(const ConversionOptions& o, const Model& m) {
  const int layers = static_cast<int>(m.layers.size());
  if (o.layers) return parse_layer_list(*o.layers, layers, "--layers");
  std::vector<int> all;
  for (int l = 0; l < layers; ++l) all.push_back(l);
  return all;
}

KvConversion conversion_of(const ConversionOptions& o, const Model& m) {
  KvConversion c{.to = *o.to, .kv_heads = o.kv_heads.value_or(1), .latent_dim = o.latent_dim.value_or(1)};
  c.layers = conversion_layers(o, m);
  check_kv_conversion(m, c);
  return c;
}

}  // namespace attn::cli
