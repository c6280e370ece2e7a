#include "app/gui/user_files.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/io/scenario_json.h"
#include "core/io/scenario_write.h"
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

Settings load_settings(const std::filesystem::path& file) {
  Settings s;
  try {
    const json j = parse_json_document(read_document_file(file, 1 << 20));
    s.theme = j.value("theme", s.theme) == "light" ? "light" : "dark";
    s.zoom = std::clamp(j.value("zoom", s.zoom), 0.75f, 3.0f);
    s.width = std::clamp(j.value("width", s.width), 640, 8192);
    s.height = std::clamp(j.value("height", s.height), 480, 8192);
    for (const json& r : j.value("recent", json::array()))
      if (r.is_string() && s.recent.size() < ui::kMaxRecentFiles) s.recent.push_back(r.get<std::string>());
  } catch (const std::exception&) {
    return Settings{};  // no file yet, or a damaged one: start from the defaults
  }
  return s;
}

void save_settings(const Settings& s, const std::filesystem::path& file) {
  const nlohmann::ordered_json j = {
      {"theme", s.theme}, {"zoom", s.zoom}, {"width", s.width}, {"height", s.height}, {"recent", s.recent}};
  write_file_atomically(file, j.dump(2) + "\n");
}

void write_recovery(const std::filesystem::path& file, const Scenario& s, const std::string& original) {
  nlohmann::ordered_json j;
  j["original"] = original;
  j["when"] = now_text();
  j["scenario"] = nlohmann::ordered_json::parse(scenario_to_text(s));
  write_file_atomically(file, j.dump(2) + "\n");
}

std::optional<Recovery> read_recovery(const std::filesystem::path& file, std::string* problem) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  try {
    const json j = parse_json_document(read_document_file(file, kMaxScenarioFileBytes));
    const JsonFields f(j, "", {"original", "when", "scenario"}, "recovery");
    return Recovery{scenario_from_json(f.require("scenario")), f.string("original", ""), f.string("when", "")};
  } catch (const InputError& e) {
    if (problem) *problem = file.string() + ": " + e.what();
    return std::nullopt;
  }
}

}  // namespace attn::gui
