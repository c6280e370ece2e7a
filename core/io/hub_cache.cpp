#include "core/io/hub_cache.h"

#include "core/io/checkpoint_model.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "core/io/checkpoint_weights.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// GPT-2's causal-mask buffers (attn.bias, attn.masked_bias) are stored with the weights but are not parameters.
bool is_mask_buffer(const std::string& name) {
  return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias");
}

// The revision refs/main names: a commit hash, read only from a small regular file (a pipe there would stop the
// scan, /dev/zero would fill memory) and only a name, never a path out of snapshots/.
std::optional<std::string> main_revision(const fs::path& repo) {
  const fs::path ref = repo / "refs" / "main";
  std::error_code ec;
  if (!fs::is_regular_file(ref, ec) || fs::file_size(ref, ec) > 256 || ec) return std::nullopt;
  std::string revision;
  if (std::ifstream in(ref); !in || !std::getline(in, revision)) return std::nullopt;
  if (revision.empty() || revision == "." || revision == ".." ||
      revision.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos)
    return std::nullopt;
  return revision;
}

// The snapshot refs/main names, else the newest one.
std::optional<fs::path> current_snapshot(const fs::path& repo) {
  std::error_code ec;
  if (const std::optional<std::string> revision = main_revision(repo);
      revision && fs::is_directory(repo / "snapshots" / *revision, ec))
    return repo / "snapshots" / *revision;
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  for (const fs::directory_entry& e : fs::directory_iterator(repo / "snapshots", ec))
    if (e.is_directory(ec) && (!newest || e.last_write_time(ec) > newest_time)) {
      newest = e.path();
      newest_time = e.last_write_time(ec);
    }
  return newest;
}

bool downloading(const fs::path& repo) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(repo / "blobs", ec))
    if (e.path().extension() == ".incomplete") return true;
  return false;
}

bool has_tokenizer(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / "tokenizer.json", ec) ||
         (fs::exists(folder / "vocab.json", ec) && fs::exists(folder / "merges.txt", ec));
}

// The weights' numbers, bytes and dtype, from their headers.
void count_weights(const CheckpointWeights& w, CachedModel& m) {
  std::map<std::string, std::uint64_t> bytes_by_dtype;
  for (const std::string& name : w.names()) {
    if (is_mask_buffer(name)) continue;
    const StoredTensor& t = *w.find(name).tensor;
    m.parameters += t.elements();
    bytes_by_dtype[t.dtype] += t.end - t.begin;
  }
  m.bytes = w.stored_bytes();
  m.dtype = bytes_by_dtype.size() == 1 ? bytes_by_dtype.begin()->first : bytes_by_dtype.empty() ? "" : "mixed";
}

}  // namespace

fs::path hub_cache_dir(const std::function<const char*(const char*)>& env) {
  const auto set = [&](const char* name) -> std::optional<fs::path> {
    const char* v = env(name);
    return v && *v ? std::optional<fs::path>(v) : std::nullopt;
  };
  if (auto p = set("HF_HUB_CACHE")) return *p;
  if (auto p = set("HUGGINGFACE_HUB_CACHE")) return *p;
  if (auto p = set("HF_HOME")) return *p / "hub";
  if (auto p = set("XDG_CACHE_HOME")) return *p / "huggingface" / "hub";
  return set("HOME").value_or(fs::path("/")) / ".cache" / "huggingface" / "hub";
}

std::optional<std::string> hub_model_id(std::string_view repo_folder) {
  if (!repo_folder.starts_with("models--")) return std::nullopt;
  std::string id(repo_folder.substr(8));
  for (std::size_t at = id.find("--"); at != std::string::npos; at = id.find("--", at + 1)) id.replace(at, 2, "/");
  return escaped_text(id);
}

std::string model_folder_name(const fs::path& folder) {
  const fs::path normal = folder.lexically_normal();
  const fs::path f = normal.has_filename() ? normal : normal.parent_path();  // "a/b/" names b
  if (f.parent_path().filename() == "snapshots")
    if (auto id = hub_model_id(f.parent_path().parent_path().filename().string())) return *id;
  return shown_path(f.filename());
}

CachedModel describe_model_folder(const fs::path& folder, std::string id, std::int64_t budget) {
  CachedModel m;
  m.id = std::move(id);
  m.path = folder;
  try {
    m.config = read_checkpoint_config(folder, budget);
  } catch (const InputError& e) {
    m.why_not = e.what();
    return m;
  }
  try {
    const CheckpointWeights weights = CheckpointWeights::open(folder, budget);
    count_weights(weights, m);
    check_checkpoint_limits(*m.config, weights);
  } catch (const InputError& e) {
    m.why_not = e.what();
    return m;
  }
  if (!has_tokenizer(folder)) {
    m.why_not = "no tokenizer.json, nor vocab.json and merges.txt";
    return m;
  }
  m.usable = true;
  return m;
}

std::vector<CachedModel> scan_hub_cache(const fs::path& cache, std::int64_t budget) {
  std::vector<CachedModel> models;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(cache, ec)) {
    const std::optional<std::string> id = hub_model_id(e.path().filename().string());
    if (!id || !e.is_directory(ec)) continue;
    const std::optional<fs::path> snapshot = current_snapshot(e.path());
    if (!snapshot) {
      models.push_back({.id = *id, .path = e.path(), .why_not = "no snapshot: nothing was downloaded"});
      continue;
    }
    CachedModel m = describe_model_folder(*snapshot, *id, budget);
    if (downloading(e.path())) {  // what is missing is what is still coming
      m.usable = false;
      m.why_not = "a partial download (a file in blobs/ is still .incomplete)";
    }
    models.push_back(std::move(m));
  }
  std::sort(models.begin(), models.end(), [](const CachedModel& a, const CachedModel& b) { return a.id < b.id; });
  return models;
}

}  // namespace attn
