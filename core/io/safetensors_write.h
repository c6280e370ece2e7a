#pragma once
// Writes a safetensors file (the layout core/io/safetensors.h reads): the header lists every tensor in the order
// given, its bytes follow in that order, and the header is padded with spaces to a multiple of 8 bytes so that every
// tensor starts aligned (as safetensors 0.3.1 and later write). The data is streamed: no tensor is held twice.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/io/safetensors.h"
#include "core/matrix.h"

namespace attn {

struct TensorToWrite {
  std::string name;
  std::string dtype;                 // "F64", "F32", "BF16", ... as the header writes it
  std::vector<std::uint64_t> shape;  // [] for a scalar
  std::uint64_t bytes = 0;           // what `write` puts out, exactly
  std::function<void(std::ostream&)> write;
};

// The narrowest of BF16, F32 and F64 that holds every value exactly: a copy of stored 16- or 32-bit weights goes back
// as it came, a value a computation made (a mean, an SVD's factor) as F64.
std::string exact_dtype(std::span<const double> values);

// The tensor of `m`'s values, row-major, in exact_dtype: shape [cols] for a `vector` (a bias, one row), else
// [rows, cols]. The matrix is shared, not copied.
TensorToWrite matrix_tensor(std::string name, const SharedMatrix& m, bool vector);
// A tensor of an open file as it is stored, byte for byte (its dtype need not be one the lab reads).
TensorToWrite stored_tensor(std::string name, const SafetensorsFile& file, const StoredTensor& t);

// Writes the file atomically (core/io/atomic_file.h); `metadata` goes to the header's "__metadata__". Throws
// InputError naming the file when a write fails.
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace attn
