// The fuzz target's other readers: the first byte of an input picks the file it is read as (fuzz_scenario_body.h).
// Each reader must refuse with an InputError (or, for settings and recovery, a default and a problem), never
// crash, hang or throw anything else; what it accepts must be within the limits it promises.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "app/gui/user_files.h"
#include "core/io/batches_json.h"
#include "core/io/checkpoint_config.h"
#include "core/io/json_fields.h"
#include "core/io/presets_json.h"
#include "core/io/safetensors.h"
#include "core/io/tokenizer_json.h"
#include "core/memory_budget.h"
#include "fuzz/fuzz_scenario_body.h"
#include "ui/logic/document_files.h"
#include "ui/logic/lessons.h"

namespace attn::fuzz {
namespace {

[[noreturn]] void fail_file(const std::string& what) {
  std::fprintf(stderr, "fuzz_scenario: invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_file(bool cond, const std::string& what) {
  if (!cond) fail_file(what);
}

// The readers of settings, recovery and lessons take a path: a folder of this process's own, emptied after each
// input (a reader may move a damaged file aside).
std::filesystem::path fuzz_file(std::string_view text, const char* name = "input.json") {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("attn-fuzz-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / name;
  std::ofstream(file, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  return file;
}

void fuzz_settings(std::string_view text) {
  std::string problem;
  const gui::Settings s = gui::load_settings(fuzz_file(text), &problem);
  check_file(s.theme == "dark" || s.theme == "light", "settings theme \"" + s.theme + "\"");
  check_file(s.zoom >= 0.75f && s.zoom <= 3.0f, "settings zoom " + std::to_string(s.zoom));
  check_file(s.width >= 640 && s.width <= 8192, "settings width " + std::to_string(s.width));
  check_file(s.height >= 480 && s.height <= 8192, "settings height " + std::to_string(s.height));
  check_file(s.recent.size() <= ui::kMaxRecentFiles, "settings recent has " + std::to_string(s.recent.size()));
}

void fuzz_recovery(std::string_view text) {
  std::string problem;
  const std::optional<ui::RecoveryOffer> r = gui::read_recovery(fuzz_file(text), &problem);
  check_file(r.has_value() || !problem.empty(), "an unreadable recovery file without a problem");
  if (r && r->scenario) validate(*r->scenario);  // what it offers must open (an InputError here aborts below)
}

void fuzz_lesson(std::string_view text) {
  const ui::Lesson l = ui::load_lesson_file(fuzz_file(text), std::filesystem::path(ATTN_ASSETS_DIR) / "scenarios");
  check_file(!l.pages.empty() && !l.name.empty() && !l.title.empty(), "a lesson without pages, name or title");
}

void fuzz_presets(std::string_view text) {
  for (const ModelShape& m : parse_presets(text)) check_file(!m.name.empty(), "a preset without a name");
}

void fuzz_batches(std::string_view text) {
  Model m;  // a batches file is read against a model's vocabulary and positions
  m.vocab = {"a", "b", "c", "d", "e"};
  m.max_positions = 8;
  for (const std::vector<Sequence>& batch : parse_batches(text, m, limits::kDefaultMemoryBudget))
    for (const Sequence& q : batch) {
      check_file(q.ids.size() >= 2 && q.ids.size() <= 8, "a sequence of " + std::to_string(q.ids.size()) + " ids");
      check_file(q.targets.size() == q.ids.size(), "targets and ids differ in length");
      for (const int id : q.ids) check_file(id >= 0 && id < 5, "token id " + std::to_string(id) + " outside the vocab");
    }
}

// A safetensors file that opens holds tensors whose bytes lie in the file, as many as dtype and shape say, and every
// one of them reads or is refused by name.
void fuzz_safetensors(std::string_view bytes) {
  const auto f = SafetensorsFile::open(fuzz_file(bytes, "input.safetensors"), limits::kDefaultMemoryBudget);
  for (const StoredTensor& t : f->tensors()) {
    check_file(t.end >= t.begin && t.end <= bytes.size(), "tensor " + t.name + "'s bytes outside the file");
    check_file((t.end - t.begin) * 8 == t.elements() * static_cast<std::uint64_t>(dtype_bits(t.dtype)),
               "tensor " + t.name + "'s bytes disagree with its shape");
    if (!is_readable_dtype(t.dtype)) continue;
    std::vector<double> values(t.elements());
    try {
      f->read(t, values);
    } catch (const InputError&) {  // a weight that is not finite
    }
  }
}

void fuzz_config(std::string_view text) {
  const CheckpointConfig c = parse_checkpoint_config(text);
  check_file(c.heads >= 1 && c.kv_heads >= 1 && c.heads % c.kv_heads == 0, "heads not a multiple of kv_heads");
  check_file(c.head_dim >= 1 && c.d_model >= 1 && c.layers >= 1 && c.vocab >= 1, "a size below 1");
  check_file(c.family == ModelFamily::Gpt2 || c.head_dim % 2 == 0, "an odd head_dim with RoPE");
}

// A tokenizer that reads encodes any text into ids of its vocabulary, one piece each, or refuses it by name.
void fuzz_tokenizer(std::string_view text) {
  const Tokenizer t = parse_tokenizer_json(text);
  for (const char* sample : {"The cat sat on the mat.", "  e\u0301 12\n\u732B <s>x</s>", ""}) {
    try {
      const Encoding e = encode(t, sample);
      check_file(e.ids.size() == e.pieces.size(), "ids and pieces differ in number");
      for (const int id : e.ids)
        check_file(id >= 0 && id < t.vocab_size(), "token id " + std::to_string(id) + " outside the vocabulary");
    } catch (const InputError&) {  // a character outside a vocabulary without an unknown token
    }
  }
}

}  // namespace

int fuzz_one_input(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const char reader = text.empty() ? '{' : text.front();
  const std::string_view rest = text.empty() ? text : text.substr(1);
  try {
    switch (reader) {
      case 's': fuzz_settings(rest); return 0;
      case 'r': fuzz_recovery(rest); return 0;
      case 'l': fuzz_lesson(rest); return 0;
      case 'p': fuzz_presets(rest); return 0;
      case 'b': fuzz_batches(rest); return 0;
      case 't': fuzz_safetensors(rest); return 0;
      case 'c': fuzz_config(rest); return 0;
      case 'k': fuzz_tokenizer(rest); return 0;
      default: return fuzz_one_scenario(data, size);
    }
  } catch (const InputError& e) {
    if (reader == 'r') fail_file(std::string("a recovery read_recovery accepted does not validate: ") + e.what());
    return 0;  // a refusal with a message is what a bad file should get
  }
}

}  // namespace attn::fuzz
