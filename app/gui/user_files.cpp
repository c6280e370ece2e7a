#include "app/gui/user_files.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/io/model_write.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
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
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  const std::filesystem::path temporary = file.string() + ".writing";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw std::runtime_error("cannot write " + temporary.string());
    }
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw std::runtime_error("cannot replace " + file.string() + ": " + ec.message());
  }
}

namespace {

// Reads the settings' fields one by one: a field that cannot be used keeps its default, and the first such problem
// is kept to be reported (settings are a convenience, never a reason not to start).
class SettingsFields {
 public:
  SettingsFields(const json& j, std::string& problem) : j_(j), problem_(problem) {}

  // A number within [lo, hi]: any other type keeps `fallback`, a number outside is clamped (read as a double first,
  // so 1e20 for an int is a number too large, not undefined behaviour).
  double number(const char* key, double fallback, double lo, double hi) {
    if (!j_.contains(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number()) {
      note(key, "expected a number from " + general_number(lo) + " to " + general_number(hi) + " but found " +
                    describe_found(v) + "; " + general_number(fallback) + " is used");
      return fallback;
    }
    const double x = v.get<double>();
    if (x >= lo && x <= hi) return x;
    const double clamped = x < lo ? lo : hi;
    note(key, "must be from " + general_number(lo) + " to " + general_number(hi) + " (found " + v.dump() + "); " +
                  general_number(clamped) + " is used");
    return clamped;
  }
  std::string theme(const char* key, const std::string& fallback) {
    if (!j_.contains(key)) return fallback;
    const json& v = j_.at(key);
    if (v.is_string() && (v.get<std::string>() == "dark" || v.get<std::string>() == "light"))
      return v.get<std::string>();
    note(key, "expected \"dark\" or \"light\" but found " + describe_found(v) + "; \"" + fallback + "\" is used");
    return fallback;
  }
  // A list of strings; anything else is ignored (never a one-item list made of a lone string).
  std::vector<std::string> recent(const char* key) {
    std::vector<std::string> files;
    if (!j_.contains(key)) return files;
    const json& v = j_.at(key);
    if (!v.is_array()) {
      note(key, "expected a list of file names but found " + describe_found(v) + "; it is ignored");
      return files;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        note(std::string(key) + "[" + std::to_string(i) + "]",
             "expected a file name but found " + describe_found(v[i]) + "; it is ignored");
      else if (files.size() < ui::kMaxRecentFiles) files.push_back(v[i].get<std::string>());
    }
    return files;
  }

 private:
  void note(const std::string& field, const std::string& what) {
    if (problem_.empty()) problem_ = field + ": " + what;
  }
  const json& j_;
  std::string& problem_;
};

}  // namespace

Settings load_settings(const std::filesystem::path& file, std::string* problem) {
  Settings s;
  std::string first;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return s;  // no file yet: the defaults, nothing to say
  try {
    const json j = parse_json_document(read_document_file(file, 1 << 20));
    if (!j.is_object()) throw InputError("settings", "expected an object but found " + describe_found(j));
    SettingsFields f(j, first);
    s.theme = f.theme("theme", s.theme);
    s.zoom = static_cast<float>(f.number("zoom", s.zoom, 0.75, 3.0));
    s.width = static_cast<int>(std::lround(f.number("width", s.width, 640, 8192)));
    s.height = static_cast<int>(std::lround(f.number("height", s.height, 480, 8192)));
    s.recent = f.recent("recent");
  } catch (const std::exception& e) {  // a damaged file: settings are a convenience, never a reason not to start
    first = std::string(e.what()) + " (the default settings are used)";
    s = Settings{};
  }
  if (problem && !first.empty()) *problem = file.string() + ": " + first;
  return s;
}

void save_settings(const Settings& s, const std::filesystem::path& file) {
  const nlohmann::ordered_json j = {
      {"theme", s.theme}, {"zoom", s.zoom}, {"width", s.width}, {"height", s.height}, {"recent", s.recent}};
  write_file_atomically(file, j.dump(2) + "\n");
}

void write_recovery(const std::filesystem::path& file, const ui::RecoveryOffer& r) {
  nlohmann::ordered_json j;
  j["original"] = r.original.string();
  j["when"] = now_text();
  if (r.scenario) j["scenario"] = nlohmann::ordered_json::parse(scenario_to_text(*r.scenario));
  if (r.model)
    j["model"] = {{"original", r.model_original.string()},
                  {"tokens", r.model->tokens},
                  {"model", nlohmann::ordered_json::parse(model_to_text(r.model->model))}};
  // Without indents: a model's weights indented a number per line would grow past what read_recovery accepts.
  write_file_atomically(file, j.dump() + "\n");
}

namespace {

ui::ModelInput recovered_model(const JsonFields& f, std::filesystem::path& original) {
  original = f.string("original", "");
  const json& tokens = f.require("tokens");
  if (!tokens.is_array()) throw InputError(f.child("tokens"), "expected a list of tokens");
  ui::ModelInput in;
  try {
    in.model = model_from_json(f.require("model"));
  } catch (const InputError& e) {
    throw within(f.child("model") + ".", e);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_string()) throw InputError(f.child("tokens") + "[" + std::to_string(i) + "]", "expected a token");
    in.tokens.push_back(tokens[i].get<std::string>());
  }
  return in;
}

}  // namespace

std::optional<ui::RecoveryOffer> read_recovery(const std::filesystem::path& file, std::string* problem) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  try {
    const json j = parse_json_document(read_document_file(file, kMaxScenarioFileBytes + kMaxModelFileBytes));
    const JsonFields f(j, "", {"original", "when", "scenario", "model"}, "recovery");
    ui::RecoveryOffer r;
    if (f.has("scenario") || !f.has("model")) r.scenario = scenario_from_json(f.require("scenario"));
    r.original = f.string("original", "");
    r.when = f.string("when", "");
    if (f.has("model")) {
      r.model = recovered_model(JsonFields(f.at("model"), "model", {"original", "tokens", "model"}, "recovery"),
                                r.model_original);
    }
    return r;
  } catch (const InputError& e) {
    if (problem) *problem = file.string() + ": " + e.what();
    return std::nullopt;
  }
}

}  // namespace attn::gui
