#include "core/io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

struct DtypeBits {
  std::string_view name;
  int bits;
};

// Every dtype safetensors defines (safetensors/src/tensor.rs), with the bits of one element.
constexpr DtypeBits kDtypes[] = {{"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
                                 {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
                                 {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
                                 {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64}};

// The file mapped read-only; an empty file maps nothing.
// The file mapped (for its header) and its descriptor kept open (for its data, read with pread).
const unsigned char* map_file(const std::filesystem::path& path, std::uint64_t& size, int& fd_out) {
  // Non-blocking: a FIFO in a file's place is refused below instead of waiting for a writer (no effect on files).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError("", "cannot be opened for reading: " + std::string(std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError("", "not a regular file");
  }
  size = static_cast<std::uint64_t>(st.st_size);
  void* p = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    ::close(fd);
    throw InputError("", "cannot be mapped: " + std::string(std::strerror(error)));
  }
  fd_out = fd;
  return static_cast<const unsigned char*>(p);
}

std::uint64_t little_endian_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// A dimension or an offset: an integer >= 0 (safetensors writes them as JSON integers).
std::uint64_t unsigned_field(const nlohmann::json& v, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  throw InputError("", what + " must be a whole number of at least 0 but found " + describe_found(v));
}

// One entry of the header: {"dtype", "shape", "data_offsets"}; other keys are left alone, as safetensors does.
StoredTensor stored_tensor(const std::string& name, const nlohmann::json& e) {
  if (!e.is_object())
    throw InputError("", "expected an object {dtype, shape, data_offsets} but found " + describe_found(e));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!e.contains(key)) throw InputError("", "has no \"" + std::string(key) + "\"");
  StoredTensor t;
  t.name = name;
  if (!e["dtype"].is_string()) throw InputError("", "dtype must be a string but found " + describe_found(e["dtype"]));
  t.dtype = e["dtype"].get<std::string>();
  if (dtype_bits(t.dtype) == 0) throw InputError("", "unknown dtype \"" + escaped_text(t.dtype) + "\"");
  if (!e["shape"].is_array()) throw InputError("", "shape must be an array but found " + describe_found(e["shape"]));
  for (const nlohmann::json& d : e["shape"]) t.shape.push_back(unsigned_field(d, "a dimension"));
  const nlohmann::json& offsets = e["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    throw InputError("", "data_offsets must be [begin, end] but found " + describe_found(offsets));
  t.begin = unsigned_field(offsets[0], "data_offsets[0]");
  t.end = unsigned_field(offsets[1], "data_offsets[1]");
  if (t.end < t.begin)
    throw InputError("", "data_offsets end " + thousands(t.end) + " is before begin " + thousands(t.begin));
  return t;
}

// elements x bits / 8 without overflow; nullopt when it does not fit 64 bits or is not a whole number of bytes.
std::optional<std::uint64_t> byte_count(const StoredTensor& t) {
  std::uint64_t bits = static_cast<std::uint64_t>(dtype_bits(t.dtype));
  for (const std::uint64_t d : t.shape)
    if (d != 0 && bits > std::numeric_limits<std::uint64_t>::max() / d) return std::nullopt;
    else bits *= d;
  if (bits % 8 != 0) return std::nullopt;
  return bits / 8;
}

// Each tensor's bytes match its dtype and shape, and together they cover the data exactly: from 0, with no gap or
// overlap, to the end of the file.
void check_layout(std::vector<StoredTensor>& tensors, std::uint64_t data_bytes, const std::string& file) {
  for (const StoredTensor& t : tensors) {
    const std::optional<std::uint64_t> bytes = byte_count(t);
    if (!bytes || *bytes != t.end - t.begin)
      throw InputError(tensor_place(file, t.name),
                       "shape " + shape_text(t.shape) + " of " + escaped_text(t.dtype) + " needs " +
                           (bytes ? thousands(*bytes) + " bytes" : std::string("more bytes than a file can hold")) +
                           " but data_offsets [" + thousands(t.begin) + ", " + thousands(t.end) + "] hold " +
                           thousands(t.end - t.begin));
  }
  std::vector<const StoredTensor*> order;
  for (const StoredTensor& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const StoredTensor* a, const StoredTensor* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const StoredTensor* t : order) {
    if (t->begin != at)
      throw InputError(tensor_place(file, t->name),
                       std::string(t->begin > at ? "leaves a gap: " : "overlaps the tensor before it: ") +
                           "its data starts at byte " + thousands(t->begin) + " but the tensors before it end at " +
                           thousands(at));
    at = t->end;
  }
  if (at != data_bytes)
    throw InputError(file, "the tensors' data ends at byte " + thousands(at) + " after the header but the file holds " +
                               thousands(data_bytes) + " bytes there");
}

std::vector<StoredTensor> read_header(std::string_view text, std::uint64_t data_bytes, const std::string& file) {
  nlohmann::json header;
  try {
    header = parse_json_document(text);
  } catch (const InputError& e) {  // a syntax error, a repeated name
    throw in_file(file, e, "header");
  }
  if (!header.is_object())
    throw InputError(file, "the header must be a JSON object but found " + describe_found(header));
  std::vector<StoredTensor> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object() || !std::all_of(entry.begin(), entry.end(), [](const auto& v) { return v.is_string(); }))
        throw InputError(file + ": __metadata__", "must map names to strings but found " + describe_found(entry));
      continue;
    }
    try {
      tensors.push_back(stored_tensor(name, entry));
    } catch (const InputError& e) {
      throw InputError(tensor_place(file, name), e.what());
    }
  }
  check_layout(tensors, data_bytes, file);
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return tensors;
}

// "[3, 7]": the index of element `i` in `shape`, row-major.
std::string element_index(std::uint64_t i, const std::vector<std::uint64_t>& shape) {
  std::vector<std::uint64_t> index(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    index[k] = i % shape[k];
    i /= shape[k];
  }
  return shape_text(index);
}

}  // namespace

std::uint64_t StoredTensor::elements() const {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape) n *= d;
  return n;
}

int dtype_bits(std::string_view dtype) {
  for (const DtypeBits& d : kDtypes)
    if (d.name == dtype) return d.bits;
  return 0;
}

bool is_readable_dtype(std::string_view dtype) {
  return dtype == "F64" || dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

double half_to_double(std::uint16_t bits) {
  const double sign = bits >> 15 ? -1.0 : 1.0;
  const int exponent = bits >> 10 & 31, mantissa = bits & 1023;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double bfloat16_to_double(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

std::string tensor_place(const std::string& file, std::string_view tensor) {
  return file + ", tensor " + escaped_text(tensor);
}

InputError in_file(const std::string& file, const InputError& e, std::string_view part) {
  const std::string what = e.what();
  const std::string problem = e.field().empty() ? what : what.substr(e.field().size() + 2);
  std::string where = file;
  for (const std::string_view p : {part, std::string_view(e.field())})
    if (!p.empty()) where += ": " + std::string(p);
  return InputError(where, problem);
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path, std::int64_t budget) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile);
  f->label_ = shown_path(path.filename());
  try {
    f->map_ = map_file(path, f->size_, f->fd_);
  } catch (const InputError& e) {
    throw InputError(f->label_, e.what());
  }
  if (f->size_ < 8)
    throw InputError(f->label_, "a safetensors file starts with 8 bytes of header length but the file has " +
                                    plural(static_cast<std::int64_t>(f->size_), "byte"));
  const std::uint64_t n = little_endian_u64(f->map_);
  if (n > kMaxSafetensorsHeader)
    throw InputError(f->label_, "the header length is " + thousands(n) + " bytes, past the limit of " +
                                    thousands(kMaxSafetensorsHeader));
  if (n > f->size_ - 8)
    throw InputError(f->label_, "the header length is " + thousands(n) + " bytes but only " + thousands(f->size_ - 8) +
                                    " follow it");
  check_reading_budget(predicted_document_bytes(n), budget, "parsing this checkpoint's header", "or a smaller file");
  f->data_ = 8 + n;
  f->tensors_ = read_header({reinterpret_cast<const char*>(f->map_ + 8), n}, f->size_ - f->data_, f->label_);
  return f;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<unsigned char*>(map_), size_);
  if (fd_ >= 0) ::close(fd_);
}

const StoredTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                                   [](const StoredTensor& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + thousands(shape[i]);
  return s + "]";
}

void SafetensorsFile::read(const StoredTensor& t, std::span<double> out) const {
  if (out.size() != t.elements())
    throw std::logic_error("SafetensorsFile::read: out holds " + std::to_string(out.size()) + " values for " +
                           std::to_string(t.elements()) + " elements");
  read_elements(t, 0, out);
}

void SafetensorsFile::read_rows(const StoredTensor& t, std::uint64_t first, std::uint64_t count,
                                std::span<double> out) const {
  const std::uint64_t rows = t.shape.empty() ? 1 : t.shape[0], row = rows == 0 ? 0 : t.elements() / rows;
  if (first > rows || count > rows - first || out.size() != count * row)
    throw std::logic_error("SafetensorsFile::read_rows: rows [" + std::to_string(first) + ", +" +
                           std::to_string(count) + ") of " + std::to_string(rows) + " into " +
                           std::to_string(out.size()) + " values");
  read_elements(t, first * row, out);
}

namespace {

// Elements of one dtype from p into out, each converted exactly; the index of the first that is not finite, or -1.
template <typename Convert>
std::int64_t convert_elements(const unsigned char* p, int bytes, std::span<double> out, Convert element) {
  std::int64_t bad = -1;
  for (std::size_t i = 0; i < out.size(); ++i, p += bytes) {
    out[i] = element(p);
    if (!std::isfinite(out[i]) && bad < 0) bad = static_cast<std::int64_t>(i);
  }
  return bad;
}

// Elements of `dtype` at p into out, each converted exactly (the dtype chosen once, not per element); the index of
// the first that is not finite, or -1.
std::int64_t convert(const std::string& dtype, const unsigned char* p, std::span<double> out) {
  if (dtype == "F64")
    return convert_elements(p, 8, out, [](const unsigned char* q) {
      std::uint64_t b;
      std::memcpy(&b, q, 8);  // little-endian, as the machine
      return std::bit_cast<double>(b);
    });
  if (dtype == "F32")
    return convert_elements(p, 4, out, [](const unsigned char* q) {
      std::uint32_t b;
      std::memcpy(&b, q, 4);
      return static_cast<double>(std::bit_cast<float>(b));
    });
  if (dtype == "F16")
    return convert_elements(
        p, 2, out, [](const unsigned char* q) { return half_to_double(static_cast<std::uint16_t>(q[0] | q[1] << 8)); });
  return convert_elements(p, 2, out, [](const unsigned char* q) {
    return bfloat16_to_double(static_cast<std::uint16_t>(q[0] | q[1] << 8));
  });
}

}  // namespace

// Bytes of the file read at a time: under the 1 MiB at which the commands map allocations afresh, so the one buffer
// a tensor is read through comes from the heap and is reused block after block.
constexpr std::size_t kReadBlock = std::size_t(256) << 10;

void SafetensorsFile::read_elements(const StoredTensor& t, std::uint64_t first, std::span<double> out) const {
  if (!is_readable_dtype(t.dtype))
    throw InputError(tensor_place(label_, t.name),
                     "dtype " + escaped_text(t.dtype) + " is not one the lab reads (F64, F32, F16 or BF16)");
  const int bytes = dtype_bits(t.dtype) / 8;
  // The data is copied out of the page cache with pread, never through the mapping: a mapped page costs a fault and
  // stays in the process, and a file cut short after it was opened is an error here, not a SIGBUS.
  std::vector<unsigned char> block(std::min<std::size_t>(kReadBlock, out.size() * static_cast<std::size_t>(bytes)));
  const std::size_t per_block = block.size() / static_cast<std::size_t>(bytes);
  std::uint64_t at = data_ + t.begin + first * static_cast<std::uint64_t>(bytes);
  for (std::size_t done = 0; done < out.size();) {
    const std::size_t n = std::min(per_block, out.size() - done), length = n * static_cast<std::size_t>(bytes);
    read_bytes(at, block.data(), length, t);
    const std::int64_t bad = convert(t.dtype, block.data(), out.subspan(done, n));
    if (bad >= 0) {
      const std::uint64_t index = first + done + static_cast<std::uint64_t>(bad);
      throw InputError(tensor_place(label_, t.name), "element " + element_index(index, t.shape) + " is " +
                                                         general_number(out[done + static_cast<std::size_t>(bad)]) +
                                                         ", not a finite weight");
    }
    done += n;
    at += length;
  }
}

void SafetensorsFile::copy_bytes(const StoredTensor& t, std::ostream& out) const {
  std::vector<unsigned char> block(std::min<std::uint64_t>(kReadBlock, t.end - t.begin));
  for (std::uint64_t at = t.begin; at < t.end;) {
    const std::size_t length = std::min<std::uint64_t>(block.size(), t.end - at);
    read_bytes(data_ + at, block.data(), length, t);
    out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(length));
    at += length;
  }
}

void SafetensorsFile::read_bytes(std::uint64_t at, unsigned char* to, std::size_t length, const StoredTensor& t) const {
  for (std::size_t got = 0; got < length;) {
    const ssize_t r = ::pread(fd_, to + got, length - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw InputError(tensor_place(label_, t.name),
                       r < 0 ? "cannot be read: " + std::string(std::strerror(errno))
                             : "the file ends before this tensor does (it was cut short after it was opened)");
    got += static_cast<std::size_t>(r);
  }
}

}  // namespace attn
