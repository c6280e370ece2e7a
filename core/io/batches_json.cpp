#include "core/io/batches_json.h"

#include <string>

#include "core/io/json_fields.h"
#include "core/io/model_json.h"
#include "core/memory_budget.h"
#include "core/text_format.h"
#include "core/validate.h"

namespace attn {
namespace {

using nlohmann::json;

// The first pass: the file's shape, {"batches": [[[id, ...], ...], ...]}, every id checked against the model as it
// is read, and the length of every list counted. It stops at the first problem, so nothing deeper than a token id
// is ever followed.
class BatchesCheck final : public json::json_sax_t {
 public:
  BatchesCheck(std::string_view text, const Model& m)
      : text_(text), model_(m), vocab_(static_cast<std::int64_t>(m.vocab.size())) {}

  bool null() override { return scalar("null"); }
  bool boolean(bool b) override { return scalar(b ? "boolean true" : "boolean false"); }
  bool number_integer(json::number_integer_t x) override { return id(json(x)); }
  bool number_unsigned(json::number_unsigned_t x) override { return id(json(x)); }
  bool number_float(json::number_float_t, const json::string_t& s) override {
    return scalar("number " + quoted_number(s));  // as written: 1e3, 18446744073709551616 (past 64 bits)
  }
  bool string(json::string_t& s) override { return scalar("string \"" + escaped_text(s) + "\""); }
  bool binary(json::binary_t&) override { return scalar("binary"); }
  bool start_object(std::size_t) override {
    if (depth_ == 0) return ++depth_, true;
    return scalar("object");
  }
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool end_object() override { return --depth_, true; }
  bool key(json::string_t& k) override {
    if (k != "batches") return fail(k, "unknown key (expected one of: batches)");
    if (seen_batches_) return fail("batches", "key appears twice in one object");
    seen_batches_ = true;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last, const nlohmann::detail::exception& e) override {
    if (error_.empty()) error_ = json_syntax_error(text_, position, last, e);
    return false;
  }

  // After a pass that succeeded: the problem the shape left, if any.
  void finish() const {
    if (!seen_batches_) throw InputError("batches", "missing (required)");
  }
  const std::string& error() const { return error_; }
  const std::string& error_field() const { return field_; }
  // Sequences per batch, and ids per sequence, in the order of the file.
  std::vector<std::uint32_t> batch_sizes, sequence_lengths;
  std::int64_t ids = 0;

 private:
  bool fail(std::string field, std::string what) {
    field_ = std::move(field);
    error_ = std::move(what);
    return false;
  }
  // The path of the value read now at depth_ (of the list just closed, after end_array's step out of it).
  std::string here() const {
    std::string p = "batches";
    if (depth_ >= 2) p += "[" + std::to_string(batch_sizes.size() - (depth_ > 2 || closing_ ? 1 : 0)) + "]";
    if (depth_ >= 3) p += "[" + std::to_string(batch_sizes.back()) + "]";
    if (depth_ >= 4) p += "[" + std::to_string(length_) + "]";
    return p;
  }
  std::string expected_here() const {
    if (depth_ <= 1) return "expected a non-empty list of batches";
    if (depth_ == 2) return "expected a non-empty list of sequences";
    if (depth_ == 3) return "expected a list of at least two token ids";
    return "expected a token id";
  }
  bool scalar(const std::string& found) {
    if (depth_ == 0) return fail("batches file", "expected an object but found " + found);
    if (depth_ == 4) return fail(here(), "expected a token id but found " + found);
    return fail(here(), expected_here());
  }
  bool id(const json& value) {
    if (depth_ != 4) return scalar("number " + value.dump());
    integer_within(value, 0, vocab_ - 1, here());
    ++length_;
    ++ids;
    return true;
  }

  std::string_view text_;
  const Model& model_;
  std::int64_t vocab_;
  int depth_ = 0;  // 1 in the root object, 2 in the list of batches, 3 in a batch, 4 in a sequence
  std::uint32_t length_ = 0;
  bool seen_batches_ = false, closing_ = false;
  std::string error_, field_;
};

bool BatchesCheck::start_array(std::size_t) {
  if (depth_ == 0) return fail("batches file", "expected an object but found array");
  if (depth_ == 4) return fail(here(), "expected a token id but found array");
  if (depth_ == 2) batch_sizes.push_back(0);
  if (depth_ == 3) length_ = 0;
  ++depth_;
  return true;
}

bool BatchesCheck::end_array() {
  --depth_;
  if (depth_ == 1 && batch_sizes.empty()) return fail("batches", "expected a non-empty list of batches");
  if (depth_ == 2 && batch_sizes.back() == 0) {
    closing_ = true;
    return fail(here(), "expected a non-empty list of sequences");
  }
  if (depth_ == 3) {
    if (length_ < 2) return fail(here(), "expected a list of at least two token ids");
    check_token_count(model_, length_, here() + " (its length)", 2);
    sequence_lengths.push_back(length_);
    ++batch_sizes.back();
  }
  return true;
}

// The second pass over the text the first has checked: the ids into lists of the lengths it counted.
class BatchesFill final : public json::json_sax_t {
 public:
  explicit BatchesFill(const BatchesCheck& counts) : counts_(counts) { batches.reserve(counts.batch_sizes.size()); }

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t x) override { return add(static_cast<int>(x)); }
  bool number_unsigned(json::number_unsigned_t x) override { return add(static_cast<int>(x)); }
  bool number_float(json::number_float_t, const json::string_t&) override { return true; }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool end_object() override { return true; }
  bool key(json::string_t&) override { return true; }
  bool start_array(std::size_t) override {
    ++depth_;
    if (depth_ == 2) {
      const std::uint32_t sequences = counts_.batch_sizes[batches.size()];  // before the new batch counts
      batches.emplace_back().reserve(sequences);
    }
    if (depth_ == 3) batches.back().emplace_back().ids.reserve(counts_.sequence_lengths[sequence_++]);
    return true;
  }
  bool end_array() override {
    if (depth_ == 3) batches.back().back().targets = next_token_targets(batches.back().back().ids);
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  std::vector<std::vector<Sequence>> batches;

 private:
  bool add(int id) {
    batches.back().back().ids.push_back(id);  // checked by the first pass
    return true;
  }

  const BatchesCheck& counts_;
  int depth_ = 0;
  std::size_t sequence_ = 0;
};

}  // namespace

std::int64_t predicted_batches_bytes(std::int64_t batches, std::int64_t sequences, std::int64_t ids) {
  constexpr std::int64_t kAllocation = 16;  // the allocator's own bytes for each list
  constexpr auto kBatch = static_cast<std::int64_t>(sizeof(std::vector<Sequence>)) + kAllocation;
  constexpr auto kSequence = static_cast<std::int64_t>(sizeof(Sequence)) + 2 * kAllocation;
  return kAllocation + batches * kBatch + sequences * kSequence + ids * 2 * static_cast<std::int64_t>(sizeof(int));
}

std::vector<std::vector<Sequence>> parse_batches(std::string_view text, const Model& m, std::int64_t budget) {
  if (text.empty()) throw InputError("", "the file is empty (expected a JSON object)");
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError("", "the file holds only whitespace (expected a JSON object)");
  BatchesCheck check(text, m);
  if (!json::sax_parse(text.begin(), text.end(), &check)) throw InputError(check.error_field(), check.error());
  check.finish();
  const auto batches = static_cast<std::int64_t>(check.batch_sizes.size());
  const auto sequences = static_cast<std::int64_t>(check.sequence_lengths.size());
  const std::int64_t needs = static_cast<std::int64_t>(text.size()) + 4 * (batches + sequences) +
                             predicted_batches_bytes(batches, sequences, check.ids);
  check_reading_budget(needs, budget,
                      "reading " + std::to_string(batches) + (batches == 1 ? " batch" : " batches") + " (" +
                          plural(sequences, "sequence") + ", " + plural(check.ids, "token id") + ")",
                      "or fewer batches");
  BatchesFill fill(check);
  json::sax_parse(text.begin(), text.end(), &fill);
  return std::move(fill.batches);
}

std::vector<std::vector<Sequence>> load_batches_file(const std::filesystem::path& path, const Model& m,
                                                     std::int64_t budget) {
  return parse_batches(read_text_file(path, kMaxModelFileBytes, "a batches file", budget), m, budget);
}

}  // namespace attn
