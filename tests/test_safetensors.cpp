// Safetensors files written byte by byte here (not by the reader's code): every dtype read exactly, and every way a
// header can disagree with its file refused with the file, the tensor and both numbers.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/io/checkpoint_weights.h"
#include "core/io/safetensors.h"
#include "core/memory_budget.h"
#include "core/validate.h"
#include "helpers.h"

using namespace attn;

namespace {

const std::filesystem::path kDir = attn::test::fresh_dir("safetensors");

// A file of `header` (padded with spaces to `pad_to` bytes when given) and `data`, with a header length of
// `length` when given (a lie), else the header's own.
std::filesystem::path write_safetensors(const std::string& name, std::string header, const std::string& data,
                                        std::size_t pad_to = 0, std::optional<std::uint64_t> length = std::nullopt) {
  if (header.size() < pad_to) header.append(pad_to - header.size(), ' ');
  const std::uint64_t n = length.value_or(header.size());
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>(n >> (8 * i) & 0xFF);
  const std::filesystem::path path = kDir / name;
  std::ofstream(path, std::ios::binary) << bytes << header << data;
  return path;
}

std::string le32(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return {static_cast<char>(b & 0xFF), static_cast<char>(b >> 8 & 0xFF), static_cast<char>(b >> 16 & 0xFF),
          static_cast<char>(b >> 24)};
}

std::string le16(std::uint16_t b) { return {static_cast<char>(b & 0xFF), static_cast<char>(b >> 8)}; }

std::string open_error(const std::filesystem::path& path) {
  try {
    SafetensorsFile::open(path, limits::kDefaultMemoryBudget);
  } catch (const InputError& e) {
    return e.what();
  }
  return "opened";
}

std::vector<double> read_all(const SafetensorsFile& f, const std::string& name) {
  const StoredTensor* t = f.find(name);
  REQUIRE(t != nullptr);
  std::vector<double> out(t->elements());
  f.read(*t, out);
  return out;
}

std::string read_error(const std::filesystem::path& path, const std::string& name) {
  const auto f = SafetensorsFile::open(path, limits::kDefaultMemoryBudget);
  try {
    read_all(*f, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "read";
}

}  // namespace

TEST_CASE("F16 and BF16 convert exactly, the reference's vectors") {
  CHECK(half_to_double(0x3C00) == 1.0);
  CHECK(half_to_double(0x0001) == std::ldexp(1.0, -24));
  CHECK(half_to_double(0x7C00) == std::numeric_limits<double>::infinity());
  CHECK(half_to_double(0xC000) == -2.0);
  CHECK(half_to_double(0x7BFF) == 65504.0);
  CHECK(std::isnan(half_to_double(0x7E00)));
  CHECK(bfloat16_to_double(0x3F80) == 1.0);
  CHECK(bfloat16_to_double(0xC0A0) == -5.0);
  CHECK(bfloat16_to_double(0x3E20) == 0.15625);
}

TEST_CASE("every readable dtype, aligned or not, read into float64 row-major") {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
      R"("h":{"dtype":"F16","shape":[3],"data_offsets":[16,22]},"b":{"dtype":"BF16","shape":[],"data_offsets":[22,24]},)"
      R"("d":{"dtype":"F64","shape":[1],"data_offsets":[24,32]}})";
  double d = -0.1;
  std::string d_bytes(8, '\0');
  std::memcpy(d_bytes.data(), &d, 8);
  const std::string data = le32(1.5f) + le32(-2.0f) + le32(0.1f) + le32(3.0f) + le16(0x3C00) + le16(0x0001) +
                           le16(0xC000) + le16(0x3F80) + d_bytes;
  for (const std::size_t pad : {std::size_t{0}, std::size_t{header.size() + 7 - (header.size() + 7) % 8}}) {
    CAPTURE(pad);
    const auto f = SafetensorsFile::open(write_safetensors("ok.safetensors", header, data, pad), 1 << 30);
    CHECK(f->label() == "ok.safetensors");
    REQUIRE(f->tensors().size() == 4);
    CHECK(f->tensors()[0].name == "b");  // sorted by name
    CHECK(f->find("missing") == nullptr);
    CHECK(read_all(*f, "w") == std::vector<double>{1.5, -2.0, static_cast<double>(0.1f), 3.0});
    CHECK(read_all(*f, "h") == std::vector<double>{1.0, std::ldexp(1.0, -24), -2.0});
    CHECK(read_all(*f, "b") == std::vector<double>{1.0});
    CHECK(read_all(*f, "d") == std::vector<double>{-0.1});
  }
}

TEST_CASE("empty tensors, an empty header and other dtypes open, which are refused when read") {
  const auto path = write_safetensors(
      "int.safetensors",
      R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},"i":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}})",
      "\x01\x02");
  const auto f = SafetensorsFile::open(path, 1 << 30);
  CHECK(read_all(*f, "e").empty());
  CHECK(read_error(path, "i") ==
        "int.safetensors, tensor i: dtype I8 is not one the lab reads (F64, F32, F16 or BF16)");
  CHECK(open_error(write_safetensors("empty.safetensors", "{}", "")) == "opened");
}

TEST_CASE("a weight that is not finite is refused with its index") {
  const auto path = write_safetensors("inf.safetensors", R"({"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}})",
                                      le16(0) + le16(0) + le16(0) + le16(0xFC00));
  CHECK(read_error(path, "w") == "inf.safetensors, tensor w: element [1, 1] is -inf, not a finite weight");
  const auto nan = write_safetensors("nan.safetensors", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})",
                                     le32(0) + le32(std::numeric_limits<float>::quiet_NaN()) + le32(0));
  CHECK(read_error(nan, "w") == "nan.safetensors, tensor w: element [1] is nan, not a finite weight");
}

TEST_CASE("the header length: at least 8 bytes, at most 100 MB, within the file") {
  const std::filesystem::path short_file = kDir / "short.safetensors";
  std::ofstream(short_file, std::ios::binary) << "abc";
  CHECK(open_error(short_file) ==
        "short.safetensors: a safetensors file starts with 8 bytes of header length but the file has 3 bytes");
  CHECK(open_error(write_safetensors("huge.safetensors", "{}", "", 0, 100'000'001)) ==
        "huge.safetensors: the header length is 100,000,001 bytes, past the limit of 100,000,000");
  CHECK(open_error(write_safetensors("past.safetensors", "{}", "", 0, 3)) ==
        "past.safetensors: the header length is 3 bytes but only 2 follow it");
  CHECK(open_error(kDir / "none.safetensors").starts_with("none.safetensors: cannot be opened for reading: "));
}

TEST_CASE("the header: a JSON object without repeated names, each entry whole") {
  CHECK(open_error(write_safetensors("text.safetensors", "not json", "")).starts_with("text.safetensors: header: "));
  CHECK(open_error(write_safetensors("array.safetensors", "[1]", "")) ==
        "array.safetensors: the header must be a JSON object but found array");
  CHECK(
      open_error(write_safetensors(
          "twice.safetensors",
          R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
          le32(1) + le32(2))) == "twice.safetensors: header: w: key appears twice in one object");
  CHECK(open_error(write_safetensors("meta.safetensors", R"({"__metadata__":{"format":1}})", "")) ==
        "meta.safetensors: __metadata__: must map names to strings but found object");
  CHECK(open_error(write_safetensors("entry.safetensors", R"({"w":[1]})", "")) ==
        "entry.safetensors, tensor w: expected an object {dtype, shape, data_offsets} but found array");
  CHECK(open_error(write_safetensors("nodtype.safetensors", R"({"w":{"shape":[1],"data_offsets":[0,4]}})", le32(1))) ==
        "nodtype.safetensors, tensor w: has no \"dtype\"");
  CHECK(open_error(write_safetensors("dtype.safetensors", R"({"w":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})",
                                     le32(1))) == "dtype.safetensors, tensor w: unknown dtype \"F31\"");
  CHECK(open_error(write_safetensors("dim.safetensors", R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                                     le32(1))) ==
        "dim.safetensors, tensor w: a dimension must be a whole number of at least 0 but found number -1");
  CHECK(open_error(write_safetensors("offs.safetensors", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})",
                                     le32(1))) ==
        "offs.safetensors, tensor w: data_offsets must be [begin, end] but found array");
  CHECK(open_error(write_safetensors("back.safetensors", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})",
                                     le32(1))) == "back.safetensors, tensor w: data_offsets end 0 is before begin 4");
}

TEST_CASE("the tensors' bytes: as many as dtype and shape say, covering the data with no gap or overlap") {
  CHECK(open_error(write_safetensors("size.safetensors", R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})",
                                     le32(1) + le32(2) + le32(3))) ==
        "size.safetensors, tensor w: shape [2, 2] of F32 needs 16 bytes but data_offsets [0, 12] hold 12");
  CHECK(open_error(write_safetensors("overflow.safetensors",
                                     R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
                                     "")) ==
        "overflow.safetensors, tensor w: shape [4,294,967,296, 4,294,967,296] of F64 needs more bytes than a file can "
        "hold but data_offsets [0, 0] hold 0");
  CHECK(open_error(write_safetensors("gap.safetensors",
                                     R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                     R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                     le32(1) + le32(2) + le32(3))) ==
        "gap.safetensors, tensor b: leaves a gap: its data starts at byte 8 but the tensors before it end at 4");
  CHECK(open_error(write_safetensors("first.safetensors", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                     le32(1) + le32(2))) ==
        "first.safetensors, tensor a: leaves a gap: its data starts at byte 4 but the tensors before it end at 0");
  CHECK(
      open_error(write_safetensors("overlap.safetensors",
                                   R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   le32(1) + le32(2))) ==
      "overlap.safetensors, tensor b: overlaps the tensor before it: its data starts at byte 4 but the tensors before "
      "it end at 8");
  CHECK(open_error(write_safetensors("tail.safetensors", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                     le32(1) + "xy")) ==
        "tail.safetensors: the tensors' data ends at byte 4 after the header but the file holds 6 bytes there");
  CHECK(open_error(write_safetensors("cut.safetensors", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                     le32(1))) ==
        "cut.safetensors: the tensors' data ends at byte 8 after the header but the file holds 4 bytes there");
}

namespace {

const std::string kOneWeight = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";

std::filesystem::path model_folder(const std::string& name) {
  const std::filesystem::path folder = kDir / name;
  std::filesystem::create_directories(folder);
  return folder;
}

void write_index_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

std::filesystem::path shard(const std::filesystem::path& folder, const std::string& name, const std::string& tensor,
                            float value) {
  const std::filesystem::path path = folder / name;
  std::filesystem::rename(
      write_safetensors(name, R"({")" + tensor + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", le32(value)),
      path);
  return path;
}

std::string checkpoint_error(const std::filesystem::path& folder) {
  try {
    CheckpointWeights::open(folder, limits::kDefaultMemoryBudget);
  } catch (const InputError& e) {
    return e.what();
  }
  return "opened";
}

}  // namespace

TEST_CASE("a sharded checkpoint: the tensors its index names, from the shards it names") {
  const auto folder = model_folder("sharded");
  shard(folder, "model-00001-of-000002.safetensors", "a", 1.0f);
  shard(folder, "model-00002-of-000002.safetensors", "b", 2.0f);
  write_index_text(folder / "model.safetensors.index.json",
                   R"({"metadata":{"total_size":8},"weight_map":{"b":"model-00002-of-000002.safetensors",)"
                   R"("a":"model-00001-of-000002.safetensors"}})");
  const CheckpointWeights w = CheckpointWeights::open(folder, 1 << 30);
  CHECK(w.names() == std::vector<std::string>{"a", "b"});
  CHECK(w.files().size() == 2);
  CHECK(w.stored_bytes() == 8);
  const FoundTensor b = w.find("b");
  REQUIRE(b);
  CHECK(b.file->label() == "model-00002-of-000002.safetensors");
  std::vector<double> v(1);
  b.file->read(*b.tensor, v);
  CHECK(v[0] == 2.0);
  CHECK(!w.find("c"));
}

TEST_CASE("a single model.safetensors, and a folder with no safetensors") {
  const auto folder = model_folder("single");
  std::filesystem::rename(write_safetensors("m.safetensors", kOneWeight, le32(3.0f)), folder / "model.safetensors");
  CHECK(CheckpointWeights::open(folder, 1 << 30).names() == std::vector<std::string>{"w"});
  const auto empty = model_folder("pickle");
  write_index_text(empty / "pytorch_model.bin", "not read");
  CHECK(checkpoint_error(empty) ==
        std::string("no model.safetensors or model.safetensors.index.json: the lab reads a model's "
                    "weights from safetensors files (pytorch_model.bin is a pickle it does not run)"));
}

TEST_CASE("an index's refusals: its form, shard names leading out of the folder, missing shards and tensors") {
  const auto folder = model_folder("bad_index");
  const auto index = folder / "model.safetensors.index.json";
  write_index_text(index, R"({"weight_map":[]})");
  CHECK(checkpoint_error(folder) ==
        "model.safetensors.index.json: expected an object with a \"weight_map\" object but found weight_map array");
  write_index_text(index, R"({"weight_map":{"w":"../model.safetensors"}})");
  CHECK(checkpoint_error(folder) ==
        "model.safetensors.index.json: weight_map.w: \"../model.safetensors\" is not a file "
        "name in the model's folder (it has \"..\")");
  write_index_text(index, R"({"weight_map":{"w":"sub/model.safetensors"}})");
  CHECK(checkpoint_error(folder) ==
        "model.safetensors.index.json: weight_map.w: \"sub/model.safetensors\" is not a "
        "file name in the model's folder (it has a path separator)");
  write_index_text(index, R"({"weight_map":{"w":"model-00001-of-00002.safetensors"}})");
  CHECK(checkpoint_error(folder) ==
        "model-00001-of-00002.safetensors: no such file in the model's folder "
        "(model.safetensors.index.json names it for tensor w)");
  shard(folder, "model-00001-of-00002.safetensors", "v", 1.0f);
  CHECK(checkpoint_error(folder) ==
        "model-00001-of-00002.safetensors, tensor w: not in the file, though "
        "model.safetensors.index.json says it is there");
  write_index_text(index, R"({"weight_map":{"w":"a.safetensors","w":"b.safetensors"}})");
  CHECK(checkpoint_error(folder) == "model.safetensors.index.json: weight_map.w: key appears twice in one object");
}
