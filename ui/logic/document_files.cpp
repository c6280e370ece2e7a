#include "ui/logic/document_files.h"

#include <algorithm>
#include <fstream>

#include "core/io/atomic_file.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/io/trace_json.h"
#include "ui/logic/matrix_export.h"

namespace attn::ui {

void remember_recent(std::vector<std::string>& recent, const std::filesystem::path& path) {
  const std::string p = std::filesystem::absolute(path).lexically_normal().string();
  recent.erase(std::remove(recent.begin(), recent.end(), p), recent.end());
  recent.insert(recent.begin(), p);
  if (recent.size() > kMaxRecentFiles) recent.resize(kMaxRecentFiles);
}

namespace {

// A JSON file with "layers" is a model; anything else is read as a scenario (and its errors said as one).
bool is_model_file(const std::filesystem::path& path) {
  try {
    return is_model_json(parse_json_document(read_document_file(path, kMaxModelFileBytes)));
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

void open_model_document(AppState& state, const std::filesystem::path& path) {
  try {
    if (const std::optional<std::string> failed = state.model_doc.open(model_input(load_model_file(path)), path)) {
      state.message = "Could not open " + path.string() + ": " + *failed + " (the current model is kept)";
      return;
    }
    remember_recent(state.recent_files, path);
    state.view = View::Model;
    state.message.clear();
  } catch (const InputError& e) {
    state.message = "Could not open " + path.string() + ": " + e.what() + " (the current model is kept)";
  }
}

std::optional<RecoveryOffer> unsaved_work(const AppState& state) {
  RecoveryOffer r;
  if (const Document& d = state.recoverable_document(); d.dirty()) {
    r.scenario = *d.scenario;
    r.original = d.path;
  }
  if (state.model_doc.loaded() && state.model_doc.dirty()) {
    r.model = state.model_doc.input();
    r.model_original = state.model_doc.path();
  }
  if (!r.scenario && !r.model) return std::nullopt;
  return r;
}

namespace {

// The model as the recovery file kept it, unsaved: opened from its file and changed into it (one undo away from
// the file), or when the file cannot be read any more, opened as it was with the same path.
std::optional<std::string> restore_model(AppState& state, const RecoveryOffer& r) {
  if (!r.model_original.empty()) open_model_document(state, r.model_original);
  if (state.model_doc.loaded() && !r.model_original.empty() && state.model_doc.path() == r.model_original)
    return state.model_doc.edit([&](ModelInput& in) { in = *r.model; });
  if (std::optional<std::string> failed = state.model_doc.open(*r.model, r.model_original)) return failed;
  state.model_doc.mark_unsaved();
  return std::nullopt;
}

}  // namespace

bool restore_unsaved_work(AppState& state, const RecoveryOffer& r) {
  if (r.scenario) {
    if (!r.original.empty()) open_document(state, r.original);
    if (!state.edit([&](Scenario& s) { s = *r.scenario; })) {
      state.message = "The unsaved document could not be restored: " + state.message;
      return false;
    }
  }
  if (r.model) {
    if (const std::optional<std::string> failed = restore_model(state, r)) {
      state.message = "The unsaved model could not be restored: " + *failed;
      return false;
    }
  }
  state.message = "Restored the unsaved changes from " + r.when;
  return true;
}

void save_model_document(AppState& state, const std::filesystem::path& path) {
  try {
    save_model_file(state.model_doc.model(), path);
    state.model_doc.mark_saved(path);
    remember_recent(state.recent_files, path);
    state.message = "Saved " + path.string();
  } catch (const InputError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void open_document(AppState& state, const std::filesystem::path& path) {
  if (is_model_file(path)) return open_model_document(state, path);
  try {
    if (state.open(load_scenario_file(path), path)) remember_recent(state.recent_files, path);
  } catch (const InputError& e) {
    state.message = "Could not open " + path.string() + ": " + e.what() + " (the current scenario is kept)";
  }
}

void save_document(AppState& state, const std::filesystem::path& path) {
  try {
    save_scenario_file(state.scenario(), path);
    state.mark_saved(path);
    remember_recent(state.recent_files, path);
    state.message = "Saved " + path.string();
  } catch (const InputError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void export_document(AppState& state, const std::string& extension) {
  std::string text;
  if (extension == "json") text = trace_to_json(state.trace()).dump(1) + "\n";
  else text = state.handout(state.trace(), extension == "tex");
  // Beside the document when it has a file, else in the current folder; never over an existing file.
  const std::filesystem::path folder = state.document().path.empty()
                                           ? std::filesystem::current_path()
                                           : std::filesystem::absolute(state.document().path).parent_path();
  const std::string file = unique_file_name(folder.string(), state.scenario().name + "_trace", extension);
  try {
    write_file_atomically(file, text, Existing::Keep);
    state.message = "Exported " + file;
  } catch (const InputError& e) {
    state.message = std::string("Not exported: ") + e.what();
  }
}

}  // namespace attn::ui
