#include "app/gui/user_files.h"

#include <algorithm>
#include <chrono>
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
#include "core/memory_budget.h"
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
    if (const auto b = j.find("memory_budget"); b != j.end())
      s.memory_budget = parse_memory_size(b->is_string() ? b->get<std::string>() : b->dump(), "memory_budget");
  } catch (const std::exception&) {
    return Settings{};  // no file yet, or a damaged one: start from the defaults
  }
  return s;
}

void save_settings(const Settings& s, const std::filesystem::path& file) {
  nlohmann::ordered_json j = {
      {"theme", s.theme}, {"zoom", s.zoom}, {"width", s.width}, {"height", s.height}, {"recent", s.recent}};
  if (s.memory_budget) j["memory_budget"] = *s.memory_budget;
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
