#include "ui/logic/document_files.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/io/atomic_file.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/real_session.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/io/trace_json.h"
#include "core/validate.h"
#include "ui/logic/matrix_export.h"

namespace attn::ui {

void remember_recent(std::vector<std::string>& recent, const std::filesystem::path& path) {
  const std::string p = std::filesystem::absolute(path).lexically_normal().string();
  recent.erase(std::remove(recent.begin(), recent.end(), p), recent.end());
  recent.insert(recent.begin(), p);
  if (recent.size() > kMaxRecentFiles) recent.resize(kMaxRecentFiles);
}

void remember_recent_folder(std::vector<std::string>& recent, const std::filesystem::path& folder) {
  const std::string p = (std::filesystem::absolute(folder).lexically_normal() / "").string();
  recent.erase(std::remove(recent.begin(), recent.end(), p), recent.end());
  recent.insert(recent.begin(), p);
  if (recent.size() > kMaxRecentFiles) recent.resize(kMaxRecentFiles);
}

bool recent_is_folder(const std::string& entry) { return !entry.empty() && entry.back() == '/'; }

void open_model_folder(AppState& state, const std::filesystem::path& folder) {
  const std::string text = state.real_model.loaded() ? state.real_model.state().text : kRealModelStartingText;
  state.real_model.open(folder, text);
  state.real_view.text = text;
  state.real_view.folder_text = folder.string();
  state.real_view.file.clear();  // a folder of its own, saved nowhere yet
  remember_recent_folder(state.recent_files, folder);
  state.view = View::Real;
}

void open_tradeoff_point(AppState& state, std::size_t i) {
  if (!state.tradeoff.loaded() || i >= state.tradeoff.shown().trace->size()) return;
  const TradeoffRun& t = state.tradeoff.shown();
  const std::optional<KvConversion>& c = (*t.trace)[i].conversion;
  state.view = View::Real;
  const RealModelDocument& doc = state.real_model;
  const bool same_folder = doc.folder() == t.folder;
  // Shown, or on its way: nothing to do (one that failed is tried again).
  if (same_folder && doc.conversion() == c && doc.failure().empty()) return;
  // Another folder's ids and heads need not be this model's: its text goes along, as opening a folder takes it.
  RealModelState now = doc.state();
  if (!same_folder) now = RealModelState{now.text.empty() ? kRealModelStartingText : now.text};
  state.real_view.text = now.text;
  if (!now.ablation.empty()) state.real_view.mode = now.ablation.mode;
  state.real_view.folder_text = t.folder.string();
  state.real_view.file.clear();  // another model: its own file, saved nowhere yet
  state.real_model.open(t.folder, std::move(now), c, t.model);
}

void open_model_document(AppState& state, const std::filesystem::path& path) {
  try {
    Model m = load_model_file(path, state.memory_budget);
    if (const std::optional<std::string> failed = state.model_doc.open(model_input(std::move(m)), path)) {
      state.message = "Could not open " + shown_path(path) + ": " + *failed + " (the current model is kept)";
      return;
    }
    remember_recent(state.recent_files, path);
    state.view = View::Model;
    state.message.clear();
  } catch (const InputError& e) {
    state.message = "Could not open " + shown_path(path) + ": " + e.what() + " (the current model is kept)";
  }
}

std::optional<RecoveryOffer> unsaved_work(const AppState& state) {
  RecoveryOffer r;
  // A recovered document not saved yet keeps naming its original, without a stamp: Save still asks.
  if (const Document& d = state.recoverable_document(); d.dirty()) {
    r.scenario = *d.scenario;
    r.original = canonical_path(d.path.empty() ? d.recovered_from : d.path);
    if (!d.path.empty()) r.original_stamp = d.stamp;
  }
  if (const ModelDocument& m = state.model_doc; m.loaded() && m.dirty()) {
    r.model = m.input();
    r.model_original = canonical_path(m.path().empty() ? m.recovered_from() : m.path());
    if (!m.path().empty()) r.model_original_stamp = m.stamp();
  }
  // The Real model view has no file: its folder and state are kept while one is open.
  if (!state.real_model.folder().empty())
    r.real_model =
        RealModelRecovery{state.real_model.folder(), state.real_model.state(), state.real_model.conversion()};
  if (!r.scenario && !r.model && !r.real_model) return std::nullopt;
  return r;
}

namespace {

// The scenario as the recovery file kept it, as a document of its own (whatever was open is replaced, never
// changed): opened from its original and changed into what was unsaved (one undo away from the file) when the
// original is still as the work found it, else without a file, so that Save asks where.
bool restore_scenario(AppState& state, const RecoveryOffer& r) {
  try {
    validate(*r.scenario);  // before anything is replaced
  } catch (const InputError& e) {
    state.message = std::string("The unsaved document could not be restored: ") + e.what();
    return false;
  }
  std::optional<Scenario> on_disk;
  if (unchanged_since(r.original, r.original_stamp)) {
    try {
      on_disk = load_scenario_file(r.original);
    } catch (const InputError&) {
      // read as a changed original: Save asks
    }
  }
  if (on_disk && state.open(std::move(*on_disk), r.original)) {
    state.edit_own_step([&](Scenario& s) { s = *r.scenario; });
  } else if (!state.open(*r.scenario, {})) {
    state.message = "The unsaved document could not be restored: " + state.message;
    return false;
  }
  state.mark_recovered(r.original);
  return true;
}

// The model likewise: from its unchanged original (one undo away from it), else without a file.
std::optional<std::string> restore_model(AppState& state, const RecoveryOffer& r) {
  ModelDocument& doc = state.model_doc;
  bool from_file = false;
  if (unchanged_since(r.model_original, r.model_original_stamp)) {
    try {
      from_file = !doc.open(model_input(load_model_file(r.model_original)), r.model_original) &&
                  !doc.edit([&](ModelInput& in) { in = *r.model; });
    } catch (const InputError&) {
      // read as a changed original: Save asks
    }
  }
  if (!from_file) {
    if (std::optional<std::string> failed = doc.open(*r.model, {})) return failed;
    doc.mark_unsaved();
  }
  doc.mark_recovered(r.model_original);
  return std::nullopt;
}

// The Real model view's folder on its kept state (a folder that no longer opens says why in the view), shown when it
// is all that was kept.
void restore_real_model(AppState& state, const RealModelRecovery& r, bool show) {
  state.real_model.open(r.folder, r.state, r.conversion);
  state.real_view.text = r.state.text;
  state.real_view.folder_text = r.folder.string();
  if (!r.state.ablation.empty()) state.real_view.mode = r.state.ablation.mode;
  if (show) state.view = View::Real;
}

// Why Save asks where to save restored work instead of writing its original.
std::string why_save_asks(const std::filesystem::path& original, const std::optional<FileStamp>& stamp) {
  std::error_code ec;
  if (original.empty()) return "it never had a file";
  if (!std::filesystem::exists(original, ec)) return shown_path(original) + " is gone";
  if (!stamp || !original.is_absolute()) return shown_path(original) + " could not be checked";
  return shown_path(original) + " has changed since";
}

// Where Save writes what was restored: its original, or nowhere before asking.
std::string restored_where(const AppState& state, const RecoveryOffer& r) {
  std::string out;
  const auto say = [&](const char* what, const std::filesystem::path& saves_to, const std::filesystem::path& original,
                       const std::optional<FileStamp>& stamp) {
    if (saves_in_place(state, saves_to)) out += std::string("; Save writes ") + what + " to " + shown_path(saves_to);
    else if (!saves_to.empty())
      out += std::string("; Save asks where to save ") + what + " (" + shown_path(saves_to) +
             " is in the lab's own folder)";
    else out += std::string("; Save asks where to save ") + what + " (" + why_save_asks(original, stamp) + ")";
  };
  if (r.scenario) say("the document", state.document().path, r.original, r.original_stamp);
  if (r.model) say("the model", state.model_doc.path(), r.model_original, r.model_original_stamp);
  return out;
}

}  // namespace

bool restore_unsaved_work(AppState& state, const RecoveryOffer& r) {
  if (r.scenario && !restore_scenario(state, r)) return false;
  if (r.model) {
    if (const std::optional<std::string> failed = restore_model(state, r)) {
      state.message = "The unsaved model could not be restored: " + *failed;
      return false;
    }
  }
  if (r.real_model) restore_real_model(state, *r.real_model, !r.scenario && !r.model);
  state.message = "Restored the unsaved changes from " + r.when + restored_where(state, r);
  return true;
}

namespace {

// Save over the file the document (or model) was opened from or last saved to, changed on disk since, or over
// another file that exists: nothing is written, and the question waits in state.save_conflict. True when that is so.
bool save_conflicts(AppState& state, bool model, const std::filesystem::path& path,
                    const std::filesystem::path& own_file, const std::optional<FileStamp>& stamp, SaveOver over) {
  if (over == SaveOver::Overwrite) return false;
  if (own_file.empty() || canonical_path(path) != canonical_path(own_file)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return false;
    state.save_conflict = SaveConflict{model, path, "Replace " + shown_path(path) + "? It already exists.", true};
    state.message = "Not saved: " + shown_path(path) + " already exists";
    return true;
  }
  const std::optional<std::string> changed = changed_on_disk(path, stamp);
  if (!changed) return false;
  state.save_conflict = SaveConflict{model, path, *changed + "."};
  state.message = "Not saved: " + *changed;
  return true;
}

}  // namespace

void answer_recovery(AppState& state, RecoveryAnswer answer) {
  if (!state.recovery || state.recovery_answer != RecoveryAnswer::None) return;
  if (answer != RecoveryAnswer::Restored) {
    state.recovery_answer = answer;
    return;
  }
  const auto restore = [&state] {
    if (!state.recovery || state.recovery_answer != RecoveryAnswer::None) return;
    if (restore_unsaved_work(state, *state.recovery)) {
      state.recovery_answer = RecoveryAnswer::Restored;
      state.recovery_failed.clear();
    } else {
      state.recovery_failed = state.message;  // the entry stays until the work is restored, discarded or kept
    }
  };
  // This window's own edits (made while the prompt waited) are not replaced without a word.
  const RecoveryOffer& r = *state.recovery;
  const bool replaces_model = r.model.has_value() && state.model_doc.loaded() && state.model_doc.dirty();
  if ((r.scenario && state.document().dirty()) || replaces_model) {
    state.pending.ask_to_replace(restore, r.model.has_value());
  } else {
    restore();
  }
}

std::optional<std::filesystem::path> lab_folder_of(const AppState& state, const std::filesystem::path& path) {
  for (const std::filesystem::path& folder : state.lab_folders)
    if (!path.empty() && !folder.empty() && inside_folder(path, folder)) return folder;
  return std::nullopt;
}

bool saves_in_place(const AppState& state, const std::filesystem::path& path) {
  return !path.empty() && !lab_folder_of(state, path);
}

std::filesystem::path output_folder(const AppState& state) {
  const std::filesystem::path& file = state.document().path;
  if (saves_in_place(state, file)) return std::filesystem::absolute(file).parent_path();
  std::error_code ec;
  std::filesystem::path here = std::filesystem::current_path(ec);
  if (ec || lab_folder_of(state, here / "x")) {
    const char* home = std::getenv("HOME");
    here = home && *home ? std::filesystem::path(home) : std::filesystem::temp_directory_path();
  }
  return here;
}

std::filesystem::path save_as_start(const AppState& state, const std::filesystem::path& path) {
  return lab_folder_of(state, path) ? output_folder(state) / path.filename() : path;
}

namespace {

// Nothing of the user's goes into the lab's own folders: true (and the message) when `path` is in one.
bool refused_in_lab_folder(AppState& state, const std::filesystem::path& path) {
  const std::optional<std::filesystem::path> folder = lab_folder_of(state, path);
  if (folder)
    state.message = "Not saved: " + shown_path(path) + " is in the lab's own folder (" + shown_path(*folder) +
                    "), which it reads its examples and settings from; save your copy elsewhere with Save As";
  return folder.has_value();
}

}  // namespace

void save_model_document(AppState& state, const std::filesystem::path& path, SaveOver over) {
  const ModelDocument& m = state.model_doc;
  if (refused_in_lab_folder(state, path) || save_conflicts(state, true, path, m.path(), m.stamp(), over)) return;
  try {
    save_model_file(state.model_doc.model(), path);
    state.model_doc.mark_saved(path);
    remember_recent(state.recent_files, path);
    state.message = "Saved " + shown_path(path);
  } catch (const InputError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void open_real_model_file(AppState& state, const std::filesystem::path& path) {
  RealSession s = read_real_session_file(path, state.memory_budget);
  state.real_view.text = s.text;
  state.real_view.mode = s.ablation.mode;
  state.real_view.folder_text = s.folder.string();
  state.real_model.open(s.folder, RealModelState{std::move(s.text), std::move(s.ablation), std::move(s.ids)},
                        std::move(s.conversion));
  state.real_view.file = path;
  remember_recent(state.recent_files, path);
  state.view = View::Real;
}

void save_real_model(AppState& state, const std::filesystem::path& path) {
  if (!state.real_model.loaded()) return;
  if (refused_in_lab_folder(state, path)) return;
  // Only its own file is written over: another that exists is the user's (there is no undo for a file replaced).
  std::error_code ec;
  if (std::filesystem::exists(path, ec) &&
      (state.real_view.file.empty() || canonical_path(path) != canonical_path(state.real_view.file))) {
    state.message = "Not saved: " + shown_path(path) + " already exists; choose another name with Save As";
    return;
  }
  const RealModelState& now = state.real_model.state();
  try {
    write_file_atomically(path, real_session_file_text({state.real_model.folder(), now.text, now.ids, now.ablation,
                                                        state.real_model.conversion()}));
    state.real_view.file = path;
    remember_recent(state.recent_files, path);
    state.message = "Saved " + shown_path(path);
  } catch (const InputError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void open_document(AppState& state, const std::filesystem::path& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) return open_model_folder(state, path);
  try {
    // A JSON file with "layers" is a model, one with "real_model" the Real model view's; anything else is read as a
    // scenario (and its errors said as one).
    const DocumentKind kind = document_file_kind(path, state.memory_budget);
    if (kind == DocumentKind::Model) return open_model_document(state, path);
    if (kind == DocumentKind::RealModel) return open_real_model_file(state, path);
    if (state.open(load_scenario_file(path, state.memory_budget), path)) remember_recent(state.recent_files, path);
  } catch (const InputError& e) {
    state.message = "Could not open " + shown_path(path) + ": " + e.what() + " (the current scenario is kept)";
  }
}

void save_document(AppState& state, const std::filesystem::path& path, SaveOver over) {
  const Document& d = state.document();
  if (refused_in_lab_folder(state, path) || save_conflicts(state, false, path, d.path, d.stamp, over)) return;
  try {
    save_scenario_file(state.scenario(), path);
    state.mark_saved(path);
    remember_recent(state.recent_files, path);
    state.message = "Saved " + shown_path(path);
  } catch (const InputError& e) {
    state.message = std::string("Not saved: ") + e.what();
  }
}

void export_document(AppState& state, const std::string& extension) {
  // Streamed into the file: a big trace is never held whole as text or as a tree.
  const auto write = [&](std::ostream& out) {
    if (extension != "json") return state.handout(out, state.trace(), extension == "tex");
    write_trace_json(out, state.trace());
    out << '\n';
  };
  // Never over an existing file, nor into a lab folder.
  const std::string file = unique_file_name(output_folder(state).string(), state.scenario().name + "_trace", extension);
  try {
    write_file_atomically(file, write, Existing::Keep);
    state.message = "Exported " + file;
  } catch (const InputError& e) {
    state.message = std::string("Not exported: ") + e.what();
  }
}

}  // namespace attn::ui
