#include "core/io/safetensors_write.h"

#include <bit>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/io/atomic_file.h"

namespace attn {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors is little-endian, as the machine must be");

// A float's top 16 bits: BF16 holds the value exactly when the low 16 are zero.
bool is_exact_bfloat16(double v) {
  const auto f = static_cast<float>(v);
  return static_cast<double>(f) == v && (std::bit_cast<std::uint32_t>(f) & 0xFFFFu) == 0;
}

bool is_exact_float(double v) { return static_cast<double>(static_cast<float>(v)) == v; }

// Elements a block at a time, each as `dtype`'s bytes.
void write_elements(std::ostream& out, std::span<const double> values, const std::string& dtype) {
  constexpr std::size_t kBlock = 8192;
  std::vector<char> block;
  block.reserve(kBlock * 8);
  for (std::size_t at = 0; at < values.size(); at += kBlock) {
    block.clear();
    for (std::size_t i = at; i < std::min(values.size(), at + kBlock); ++i) {
      char bytes[8];
      std::size_t n = 8;
      if (dtype == "F64") std::memcpy(bytes, &values[i], 8);
      else {
        const std::uint32_t f = std::bit_cast<std::uint32_t>(static_cast<float>(values[i]));
        if (dtype == "F32") std::memcpy(bytes, &f, n = 4);
        else {
          const auto top = static_cast<std::uint16_t>(f >> 16);
          std::memcpy(bytes, &top, n = 2);
        }
      }
      block.insert(block.end(), bytes, bytes + n);
    }
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
}

}  // namespace

std::string exact_dtype(std::span<const double> values) {
  bool bf16 = true;
  for (const double v : values) {
    if (!is_exact_float(v)) return "F64";
    bf16 = bf16 && is_exact_bfloat16(v);
  }
  return bf16 ? "BF16" : "F32";
}

TensorToWrite matrix_tensor(std::string name, const SharedMatrix& m, bool vector) {
  const std::span<const double> values(m->data(), static_cast<std::size_t>(m->size()));
  TensorToWrite t{std::move(name), exact_dtype(values), {}, 0, {}};
  if (vector) t.shape = {static_cast<std::uint64_t>(m->size())};
  else t.shape = {static_cast<std::uint64_t>(m->rows()), static_cast<std::uint64_t>(m->cols())};
  t.bytes = values.size() * static_cast<std::uint64_t>(dtype_bits(t.dtype) / 8);
  t.write = [m, dtype = t.dtype](std::ostream& out) {
    write_elements(out, {m->data(), static_cast<std::size_t>(m->size())}, dtype);
  };
  return t;
}

TensorToWrite stored_tensor(std::string name, const SafetensorsFile& file, const StoredTensor& t) {
  return {std::move(name), t.dtype, t.shape, t.end - t.begin,
          [&file, &t](std::ostream& out) { file.copy_bytes(t, out); }};
}

void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  write_file_atomically(path, [&](std::ostream& out) {
    const std::uint64_t length = text.size();
    out.write(reinterpret_cast<const char*>(&length), 8);
    out << text;
    for (const TensorToWrite& t : tensors) t.write(out);
  });
}

}  // namespace attn
