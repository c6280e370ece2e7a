// The presets loader: the shipped file's figures, and one exact message per malformed input.
#include <doctest/doctest.h>

#include "core/io/presets_json.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;
using attn::test::kShippedPresets;
using nlohmann::json;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_presets(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// One model entry with `extra` merged in (a null value removes the key), wrapped in a presets file.
std::string file_with(const json& extra) {
  json model = {{"name", "m"},     {"source", "s"}, {"variant", "gqa"}, {"layers", 80},
                {"d_model", 8192}, {"heads", 64},   {"kv_heads", 8},    {"head_dim", 128}};
  for (const auto& [key, value] : extra.items()) {
    if (value.is_null()) model.erase(key);
    else model[key] = value;
  }
  return json{{"models", {model}}}.dump();
}

}  // namespace

TEST_CASE("the shipped presets: nine models, each with its source") {
  const std::vector<ModelShape> all = load_presets_file(kShippedPresets);
  const char* names[] = {"llama-3-70b", "gemma-3-27b", "deepseek-v2", "gpt-2-small", "llama-3.1-8b",
                         "mistral-7b",  "falcon-7b",   "qwen2.5-72b", "deepseek-v3"};
  REQUIRE(all.size() == std::size(names));
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].name == names[i]);
    CHECK_FALSE(all[i].source.empty());
  }
  // name, variant, layers, d_model, heads, kv_heads, head_dim, latent, rope, window, local, global
  const ModelShape expected[] = {
      {"llama-3-70b", all[0].source, Variant::Gqa, 80, 8192, 64, 8, 128, 0, 0, 0, 0, 0},
      {"gemma-3-27b", all[1].source, Variant::Gqa, 62, 5376, 32, 16, 128, 0, 0, 1024, 5, 1},
      {"deepseek-v2", all[2].source, Variant::Mla, 60, 5120, 128, 128, 128, 512, 64, 0, 0, 0},
      {"gpt-2-small", all[3].source, Variant::Mha, 12, 768, 12, 12, 64, 0, 0, 0, 0, 0},
      {"llama-3.1-8b", all[4].source, Variant::Gqa, 32, 4096, 32, 8, 128, 0, 0, 0, 0, 0},
      {"mistral-7b", all[5].source, Variant::Gqa, 32, 4096, 32, 8, 128, 0, 0, 4096, 1, 0},
      {"falcon-7b", all[6].source, Variant::Mqa, 32, 4544, 71, 1, 64, 0, 0, 0, 0, 0},
      {"qwen2.5-72b", all[7].source, Variant::Gqa, 80, 8192, 64, 8, 128, 0, 0, 0, 0, 0},
      {"deepseek-v3", all[8].source, Variant::Mla, 61, 7168, 128, 128, 128, 512, 64, 0, 0, 0},
  };
  for (std::size_t i = 0; i < all.size(); ++i) {
    CAPTURE(all[i].name);
    CHECK(all[i] == expected[i]);
  }
  CHECK(all[0].source == "Table 3 of arXiv 2604.00965; The Llama 3 Herd of Models (arXiv 2407.21783)");
}

TEST_CASE("shape_to_json writes the file's own form, and reads back the same shapes") {
  const std::vector<ModelShape> all = load_presets_file(kShippedPresets);
  json models = json::array();
  for (const ModelShape& m : all) models.push_back(shape_to_json(m));
  CHECK(presets_from_json({{"models", models}}) == all);
  CHECK(models[2] == json({{"name", "deepseek-v2"},
                           {"source", all[2].source},
                           {"variant", "mla"},
                           {"layers", 60},
                           {"d_model", 5120},
                           {"heads", 128},
                           {"head_dim", 128},
                           {"latent_dim", 512},
                           {"rope_dim", 64}}));
}

TEST_CASE("mha and mqa entries may leave kv_heads out") {
  const auto mha = parse_presets(file_with({{"variant", "mha"}, {"kv_heads", nullptr}}));
  CHECK(mha[0].kv_heads == 64);
  const auto mqa = parse_presets(file_with({{"variant", "mqa"}, {"kv_heads", nullptr}}));
  CHECK(mqa[0].kv_heads == 1);
}

TEST_CASE("malformed presets: every problem is named with its path") {
  const std::pair<std::string, std::string> cases[] = {
      {file_with({{"kv_heads", 7}}), "models[0].kv_heads: must divide heads (64) but found 7"},
      {file_with({{"kv_heads", nullptr}}), "models[0].kv_heads: missing (required)"},
      {file_with({{"kv_heads", "8"}}), "models[0].kv_heads: expected an integer but found string \"8\""},
      {file_with({{"kv_heads", 8.5}}), "models[0].kv_heads: expected an integer but found number 8.5"},
      {file_with({{"heads", 0}}), "models[0].heads: must be >= 1 (found 0)"},
      {file_with({{"layers", 100000}}), "models[0].layers: must be <= 65536 (found 100000)"},
      {file_with({{"layers", 18446744073709551615ull}}),
       "models[0].layers: must be <= 65536 (found 18446744073709551615)"},
      {file_with({{"d_model", nullptr}}), "models[0].d_model: missing (required)"},
      {file_with({{"source", nullptr}}), "models[0].source: missing (required)"},
      {file_with({{"source", ""}}), "models[0].source: must not be empty"},
      {file_with({{"variant", "mhq"}}),
       "models[0].variant: expected one of mha | gqa | mqa | mla but found string \"mhq\""},
      {file_with({{"variant", "mha"}}),
       "models[0].kv_heads: must equal heads (64) for mha, one key/value head per query head, but found 8"},
      {file_with({{"variant", "mqa"}}), "models[0].kv_heads: must be 1 for mqa but found 8"},
      {file_with({{"variant", "mla"}, {"latent_dim", 512}}),
       "models[0].kv_heads: only used by mha, gqa and mqa (this is mla)"},
      {file_with({{"variant", "mla"}, {"kv_heads", nullptr}}), "models[0].latent_dim: missing (required)"},
      {file_with({{"variant", "mla"}, {"kv_heads", nullptr}, {"latent_dim", 0}}),
       "models[0].latent_dim: must be >= 1 for mla, the width of the cached latent (found 0)"},
      {file_with({{"latent_dim", 512}}), "models[0].latent_dim: only used by mla (this is gqa)"},
      {file_with({{"rope_dim", 64}}), "models[0].rope_dim: only used by mla (this is gqa)"},
      {file_with({{"window", 1024}}), "models[0].local_layers: missing (required)"},
      {file_with({{"window", 1024}, {"local_layers", 5}}), "models[0].global_layers: missing (required)"},
      {file_with({{"window", 1024}, {"local_layers", 0}, {"global_layers", 1}}),
       "models[0].local_layers: must be >= 1 (found 0)"},
      {file_with({{"local_layers", 5}}), "models[0].local_layers: given, but window is not set"},
      {file_with({{"window", 0}, {"local_layers", 5}, {"global_layers", 1}}),
       "models[0].window: must be >= 1 (found 0)"},
      {file_with({{"head_size", 128}}),
       "models[0].head_size: unknown key (expected one of: name, source, variant, layers, d_model, heads, kv_heads, "
       "head_dim, latent_dim, rope_dim, window, local_layers, global_layers)"},
      {R"({"models": []})", "models: expected at least one model but found none"},
      {R"({"models": {}})", "models: expected an array of models but found object"},
      {R"({"model": []})", "model: unknown key (expected one of: description, models)"},
      {R"({})", "models: missing (required)"},
      {R"([])", "presets: expected an object but found array"},
      {R"({"models": [3]})", "models[0]: expected an object but found number 3"},
      {R"({"models": [], "models": []})", "models: key appears twice in one object"},
      {"", "the file is empty (expected a JSON object)"},
      {"{\"models\": [\n",
       "line 2, column 1: not valid JSON: found the end of the file where a value (a number, a string in double "
       "quotes, true, false, null, a list [...] or an object {...}) was expected"},
  };
  for (const auto& [text, message] : cases) {
    const std::string captured = text;  // CAPTURE is a lambda: not a structured binding (Clang 14)
    CAPTURE(captured);
    CHECK(error_of(text) == message);
  }
}

TEST_CASE("malformed presets: names are unique, and the index points at the entry") {
  const json good = json::parse(file_with({}))["models"][0];
  json models = json::array();
  for (const char* name : {"a", "b", "c", "d"}) {
    models.push_back(good);
    models.back()["name"] = name;
  }
  models[3]["kv_heads"] = 7;
  CHECK(error_of(json{{"models", models}}.dump()) == "models[3].kv_heads: must divide heads (64) but found 7");
  models[3] = good;
  models[2] = good;
  CHECK(error_of(json{{"models", models}}.dump()) == "models[3].name: \"m\" is already the name of models[2]");
}

TEST_CASE("presets files: a missing file") {
  CHECK_THROWS_WITH_AS(load_presets_file("/nonexistent/models.json"), "no such file", InputError);
}
