// A converted model written as a folder (`convert --out`) and opened again: its tensors and logits bit for bit as the
// conversion made them in memory, the source's tensors byte for byte, and what writing and reading refuse.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/checkpoint_model.h"
#include "core/io/converted_folder.h"
#include "core/io/safetensors_write.h"
#include "core/kv_conversion.h"
#include "helpers.h"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

struct F32Tensor {
  std::string name;
  std::vector<int> shape;
};

// A safetensors file of F32 tensors whose numbers are a wave (each tensor its own), written by hand.
std::string wavy_safetensors(const std::vector<F32Tensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::string data;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    std::size_t n = 1;
    for (const int d : tensors[k].shape) n *= static_cast<std::size_t>(d);
    header[tensors[k].name] = {
        {"dtype", "F32"}, {"shape", tensors[k].shape}, {"data_offsets", {data.size(), data.size() + 4 * n}}};
    for (std::size_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 1.3 * static_cast<double>(k)) * 0.6);
      data.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  const std::string text = header.dump();
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(text.size() >> (8 * i) & 0xFF);
  return bytes + text + data;
}

// GPT-2 with n_embd 8, 2 heads of 4, 2 layers, 6 positions and the tokens a..f.
fs::path wavy_gpt2(const std::string& name) {
  std::vector<F32Tensor> t{{"wte.weight", {6, 8}}, {"wpe.weight", {6, 8}}, {"ln_f.weight", {8}}, {"ln_f.bias", {8}}};
  for (int l = 0; l < 2; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    for (const char* ln : {"ln_1", "ln_2"}) t.insert(t.end(), {{h + ln + ".weight", {8}}, {h + ln + ".bias", {8}}});
    t.insert(t.end(), {{h + "attn.c_attn.weight", {8, 24}},
                       {h + "attn.c_attn.bias", {24}},
                       {h + "attn.c_proj.weight", {8, 8}},
                       {h + "attn.c_proj.bias", {8}},
                       {h + "mlp.c_fc.weight", {8, 32}},
                       {h + "mlp.c_fc.bias", {32}},
                       {h + "mlp.c_proj.weight", {32, 8}},
                       {h + "mlp.c_proj.bias", {8}}});
  }
  const fs::path d = fresh_dir(name);
  std::ofstream(d / "config.json")
      << R"({"model_type":"gpt2","n_embd":8,"n_head":2,"n_layer":2,"n_positions":6,"vocab_size":6})";
  std::ofstream(d / "vocab.json") << R"({"a":0,"b":1,"c":2,"d":3,"e":4,"f":5})";
  std::ofstream(d / "merges.txt") << "#version: 0.2\n";
  std::ofstream(d / "model.safetensors", std::ios::binary) << wavy_safetensors(t);
  return d;
}

const std::vector<int> kIds{0, 3, 1, 5, 2};
const std::vector<std::string> kPieces{"a", "d", "b", "f", "c"};

std::string folder_refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

struct Converted {
  std::shared_ptr<const CheckpointModel> source;
  Model after;
  ConvertedAttention attention;
};

Converted convert_and_write(const fs::path& from, const KvConversion& c, const fs::path& out) {
  Converted x{CheckpointModel::open(from, limits::kDefaultMemoryBudget), {}, {}};
  x.after = converted_model(x.source->model(), c);
  x.attention = convert_attention(*x.source, x.source->model(), c);
  write_converted_folder(*x.source, from, c, x.attention, out);
  return x;
}

}  // namespace

TEST_CASE("converted folder: exact_dtype picks the narrowest of BF16, F32 and F64 that holds every value") {
  CHECK(exact_dtype(std::vector<double>{1.0, -0.5, 3.0}) == "BF16");
  CHECK(exact_dtype(std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -10)}) == "F32");  // 10 bits: past BF16's 7
  CHECK(exact_dtype(std::vector<double>{1.0, 0.1}) == "F64");
  CHECK(exact_dtype(std::vector<double>{}) == "BF16");
}

TEST_CASE("converted folder: mla and gqa read back bit for bit, the source's tensors byte for byte") {
  const fs::path from = wavy_gpt2("converted-from"), root = fresh_dir("converted-out");
  for (const KvConversion& c : {KvConversion{.to = KvTarget::Mla, .latent_dim = 3, .layers = {0, 1}},
                                KvConversion{.to = KvTarget::Gqa, .kv_heads = 1, .layers = {1}}}) {
    CAPTURE(static_cast<int>(c.to));
    const fs::path out = root / (c.to == KvTarget::Mla ? "mla" : "gqa");
    const Converted x = convert_and_write(from, c, out);
    const auto back = CheckpointModel::open(out, limits::kDefaultMemoryBudget);
    CHECK(back->converted());
    CHECK(back->source_name() == x.source->name());
    for (int l = 0; l < 2; ++l) {
      const ModelLayer layer = back->layer(l);
      const AttentionConfig& a = x.after.layers[static_cast<std::size_t>(l)].attention;
      CHECK(layer.attention.variant == a.variant);
      CHECK(layer.attention.kv_heads == a.kv_heads);
      CHECK(layer.attention.latent_dim == a.latent_dim);
      for (const WeightId id : kKeyValueWeights) {
        CAPTURE(weight_name(id));
        const auto& made = x.attention.weights[static_cast<std::size_t>(l)];
        const SharedMatrix expected = made ? weight_slot(*made, id) : weight_slot(x.source->layer(l).weights, id);
        CHECK(weight_slot(layer.weights, id) == expected);  // exactly: ==, no tolerance
      }
    }
    const ConvertedWeights in_memory(*x.source, x.after, x.attention);
    const Matrix logits = run_model(x.after, kPieces, kIds, in_memory, {}).logits;
    CHECK(run_model(back->model(), kPieces, kIds, *back, {}).logits == logits);
    // The source's tensors are copied as they were: F32, the same bytes.
    const FoundTensor wte = back->weights().find("wte.weight");
    REQUIRE(wte);
    CHECK(wte.tensor->dtype == "F32");
    CHECK(back->embedding_rows(kIds) == x.source->embedding_rows(kIds));
  }
  // The factors an SVD made hold 64 bits; the stored file says so.
  const auto mla = CheckpointModel::open(root / "mla", limits::kDefaultMemoryBudget);
  CHECK(mla->weights().find("attention_lab.layers.0.W_DKV").tensor->dtype == "F64");
  CHECK(mla->weights().find("attention_lab.layers.1.b_K").tensor->shape == std::vector<std::uint64_t>{8});
}

TEST_CASE("converted folder: a converted folder converts again, keeping its other layers' conversions") {
  const fs::path from = wavy_gpt2("converted-twice"), root = fresh_dir("converted-twice-out");
  convert_and_write(from, {.to = KvTarget::Gqa, .kv_heads = 1, .layers = {0}}, root / "first");
  const Converted x =
      convert_and_write(root / "first", {.to = KvTarget::Mla, .latent_dim = 2, .layers = {1}}, root / "second");
  const auto back = CheckpointModel::open(root / "second", limits::kDefaultMemoryBudget);
  CHECK(back->model().layers[0].attention.variant == Variant::Mqa);
  CHECK(back->model().layers[1].attention.variant == Variant::Mla);
  CHECK(back->source_name() == "attention-lab-test-converted-twice-" + std::to_string(::getpid()));
  const ConvertedWeights in_memory(*x.source, x.after, x.attention);
  CHECK(run_model(back->model(), kPieces, kIds, *back, {}).logits ==
        run_model(x.after, kPieces, kIds, in_memory, {}).logits);
  CHECK_THROWS_WITH(back->cache_shape("x", "y"),
                    "some layers converted and some not, or converted differently: the cache views draw one kind of "
                    "layer");
}

TEST_CASE("converted in memory: the model `convert --out` would write, its weights and logits bit for bit") {
  const fs::path from = wavy_gpt2("converted-memory"), root = fresh_dir("converted-memory-out");
  const auto source = CheckpointModel::open(from, limits::kDefaultMemoryBudget);
  const std::string name = source->name();
  for (const KvConversion& c : {KvConversion{.to = KvTarget::Mla, .latent_dim = 3, .layers = {0, 1}},
                                KvConversion{.to = KvTarget::Gqa, .kv_heads = 1, .layers = {1}}}) {
    const bool mla = c.to == KvTarget::Mla;
    CAPTURE(mla);
    const fs::path out = root / (mla ? "mla" : "gqa");
    convert_and_write(from, c, out);
    const auto folder = CheckpointModel::open(out, limits::kDefaultMemoryBudget);
    const auto memory = CheckpointModel::converted(*source, c, limits::kDefaultMemoryBudget);
    CHECK(memory->name() == name + (mla ? " as mla 3" : " as mqa on 1 layer"));
    // Held: mla's W_DKV (8, 3), W_UK and W_UV (3, 8), b_K and b_V (8) a layer, two layers; mqa's W_K and W_V (8, 4),
    // b_K and b_V (4), one layer; 8 bytes a number.
    CHECK(memory->held_bytes() == (mla ? 2 * 8 * (24 + 24 + 24 + 8 + 8) : 8 * (32 + 32 + 4 + 4)));
    CHECK(folder->held_bytes() == 0);
    CHECK(memory->source_name() == name);
    CHECK(memory->converted());
    CHECK(memory->conversions() == folder->conversions());
    for (int l = 0; l < 2; ++l) {
      const ModelLayer a = memory->layer(l), b = folder->layer(l);
      CHECK(a.attention.variant == b.attention.variant);
      CHECK(a.attention.kv_heads == b.attention.kv_heads);
      CHECK(a.attention.latent_dim == b.attention.latent_dim);
      for (const WeightId id : kKeyValueWeights) {
        CAPTURE(weight_name(id));
        CHECK(weight_slot(a.weights, id) == weight_slot(b.weights, id));
      }
    }
    CHECK(run_model(memory->model(), kPieces, kIds, *memory, {}).logits ==
          run_model(folder->model(), kPieces, kIds, *folder, {}).logits);
  }
  // The source is left as it was.
  CHECK(source->model().layers[0].attention.variant == Variant::Mha);
  CHECK_FALSE(source->converted());
  CHECK(source->layer(0).weights.W_K);
  // Refused as convert refuses it; past the budget, with what it was doing.
  CHECK(folder_refusal([&] {
          CheckpointModel::converted(*source, {.to = KvTarget::Gqa, .kv_heads = 3, .layers = {0}},
                                     limits::kDefaultMemoryBudget);
        }) == "kv_heads: must divide the 2 key/value heads of layer 0 (1, 2) but found 3");
  CHECK(folder_refusal([&] {
          CheckpointModel::converted(*source, {.to = KvTarget::Mla, .latent_dim = 3, .layers = {0, 1}}, 4096);
        }).starts_with("converting " + name + " to mla 3 needs "));
}

TEST_CASE("converted folder: an occupied --out and a bad model.json are refused, naming what and where") {
  const fs::path from = wavy_gpt2("converted-bad"), root = fresh_dir("converted-bad-out");
  const KvConversion c{.to = KvTarget::Gqa, .kv_heads = 1, .layers = {0, 1}};
  fs::create_directories(root / "full");
  std::ofstream(root / "full" / "notes.txt") << "mine";
  std::ofstream(root / "file") << "mine";
  CHECK(folder_refusal([&] { convert_and_write(from, c, root / "full"); }) ==
        "--out: " + (root / "full").string() +
            " is a folder with files in it: the lab writes a new folder, never over files that are there");
  CHECK(folder_refusal([&] { convert_and_write(from, c, root / "file"); }) ==
        "--out: " + (root / "file").string() + " is there and is not a folder");
  CHECK(folder_refusal([&] { convert_and_write(from, c, root / "no" / "such"); }) ==
        "--out: " + (root / "no").string() + ": no such folder");
  std::ifstream notes(root / "full" / "notes.txt");
  CHECK(std::string(std::istreambuf_iterator<char>(notes), {}) == "mine");
  // Nothing half written is left beside the targets.
  for (const auto& e : fs::directory_iterator(root))
    CHECK(e.path().filename().string().find("partial") == std::string::npos);

  const Converted x = convert_and_write(from, c, root / "good");
  const fs::path json = root / "good" / "model.json";
  std::ifstream in(json);
  const std::string good(std::istreambuf_iterator<char>(in), {});
  const auto with = [&](const std::string& from_text, const std::string& to_text) {
    std::string text = good;
    REQUIRE(text.find(from_text) != std::string::npos);
    text.replace(text.find(from_text), from_text.size(), to_text);
    std::ofstream(json, std::ios::trunc) << text;
    return folder_refusal([&] { CheckpointModel::open(root / "good", limits::kDefaultMemoryBudget); });
  };
  CHECK(with("\"kv_heads\": 1", "\"kv_heads\": 3") ==
        "model.json: converted_layers[0].kv_heads: must divide the 2 key/value heads of layer 0 (1, 2) but found 3");
  CHECK(with("\"layer\": 1", "\"layer\": 7") == "model.json: converted_layers[1].layer: must be <= 1 (found 7)");
  CHECK(with("\"layer\": 1", "\"layer\": 0") ==
        "model.json: converted_layers[1].layer: layers are listed once each, in ascending order (found 0 after 0)");
  CHECK(with("attention-lab converted model", "other") ==
        "model.json: format: expected \"attention-lab converted model\" but found string \"other\"");
  CHECK(with("\"n_head\": 2", "\"n_head\": 0").starts_with("model.json: source.config.n_head: "));
  // A converted weight model.json no longer lists is refused, not left unread.
  {
    nlohmann::json j = nlohmann::json::parse(good);
    j["converted_layers"].erase(1);
    std::ofstream(json, std::ios::trunc) << j.dump();
    CHECK(folder_refusal([&] { CheckpointModel::open(root / "good", limits::kDefaultMemoryBudget); }) ==
          "model.safetensors, tensor attention_lab.layers.1.W_K: a converted layer's weight that model.json's "
          "converted_layers does not account for");
  }
  std::ofstream(json, std::ios::trunc) << good;
  std::ofstream(root / "good" / "config.json") << "{}";
  CHECK(folder_refusal([&] { CheckpointModel::open(root / "good", limits::kDefaultMemoryBudget); }) ==
        "holds both config.json and model.json: a Hugging Face folder or a converted model's (the lab would not know "
        "which to read)");
  fs::remove(root / "good" / "config.json");
  fs::create_directory_symlink(root / "full", root / "link");
  CHECK(folder_refusal([&] { check_converted_folder_target(root / "link"); }) ==
        "--out: " + (root / "link").string() + " is a symbolic link: name a new folder, not a link to one");
  CHECK(folder_refusal([&] { check_converted_folder_target(""); }) == "--out: an empty name (the new folder's name)");
  fs::remove(root / "good" / "model.safetensors");
  const auto weights = x.source->weights().files();
  CHECK(folder_refusal([&] {
          CheckpointModel::open(root / "good", limits::kDefaultMemoryBudget);
        }).find("model.safetensors") != std::string::npos);
}
