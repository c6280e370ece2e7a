#pragma once
// What the writers of scenario and model files share: numbers that read back to the same double, one matrix row per
// line, objects with their keys in the documented order, the attention block, and the atomic save (atomic_file.h).
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/io/atomic_file.h"
#include "core/matrix.h"
#include "core/weights.h"

namespace attn {

// Shortest text that reads back to the same double, 1 rather than 1.0.
std::string number_text(double x);
// [[...], [...]] with one row per line, indented under `indent`.
std::string matrix_text(const Matrix& m, const std::string& indent);
// A one-row matrix as a flat list: [1, 2, 3] (LayerNorm gains, biases).
std::string row_text(const Matrix& row);
std::string string_list(const std::vector<std::string>& items);
std::string quoted(const std::string& s);

// Fields of one object, each "key": value, separated by commas and newlines.
class ObjectText {
 public:
  explicit ObjectText(std::string indent) : indent_(std::move(indent)) {}
  void add(const std::string& key, const std::string& value);
  bool empty() const { return out_.empty(); }
  std::string str() const { return "{\n" + out_ + "\n" + indent_ + "}"; }

 private:
  std::string indent_, out_;
};

// rope_pairing when not interleaved, and rope_scaling when given: a scenario's attention block and a model's root.
void add_rope_settings(ObjectText& o, RopePairing pairing, const std::optional<RopeScaling>& scaling);
// A weight as files write it: a bias as a flat row, a matrix a row per line under `indent`.
std::string weight_text(WeightId id, const Matrix& m, const std::string& indent);

// The attention block as a scenario writes it (with_positions) or as a model layer does (its positions are the
// model's, and W_O is always there).
std::string attention_text(const AttentionConfig& a, const std::string& indent, bool model_layer);

}  // namespace attn
