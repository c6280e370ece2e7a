#pragma once
// Safetensors files, as Hugging Face checkpoints store their weights: a little-endian u64 N, N bytes of JSON header
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {string: string}}, then the tensors'
// bytes, row-major and little-endian, their offsets counted from the end of the header.
//
// Opening checks the whole header against the file before anything else (docs/FORMATS.md lists each refusal); a
// tensor's bytes are read, and converted exactly to float64, only when asked for. The header is read through a
// read-only mapping; a tensor's bytes are copied out of the file (pread) a block at a time and converted element by
// element, never read through a cast pointer (files written before safetensors 0.3.1 are not aligned).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/validate.h"

namespace attn {

// A header longer than this is refused before it is read (safetensors' own MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

struct StoredTensor {
  std::string name;
  std::string dtype;                 // as the header writes it: "F32", "BF16", "I8", ...
  std::vector<std::uint64_t> shape;  // [] for a scalar, one element
  std::uint64_t begin = 0, end = 0;  // its bytes in the data, counted from the end of the header
  std::uint64_t elements() const;    // the product of the shape (checked against the bytes when the file opened)
};

// The bits one element of `dtype` takes (F32: 32, F4: 4), 0 for a name safetensors does not define.
int dtype_bits(std::string_view dtype);
// Whether the lab converts `dtype` to float64: F64, F32, F16 and BF16 (exactly: every value of each is a double).
bool is_readable_dtype(std::string_view dtype);

// One element of F16 or BF16, from its 16 bits, exactly: 0x3C00 -> 1, 0x0001 -> 2^-24, 0x7C00 -> inf (F16);
// 0x3F80 -> 1 (BF16).
double half_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);

class SafetensorsFile {
 public:
  // Maps and checks the file; throws InputError whose field names the file (its name) and, for a problem of one
  // tensor, the tensor. The header's parse is held to `budget` bytes.
  static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path, std::int64_t budget);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& label() const { return label_; }                    // the file's name, as messages say it
  const std::vector<StoredTensor>& tensors() const { return tensors_; }  // sorted by name
  const StoredTensor* find(std::string_view name) const;                 // nullptr when the file has no such tensor

  // The tensor's elements as float64, row-major, into `out` (exactly elements() of them: the caller has held the
  // 8 bytes each to the memory budget). Throws InputError naming the file
  // and the tensor when its dtype is not readable (is_readable_dtype) or an element is not finite (with its index
  // in the shape: "element [3, 7] is inf").
  void read(const StoredTensor& t, std::span<double> out) const;
  // Rows [first, first + count) of the tensor (its first dimension), as read does: count times the row's elements.
  void read_rows(const StoredTensor& t, std::uint64_t first, std::uint64_t count, std::span<double> out) const;
  // The tensor's bytes as stored, a block at a time, onto `out` (a copy of the tensor in another file).
  void copy_bytes(const StoredTensor& t, std::ostream& out) const;

 private:
  SafetensorsFile() = default;
  void read_elements(const StoredTensor& t, std::uint64_t first, std::span<double> out) const;
  void read_bytes(std::uint64_t at, unsigned char* to, std::size_t length, const StoredTensor& t) const;
  std::string label_;
  std::vector<StoredTensor> tensors_;
  const unsigned char* map_ = nullptr;  // the whole file, of which only the header is read through the mapping
  int fd_ = -1;                         // the tensors' bytes are read with pread
  std::uint64_t size_ = 0;
  std::uint64_t data_ = 0;  // where the tensors' bytes start: 8 + N
};

// "[50,257, 768]": a shape as messages write it.
std::string shape_text(const std::vector<std::uint64_t>& shape);
// "model.safetensors, tensor h.0.attn.c_attn.weight": where a problem is, as messages name it.
std::string tensor_place(const std::string& file, std::string_view tensor);
// e, a problem of one part of `file` (`part`, "header", or none), said in it: "config.json: n_head: must be ...".
InputError in_file(const std::string& file, const InputError& e, std::string_view part = "");

}  // namespace attn
