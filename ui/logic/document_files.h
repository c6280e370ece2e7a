#pragma once
// The document's files, as File > Open, Save and Export do them: what went wrong is written to
// state.message and the document stays as it was. No window: tests run them on real files.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ui/logic/app_state.h"

namespace attn::ui {

inline constexpr std::size_t kMaxRecentFiles = 8;
// `path` at the top of File > Open recent (absolute), once, and at most kMaxRecentFiles in all.
void remember_recent(std::vector<std::string>& recent, const std::filesystem::path& path);
// A model folder at the top of File > Open recent: its absolute path ending in "/", which is how the menu knows a
// folder without reading the disk.
void remember_recent_folder(std::vector<std::string>& recent, const std::filesystem::path& folder);
bool recent_is_folder(const std::string& entry);

// Opens `path` as the document (the current one is kept if it cannot be read or traced); a model file opens
// in the Model view instead, a folder in the Real model view.
void open_document(AppState& state, const std::filesystem::path& path);
// A Hugging Face model folder in the Real model view, on the text it shows (the starting text when none is open):
// remembered in File > Open recent; one that cannot be opened is said in the view, the last model staying.
void open_model_folder(AppState& state, const std::filesystem::path& folder);
// Point `i` of the Compare view's measured trade-off (tradeoff_rows' order) in the Real model view: the measured
// folder's model converted in memory (as it is for the model as shipped), on the view's text and heads knocked out.
void open_tradeoff_point(AppState& state, std::size_t i);
// A model file (core/io/model_json.h) as the Model view's document, with its first tokens; the Model view shows it.
void open_model_document(AppState& state, const std::filesystem::path& path);
// The lab folder (state.lab_folders) `path` lies in, or nullopt.
std::optional<std::filesystem::path> lab_folder_of(const AppState& state, const std::filesystem::path& path);
// Whether Save writes a document (or the model) to its file `path` without asking where: it has one, and it is not
// in a lab folder.
bool saves_in_place(const AppState& state, const std::filesystem::path& path);
// Where the window writes a new file (an export, a picture): beside the document when its file is the user's, else
// the current folder, or the home folder when the current one is a lab folder.
std::filesystem::path output_folder(const AppState& state);
// Where Save As starts for a file `path`: the path itself, or the same name in output_folder when `path` is in a lab
// folder.
std::filesystem::path save_as_start(const AppState& state, const std::filesystem::path& path);

// Whether Save may write over a file of the document's that changed on disk since it was opened or last saved, or
// over another file that exists.
enum class SaveOver { Ask, Overwrite };
// Saves the Model view's model to `path`, atomically; afterwards it is not dirty, `path` is its file and its stamp
// is renewed. `path` being the model's file changed on disk since (changed_on_disk), or another file that exists
// (Save As onto it), nothing is written unless `over` is Overwrite: state.save_conflict holds the question
// ("Replace V.json? It already exists." for another file) and state.message says "Not saved: ...". A `path` in a lab
// folder is never written: "Not saved: ... is in the lab's assets folder ...; save your copy with Save As".
void save_model_document(AppState& state, const std::filesystem::path& path, SaveOver over = SaveOver::Ask);
// The same for the document.
void save_document(AppState& state, const std::filesystem::path& path, SaveOver over = SaveOver::Ask);
// The Real model view as a file ({"real_model": ...}: its folder, text and heads knocked out), and back: File > Open
// takes it as it takes a scenario. Saving writes over no file but its own.
void save_real_model(AppState& state, const std::filesystem::path& path);
void open_real_model_file(AppState& state, const std::filesystem::path& path);
// What the recovery file should keep now: the unsaved changes of the document (recoverable_document) and of the
// model; nullopt when nothing is unsaved.
std::optional<RecoveryOffer> unsaved_work(const AppState& state);
// Brings back what the recovery file kept: each document opened from its file (if it had one) and changed into
// what was unsaved, so it is unsaved again and one undo away from the file. False (and state.message says why) if
// one could not be: the recovery file must then stay.
bool restore_unsaved_work(AppState& state, const RecoveryOffer& r);
// The recovery prompt's answer (RecoveryAnswer). Restored replaces what is open only through the unsaved-changes
// question (state.pending) when what it replaces has unsaved changes; a restore that fails leaves the offer
// open with state.recovery_failed saying why. The window's autosave then acts on the offered entry.
void answer_recovery(AppState& state, RecoveryAnswer answer);
// File > Export: "json" (the trace), "md" or "tex" (the handout); beside the document, never over a file.
void export_document(AppState& state, const std::string& extension);

}  // namespace attn::ui
