#include <cstdlib>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "app/cli/text_table.h"
#include "core/io/hub_cache.h"
#include "core/text_format.h"

namespace attn::cli {

const char* const kModelsHelp =
    "attention-lab models [--json]\n"
    "  The Hugging Face models on this computer: every model in the hub cache ($HF_HUB_CACHE, else\n"
    "  $HF_HOME/hub, else ~/.cache/huggingface/hub), one row each with its family, layers, query and KV\n"
    "  heads, parameters, dtype and size, and whether the lab opens it (or why not: no config, a missing\n"
    "  weight file or tokenizer, a partial download). Only the files' headers are read.\n"
    "  --json            [{\"id\", \"path\", \"family\", \"layers\", \"heads\", \"kv_heads\", \"parameters\", "
    "\"dtype\",\n"
    "                    \"bytes\", \"usable\", \"why_not\"}, ...]\n";

namespace {

nlohmann::ordered_json model_json(const CachedModel& m) {
  nlohmann::ordered_json j{{"id", m.id}, {"path", shown_path(m.path)}};
  const bool c = m.config.has_value();
  j["family"] = c ? nlohmann::ordered_json(std::string(to_string(m.config->family))) : nullptr;
  j["layers"] = c ? nlohmann::ordered_json(m.config->layers) : nullptr;
  j["heads"] = c ? nlohmann::ordered_json(m.config->heads) : nullptr;
  j["kv_heads"] = c ? nlohmann::ordered_json(m.config->kv_heads) : nullptr;
  j["parameters"] = m.parameters;
  j["dtype"] = m.dtype;
  j["bytes"] = m.bytes;
  j["usable"] = m.usable;
  j["why_not"] = m.usable ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.why_not);
  return j;
}

void print_models(std::ostream& out, const std::vector<CachedModel>& models, const std::filesystem::path& cache) {
  out << "Hugging Face models in " << shown_path(cache) << ": "
      << plural(static_cast<std::int64_t>(models.size()), "model") << '\n';
  if (models.empty()) return;
  std::vector<std::vector<std::string>> rows{
      {"model", "family", "layers", "heads", "KV heads", "parameters", "dtype", "size", "opens"}};
  for (const CachedModel& m : models) {
    const bool c = m.config.has_value();
    const auto count = [&](int n) { return c ? thousands(static_cast<std::uint64_t>(n)) : std::string("-"); };
    rows.push_back({m.id, c ? std::string(to_string(m.config->family)) : "-", count(c ? m.config->layers : 0),
                    count(c ? m.config->heads : 0), count(c ? m.config->kv_heads : 0),
                    m.parameters ? thousands(m.parameters) : "-", m.dtype.empty() ? "-" : m.dtype,
                    m.bytes ? binary_size(m.bytes) : "-", m.usable ? "yes" : m.why_not});
  }
  print_table(out, rows, {2, 3, 4, 5, 7});
  out << '\n';
  for (const CachedModel& m : models) out << m.id << "  " << shown_path(m.path) << '\n';
}

}  // namespace

int models_command(std::span<const std::string> words, std::ostream& out, std::ostream&, std::int64_t budget) {
  Args args(words);
  bool json = false;
  while (!args.done()) {
    const std::string& w = args.next();
    if (w == "--json") json = true;
    else if (w == "--help" || w == "-h") {
      out << "Usage:\n" << kModelsHelp;
      return kExitOk;
    } else throw UsageError("models: unexpected argument '" + escaped_text(w) + "' (it takes only --json)");
  }
  const std::filesystem::path cache = hub_cache_dir([](const char* name) { return std::getenv(name); });
  const std::vector<CachedModel> models = scan_hub_cache(cache, budget);
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const CachedModel& m : models) list.push_back(model_json(m));
    out << list.dump(2) << '\n';
  } else {
    print_models(out, models, cache);
  }
  return kExitOk;
}

}  // namespace attn::cli
