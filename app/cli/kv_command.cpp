// `attention-lab kv`: the KV cache of a preset model or of a shape typed on the command line.
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/assets.h"
#include "app/cli/commands.h"
#include "app/cli/kv_report.h"
#include "app/cli/units.h"
#include "core/io/checkpoint_config.h"
#include "core/io/hub_cache.h"
#include "core/io/presets_json.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn::cli {

const char* const kKvHelp =
    "attention-lab kv (FOLDER | --preset NAME | --layers L --heads H --kv-heads G --head-dim D) [options]\n"
    "  The KV cache a model needs: numbers cached per token per layer, bytes per token, and the total for\n"
    "  a sequence; with sliding-window layers (Gemma 3, Mistral 7B) both the real, window-aware total and\n"
    "  the total if every layer kept every token.\n"
    "  FOLDER            a Hugging Face model's folder: the shape its config.json gives (GPT-2, Llama, Qwen2,\n"
    "                    Mistral), with its sliding window\n"
    "  --preset NAME     a published model (see --list); a preset is a complete shape, so it cannot be\n"
    "                    combined with the shape options below (that is an error, not an override)\n"
    "  --layers L --heads H --kv-heads G --head-dim D\n"
    "                    a shape of your own; the variant follows from G: G = H mha, G = 1 mqa, else gqa\n"
    "  --latent-dim C [--rope-dim R]\n"
    "                    an mla shape: C latent numbers (+ R for the RoPE key) cached per token per layer\n"
    "                    (with --layers and --heads; --head-dim only for --compare)\n"
    "  --variant V       mha | gqa | mqa | mla, to state it rather than infer it\n"
    "  --window W [--local-layers A --global-layers B]\n"
    "                    sliding-window layers keep only the last W tokens; the layers repeat as A local\n"
    "                    then B global (without A and B every layer is local)\n"
    "  --seq N           tokens per sequence, 1 .. 1,073,741,824 (default 32,768)\n"
    "  --batch B         sequences, 1 .. 1,048,576 (default 1)\n"
    "  --dtype T         fp32 | fp16 | bf16 | fp8 | int8 | int4 (default bf16)\n"
    "  --compare         the same model as MHA, GQA, MQA and MLA side by side, with the ratio to MHA\n"
    "  --json            one JSON object instead of text\n"
    "  --list            the presets with their shapes and sources\n"
    "  --presets FILE    read presets from FILE instead of assets/presets/models.json (the assets folder\n"
    "                    can also be set with the ATTENTION_LAB_ASSETS environment variable)\n";

namespace {

namespace fs = std::filesystem;

struct KvOptions {
  std::optional<std::string> preset;
  std::optional<std::string> folder;  // a Hugging Face model's
  std::optional<std::string> presets_file;
  bool list = false;
  bool json = false;
  bool help = false;  // print the command's usage
  bool compare = false;
  std::optional<Variant> variant;
  std::optional<int> layers, heads, kv_heads, head_dim, latent_dim, rope_dim, window, local_layers, global_layers;
  std::vector<std::string> shape_options;  // as typed, to name them in errors
  std::vector<std::string> run_options;    // --seq, --batch, --dtype, --compare: meaningless with --list
  std::uint64_t seq = kDefaultSeq;
  bool seq_given = false;
  std::uint64_t batch = 1;
  Dtype dtype = Dtype::BF16;
};

// A whole number in lo .. hi; the range is stated with separators because the bounds are large.
std::int64_t bounded(Args& args, const std::string& option, std::int64_t lo, std::int64_t hi) {
  const std::string text = args.value(option);
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  const bool digits = end == text.data() + text.size() && ec != std::errc::invalid_argument;
  if (!digits) throw UsageError(option + ": expected a whole number but found '" + text + "'");
  if (ec == std::errc::result_out_of_range || x < lo || x > hi)
    throw UsageError(option + ": must be between " + thousands_signed(lo) + " and " + thousands_signed(hi) +
                     " (found " + text + ")");
  return x;
}

// The shape options: each fills its field of KvOptions.
bool parse_kv_shape_option(const std::string& word, Args& args, KvOptions& o) {
  namespace L = kv_limits;
  const struct {
    const char* name;
    std::optional<int> KvOptions::*field;
    std::int64_t lo, hi;
  } options[] = {
      {"--layers", &KvOptions::layers, 1, L::kMaxLayers},
      {"--heads", &KvOptions::heads, 1, L::kMaxHeads},
      {"--kv-heads", &KvOptions::kv_heads, 1, L::kMaxHeads},
      {"--head-dim", &KvOptions::head_dim, 1, L::kMaxHeadDim},
      {"--latent-dim", &KvOptions::latent_dim, 0, L::kMaxLatentDim},  // 0 reaches validate_shape's mla message
      {"--rope-dim", &KvOptions::rope_dim, 0, L::kMaxRopeDim},
      {"--window", &KvOptions::window, 1, L::kMaxTokens},
      {"--local-layers", &KvOptions::local_layers, 0, L::kMaxLayers},
      {"--global-layers", &KvOptions::global_layers, 0, L::kMaxLayers},
  };
  for (const auto& opt : options)
    if (word == opt.name) {
      o.*opt.field = static_cast<int>(bounded(args, word, opt.lo, opt.hi));
      o.shape_options.push_back(word);
      return true;
    }
  if (word == "--variant") {
    const std::string v = args.value(word);
    o.variant = parse_variant(v);
    if (!o.variant)
      throw UsageError("--variant: expected one of " + std::string(variant_names()) + " but found '" + v + "'");
    o.shape_options.push_back(word);
    return true;
  }
  return false;
}

KvOptions parse_kv_args(std::span<const std::string> words) {
  KvOptions o;
  Args args(words);
  while (!args.done()) {
    const std::string word = args.next();
    if (word == "--json") o.json = true;
    else if (word == "--help") o.help = true;
    else if (word == "--list") o.list = true;
    else if (word == "--preset") o.preset = args.value(word);
    else if (word == "--presets") o.presets_file = args.value(word);
    else if (parse_kv_shape_option(word, args, o)) continue;
    else if (word == "--compare") {
      o.compare = true;
      o.run_options.push_back(word);
    } else if (word == "--seq") {
      o.seq = static_cast<std::uint64_t>(bounded(args, word, 1, kv_limits::kMaxTokens));
      o.seq_given = true;
      o.run_options.push_back(word);
    } else if (word == "--batch") {
      o.batch = static_cast<std::uint64_t>(bounded(args, word, 1, kv_limits::kMaxBatch));
      o.run_options.push_back(word);
    } else if (word == "--dtype") {
      const std::string t = args.value(word);
      const auto d = parse_dtype(t);
      if (!d) throw UsageError("--dtype: expected one of " + std::string(dtype_names()) + " but found '" + t + "'");
      o.dtype = *d;
      o.run_options.push_back(word);
    } else if (word.starts_with("--")) throw UsageError("kv: unknown option '" + word + "' (see attention-lab --help)");
    else if (!o.folder) o.folder = word;
    else throw UsageError("kv: unexpected argument '" + word + "' (options start with --; see attention-lab --help)");
  }
  if (o.list && (o.preset || !o.shape_options.empty() || !o.run_options.empty())) {
    const std::string other = o.preset                   ? std::string("--preset")
                              : !o.shape_options.empty() ? o.shape_options[0]
                                                         : o.run_options[0];
    throw UsageError("kv: --list takes only --presets FILE and --json (found " + other + ")");
  }
  if (o.preset && !o.shape_options.empty())
    throw UsageError("kv: --preset cannot be combined with shape options (found " + o.shape_options[0] +
                     "); give either a preset or a whole shape");
  if (o.folder && (o.preset || o.list || !o.shape_options.empty()))
    throw UsageError("kv: a model's folder is a complete shape, so it cannot be combined with " +
                     std::string(o.preset ? "--preset"
                                 : o.list ? "--list"
                                          : o.shape_options[0]));
  return o;
}

// "--layers", "--layers and --head-dim", "--layers, --heads and --head-dim".
std::string join_missing(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

// The variant: stated, or inferred (latent -> mla; G = H -> mha; G = 1 -> mqa; else gqa).
Variant shape_variant(const KvOptions& o) {
  if (o.variant) return *o.variant;
  if (o.latent_dim || o.rope_dim) return Variant::Mla;
  if (!o.kv_heads)
    throw UsageError(
        "kv: missing --kv-heads (the number of key/value heads: they, not the query heads, set the cache size), "
        "or state --variant mha|mqa|mla");
  if (o.heads && *o.kv_heads == *o.heads) return Variant::Mha;
  if (*o.kv_heads == 1) return Variant::Mqa;
  return Variant::Gqa;
}

ModelShape shape_from_options(const KvOptions& o) {
  ModelShape m;
  m.name = "custom shape";
  m.source = "the command line";
  m.variant = shape_variant(o);
  std::vector<std::string> missing;
  if (!o.layers) missing.push_back("--layers");
  if (!o.heads) missing.push_back("--heads");
  if (m.variant == Variant::Gqa && !o.kv_heads) missing.push_back("--kv-heads");
  if (m.variant != Variant::Mla && !o.head_dim) missing.push_back("--head-dim");  // mla caches its latent
  if (m.variant == Variant::Mla && !o.latent_dim) missing.push_back("--latent-dim");
  if (!missing.empty())
    throw UsageError("kv: the shape is missing " + join_missing(missing) +
                     " (or give --preset NAME; see attention-lab kv --list)");
  if (m.variant == Variant::Mla && o.kv_heads)
    throw UsageError("--kv-heads: only used by mha, gqa and mqa (mla caches its latent, --latent-dim)");
  if ((o.local_layers || o.global_layers) && !o.window)
    throw UsageError(std::string(o.local_layers ? "--local-layers" : "--global-layers") +
                     ": given, but --window is not set");
  if (o.window && o.local_layers.has_value() != o.global_layers.has_value())
    throw UsageError(
        "kv: give both --local-layers and --global-layers (the repeating pattern), or neither for a "
        "window on every layer");
  m.layers = *o.layers;
  m.heads = *o.heads;
  m.head_dim = o.head_dim.value_or(0);
  switch (m.variant) {
    case Variant::Mha:
    case Variant::Mla: m.kv_heads = o.kv_heads.value_or(m.heads); break;
    case Variant::Mqa: m.kv_heads = o.kv_heads.value_or(1); break;
    case Variant::Gqa: m.kv_heads = *o.kv_heads; break;
  }
  m.latent_dim = o.latent_dim.value_or(0);
  m.rope_dim = o.rope_dim.value_or(0);
  m.window = o.window.value_or(0);
  if (m.window > 0) {
    m.local_layers = o.local_layers.value_or(1);
    m.global_layers = o.global_layers.value_or(0);
  }
  try {
    validate_shape(m, {"", true});
  } catch (const InputError& e) {
    throw UsageError(e.what());
  }
  return m;
}

fs::path presets_path(const KvOptions& o) {
  if (o.presets_file) return *o.presets_file;
  return assets_dir() / "presets" / "models.json";
}

// Loads the presets; a bad file is the user's input, so its message goes to err with exit 2.
std::optional<std::vector<ModelShape>> load_presets(const KvOptions& o, std::ostream& err) {
  const fs::path path = presets_path(o);
  try {
    return load_presets_file(path);
  } catch (const InputError& e) {
    err << "attention-lab: kv: " << shown_path(path) << ": " << e.what();
    if (!o.presets_file && e.field().empty() && !fs::exists(path))
      err << " (set ATTENTION_LAB_ASSETS to the assets folder, or pass --presets FILE)";
    err << '\n';
    return std::nullopt;
  }
}

const ModelShape& find_preset(const std::vector<ModelShape>& presets, const std::string& name) {
  std::string known;
  for (const ModelShape& m : presets) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw UsageError("kv: unknown preset '" + name + "' (known: " + known + ")");
}

}  // namespace

int kv_command(std::span<const std::string> words, std::ostream& out, std::ostream& err) {
  const KvOptions o = parse_kv_args(words);
  if (o.help) {
    out << "Usage:\n" << kKvHelp;
    return kExitOk;
  }
  if (!o.list && !o.preset && !o.folder && o.shape_options.empty())
    throw UsageError(
        "kv: give a model: a Hugging Face model's FOLDER, --preset NAME (see attention-lab kv --list) or a shape "
        "with --layers, --heads, --kv-heads and --head-dim");
  KvRequest r;
  if (o.folder) {
    std::error_code ec;
    if (!fs::is_directory(*o.folder, ec))
      throw UsageError("kv: '" + escaped_text(*o.folder) +
                       "' is not a folder (a model's folder holds config.json; a preset is --preset NAME, see "
                       "attention-lab kv --list)");
    try {
      r.model = kv_shape(read_checkpoint_config(*o.folder, limits::kDefaultMemoryBudget), model_folder_name(*o.folder),
                         "config.json of " + shown_path(*o.folder));
    } catch (const InputError& e) {
      err << "attention-lab: " << shown_path(*o.folder) << ": " << e.what() << '\n';
      return kExitBadInput;
    }
  } else if (o.list || o.preset) {
    const auto presets = load_presets(o, err);
    if (!presets) return kExitBadInput;
    if (o.list) {
      if (o.json) out << preset_list_json(*presets, presets_path(o).string()).dump(2) << '\n';
      else print_preset_list(out, *presets, presets_path(o).string());
      return kExitOk;
    }
    r.model = find_preset(*presets, *o.preset);
  } else {
    r.model = shape_from_options(o);
    if (o.compare && r.model.head_dim == 0)
      throw UsageError(
          "kv: --compare sizes the same heads as MHA, GQA and MQA, whose cache is 2 x heads x head_dim: give "
          "--head-dim (an mla shape alone needs only --latent-dim and --rope-dim)");
  }
  r.seq = o.seq;
  r.seq_is_default = !o.seq_given;
  r.batch = o.batch;
  r.dtype = o.dtype;
  try {
    if (o.compare && o.json) out << kv_compare_json(r).dump(2) << '\n';
    else if (o.compare) print_kv_compare(out, r);
    else if (o.json) out << kv_json(r).dump(2) << '\n';
    else print_kv(out, r);
  } catch (const OverflowError& e) {
    err << "attention-lab: kv: overflow: " << e.what() << " (use a smaller --seq, --batch or model)\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace attn::cli
