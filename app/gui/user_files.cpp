#include "app/gui/user_files.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"
#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/real_session.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "ui/logic/document_files.h"

namespace attn::gui {
namespace {

using nlohmann::json;

std::string now_text() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
  return buf;
}

}  // namespace

std::filesystem::path config_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "attention-lab";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config" / "attention-lab";
  return std::filesystem::current_path() / ".attention-lab";
}

void write_file_atomically(const std::filesystem::path& file, const std::string& text) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);  // the config folder
  attn::write_file_atomically(file, text);
}

namespace {

// Reads the settings' fields one by one: a field that cannot be used keeps its default, and the first such problem
// is kept to be reported (settings are a convenience, never a reason not to start).
class SettingsFields {
 public:
  // source: the file's text, so that a number is quoted as written.
  SettingsFields(const json& j, const JsonSource& source, std::string& problem)
      : j_(j), source_(source), problem_(problem) {}

  // A number within [lo, hi]: any other type keeps `fallback`, a number outside is clamped (read as a double first,
  // so 1e20 for an int is a number too large, not undefined behaviour).
  double number(const char* key, double fallback, double lo, double hi) {
    if (!j_.contains(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) {
      note(key, "expected a number from " + general_number(lo) + " to " + general_number(hi) + " but found " +
                    describe_found(v, key, &source_) + "; " + general_number(fallback) + " is used");
      return fallback;
    }
    const double x = v.get<double>();
    if (x >= lo && x <= hi) return x;
    const double clamped = x < lo ? lo : hi;
    note(key, "must be from " + general_number(lo) + " to " + general_number(hi) + " (found " +
                  written_value(v, key, &source_) + "); " + general_number(clamped) + " is used");
    return clamped;
  }
  std::string theme(const char* key, const std::string& fallback) {
    if (!j_.contains(key)) return fallback;
    const json& v = j_.at(key);
    if (v.is_string() && (v.get<std::string>() == "dark" || v.get<std::string>() == "light"))
      return v.get<std::string>();
    note(key, "expected \"dark\" or \"light\" but found " + describe_found(v, key, &source_) + "; \"" + fallback +
                  "\" is used");
    return fallback;
  }
  // A list of strings; anything else is ignored (never a one-item list made of a lone string).
  std::vector<std::string> recent(const char* key) {
    std::vector<std::string> files;
    if (!j_.contains(key)) return files;
    const json& v = j_.at(key);
    if (!v.is_array()) {
      note(key, "expected a list of file names but found " + describe_found(v, key, &source_) + "; it is ignored");
      return files;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
      if (!v[i].is_string())
        note(at, "expected a file name but found " + describe_found(v[i], at, &source_) + "; it is ignored");
      else if (files.size() < ui::kMaxRecentFiles) files.push_back(v[i].get<std::string>());
    }
    return files;
  }
  // A size as --memory-budget takes it, or a number of bytes; anything else leaves the machine's default.
  std::optional<std::int64_t> memory_budget(const char* key) {
    if (!j_.contains(key)) return std::nullopt;
    const json& v = j_.at(key);
    // A number of bytes is read by its value (3e9 is 3000000000 bytes); a refusal quotes it as written.
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    try {
      return parse_memory_size(text, "");  // note() names the field
    } catch (const InputError& e) {
      std::string what = e.what();
      if (const auto at = what.rfind("'" + text + "'"); at != std::string::npos && v.is_number())
        what.replace(at + 1, text.size(), written_value(v, key, &source_));
      note(key, what + "; the machine's default is used");
      return std::nullopt;
    }
  }

 private:
  // Every field's problem, in the file's order: each one changed is said, not only the first.
  void note(const std::string& field, const std::string& what) {
    problem_ += (problem_.empty() ? "" : "; ") + field + ": " + what;
  }
  const json& j_;
  const JsonSource& source_;
  std::string& problem_;
};

}  // namespace

Settings load_settings(const std::filesystem::path& file, std::string* problem) {
  Settings s;
  std::string first;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return s;  // no file yet: the defaults, nothing to say
  try {
    const std::string text = read_document_file(file, 1 << 20);
    const JsonSource source{text, ""};
    const json j = parse_json_document(text);
    if (!j.is_object()) throw InputError("settings", "expected an object but found " + describe_found(j, "", &source));
    SettingsFields f(j, source, first);
    s.theme = f.theme("theme", s.theme);
    s.zoom = static_cast<float>(f.number("zoom", s.zoom, 0.75, 3.0));
    s.width = static_cast<int>(std::lround(f.number("width", s.width, 640, 8192)));
    s.height = static_cast<int>(std::lround(f.number("height", s.height, 480, 8192)));
    s.recent = f.recent("recent");
    s.memory_budget = f.memory_budget("memory_budget");
  } catch (const std::exception& e) {  // a damaged file: settings are a convenience, never a reason not to start
    first = std::string(e.what()) + " (the default settings are used";
    // Kept for the user to mend: the settings written at quit would replace it.
    try {
      first += "; the file was moved to " + shown_path(set_aside(file)) + ")";
    } catch (const std::exception& moving) {
      first += "; it could not be moved aside: " + std::string(moving.what()) + ")";
    }
    s = Settings{};
  }
  if (problem && !first.empty()) *problem = shown_path(file) + ": " + first;
  return s;
}

void save_settings(const Settings& s, const std::filesystem::path& file) {
  // A path that is not UTF-8 cannot be a JSON string: such a recent file is left out, not the settings unsaved.
  std::vector<std::string> recent;
  for (const std::string& r : s.recent)
    if (shown_path(r) == r) recent.push_back(r);
  nlohmann::ordered_json j = {
      {"theme", s.theme}, {"zoom", s.zoom}, {"width", s.width}, {"height", s.height}, {"recent", recent}};
  if (s.memory_budget) j["memory_budget"] = *s.memory_budget;
  write_file_atomically(file, j.dump(2) + "\n");
}

namespace {

// The original's fingerprint: {"size", "modified_ns"}.
nlohmann::ordered_json stamp_json(const ui::FileStamp& s) { return {{"size", s.size}, {"modified_ns", s.modified_ns}}; }

std::optional<ui::FileStamp> json_stamp(const JsonFields& f, const char* key) {
  if (!f.has(key)) return std::nullopt;
  const JsonFields s(f.at(key), f.child(key), {"size", "modified_ns"}, "recovery", f.source());
  const json& size = s.require("size");
  const json& modified = s.require("modified_ns");
  if (!size.is_number_unsigned()) throw InputError(s.child("size"), "expected a file size in bytes");
  if (!modified.is_number_integer() || (modified.is_number_unsigned() && modified.get<std::uint64_t>() > INT64_MAX))
    throw InputError(s.child("modified_ns"), "expected a time in nanoseconds");
  return ui::FileStamp{size.get<std::uintmax_t>(), modified.get<std::int64_t>()};
}

// The Real model view's folder and state, as File > Save writes them (core/io/real_session.h).
nlohmann::ordered_json real_model_json(const ui::RealModelRecovery& r) {
  return real_session_json({r.folder, r.state.text, r.state.ids, r.state.ablation, r.conversion});
}

}  // namespace

void write_recovery(const std::filesystem::path& file, const ui::RecoveryOffer& r) {
  nlohmann::ordered_json j;
  j["original"] = path_json(r.original);
  if (r.original_stamp) j["original_stamp"] = stamp_json(*r.original_stamp);
  j["when"] = now_text();
  if (r.scenario) j["scenario"] = nlohmann::ordered_json::parse(scenario_to_text(*r.scenario));
  if (r.model) {
    nlohmann::ordered_json m = {{"original", path_json(r.model_original)}};
    if (r.model_original_stamp) m["original_stamp"] = stamp_json(*r.model_original_stamp);
    m["tokens"] = r.model->tokens;
    m["model"] = nlohmann::ordered_json::parse(model_to_text(r.model->model));
    j["model"] = std::move(m);
  }
  if (r.real_model) j["real_model"] = real_model_json(*r.real_model);
  // Without indents: a model's weights indented a number per line would grow past what read_recovery accepts.
  // A text typed that is not UTF-8 (the window's --model-text can be) is kept with U+FFFD for its bad bytes.
  write_file_atomically(file, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

namespace {

ui::ModelInput recovered_model(const JsonFields& f, ui::RecoveryOffer& r) {
  r.model_original = json_path(f, "original");
  r.model_original_stamp = json_stamp(f, "original_stamp");
  const json& tokens = f.require("tokens");
  if (!tokens.is_array()) throw InputError(f.child("tokens"), "expected a list of tokens");
  ui::ModelInput in;
  try {
    const JsonSource model_source = f.source() ? f.source()->under(f.child("model")) : JsonSource{};
    in.model = model_from_json(f.require("model"), &model_source);
  } catch (const InputError& e) {
    throw within(f.child("model") + ".", e);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) throw InputError(f.child("tokens") + "[" + std::to_string(i) + "]", "expected a token");
    in.tokens.push_back(tokens[i].get<std::string>());
  }
  return in;
}

// The Real model view's state; the heads are checked against the model when the folder opens.
ui::RealModelRecovery recovered_real_model(const JsonFields& f) {
  RealSession s = real_session_from_json(f);
  return {std::move(s.folder), {std::move(s.text), std::move(s.ablation), std::move(s.ids)}, std::move(s.conversion)};
}

ui::RecoveryOffer recovery_from_json(const json& j, const JsonSource& source) {
  const JsonFields f(j, "", {"original", "original_stamp", "when", "scenario", "model", "real_model"}, "recovery",
                     &source);
  ui::RecoveryOffer r;
  r.original = json_path(f, "original");
  r.original_stamp = json_stamp(f, "original_stamp");
  // Shown in the window as written by now_text(); another program's text is shown escaped and short.
  r.when = shorten_label(escaped_text(f.string("when", "")), 40);
  const JsonSource scenario_source = source.under("scenario");
  if (f.has("scenario") || (!f.has("model") && !f.has("real_model")))
    r.scenario = scenario_from_json(f.require("scenario"), &scenario_source);
  if (f.has("model"))
    r.model = recovered_model(
        JsonFields(f.at("model"), "model", {"original", "original_stamp", "tokens", "model"}, "recovery", &source), r);
  if (f.has("real_model"))
    r.real_model =
        recovered_real_model(JsonFields(f.at("real_model"), "real_model", kRealSessionKeys, "recovery", &source));
  return r;
}

}  // namespace

std::optional<ui::RecoveryOffer> read_recovery(const std::filesystem::path& file, std::string* problem,
                                               std::int64_t budget) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return std::nullopt;
  try {
    const std::string text =
        read_document_file(file, kMaxScenarioFileBytes + kMaxModelFileBytes, "a recovery file", budget);
    return recovery_from_json(parse_json_document(text), JsonSource{text, ""});
  } catch (const BudgetError&) {
    throw;                             // a good file, a small budget
  } catch (const std::exception& e) {  // InputError, or whatever else stops the reading: not to be trusted
    if (problem) *problem = shown_path(file) + ": " + e.what();
  }
  return std::nullopt;
}

std::filesystem::path set_aside(const std::filesystem::path& file) {
  // link() never replaces a file already there; rename() would.
  for (int n = 1;; ++n) {
    const std::filesystem::path aside = file.native() + ".unreadable" + (n == 1 ? "" : "-" + std::to_string(n));
    if (::link(file.c_str(), aside.c_str()) == 0) {
      if (::unlink(file.c_str()) != 0) {
        const int error = errno;
        ::unlink(aside.c_str());
        throw std::runtime_error(std::strerror(error));
      }
      return aside;
    }
    if (errno != EEXIST) {
      // A file system without hard links (or a folder as the recovery file): a rename to a name not taken.
      std::error_code ec;
      if (std::filesystem::exists(std::filesystem::symlink_status(aside, ec))) continue;
      std::filesystem::rename(file, aside, ec);
      if (ec) throw std::runtime_error(ec.message());
      return aside;
    }
  }
}

FoundRecovery find_recovery(const std::filesystem::path& file, std::int64_t budget) {
  FoundRecovery found;
  std::string problem;
  try {
    found.offer = read_recovery(file, &problem, budget);
  } catch (const BudgetError& e) {
    found.stuck = true;
    found.message = "The unsaved work kept in " + shown_path(file) + " was not offered: " + e.what() +
                    "; it is kept for a start with a larger budget";
    return found;
  }
  if (found.offer || problem.empty()) return found;
  try {
    const std::filesystem::path aside = set_aside(file);
    found.message = "The recovery file could not be read (" + problem + "); it was moved to " + shown_path(aside) +
                    " and kept there, nothing was restored";
  } catch (const std::exception& e) {
    found.stuck = true;
    found.message =
        "The recovery file could not be read (" + problem + ") nor moved aside (" + e.what() + "); it is kept as it is";
  }
  return found;
}

}  // namespace attn::gui
